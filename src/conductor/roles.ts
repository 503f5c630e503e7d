/**
 * Roles are data: a name, a prompt file, the paths a role may read (what its context pack may hold)
 * and write (what its turns may change), and what it owes. The defaults mirror the eight roles of
 * the original Consort; a project overrides any of them in its configuration (`roles.<name>`).
 *
 * Glob lists are read in order and the last matching entry decides (`!` excludes), as in
 * .gitignore. Globs may use placeholders, expanded per feature: `{feature}` is the feature's folder
 * (`.consort/features/001-slug`), `{tests}` every glob in `build.tests` (`!{tests}` excludes them
 * all), `{migrations}` the migrations directory.
 */
export const ROLES = [
  'product-owner',
  'spec-author',
  'architect-reviewer',
  'dba',
  'test-strategist',
  'ux-designer',
  'navigator',
  'driver',
] as const;
export type Role = (typeof ROLES)[number];

export const DESIGN_ROLES = [
  'product-owner',
  'spec-author',
  'architect-reviewer',
  'dba',
  'test-strategist',
  'ux-designer',
] as const;
export type DesignRole = (typeof DESIGN_ROLES)[number];

/** The design sequence when `build.design` is not set; the ux-designer joins only for user-facing features. */
export const DEFAULT_DESIGN: readonly DesignRole[] = ['spec-author', 'architect-reviewer', 'dba', 'test-strategist'];

/** What each design role must leave behind: artifact file names inside the feature folder. */
export const OWED: Record<DesignRole, string> = {
  'product-owner': 'feature-request.md',
  'spec-author': 'feature-spec.json',
  'architect-reviewer': 'architecture.json',
  dba: 'db-design.json',
  'test-strategist': 'test-list.json',
  'ux-designer': 'ux-design.json',
};

/**
 * The test harness: whatever decides how the suite runs or what it expects, wherever a runner
 * looks for it — package-manager and runtime configuration, runner configs, setup and transform
 * configuration, module doubles, snapshots and fixtures. `package.json`'s runner keys and the data
 * files a frozen test reads are judged by content (src/lanes/tdd/harness.ts). `.env` files too: vite
 * and vitest load `.env`, `.env.local`, `.env.[mode]` unnamed, jest setups call dotenv, and a value
 * the tests read there (a flag that skips a check) decides the run. Python's start-up hooks
 * (`sitecustomize`, `usercustomize`, `.pth` files) and virtualenvs too: they run in the runner.
 */
/**
 * JavaScript test runners' configuration files, which name files the runner loads into the tests
 * (setup files, reporters, transforms): harness by default, and what they name is harness too
 * (src/lanes/tdd/harness.ts follows them).
 */
export const RUNNER_CONFIGS = [
  '**/jest.config.*',
  '**/vitest.config.*',
  '**/vitest.workspace.*',
  '**/.mocharc*',
  '**/karma.conf.*',
  '**/ava.config.*',
  '**/playwright.config.*',
  '**/cypress.config.*',
  '**/babel.config.*',
  '**/.babelrc*',
] as const;

/** `vite.config.*` also names the app's own entry points: harness.ts follows only its test files. */
export const VITE_CONFIG = '**/vite.config.*';

export const DEFAULT_HARNESS = [
  '**/.npmrc',
  '**/.yarnrc',
  '**/.yarnrc.yml',
  // Yarn's committed installs: the program `yarnPath` runs, zero-install caches, Plug'n'Play's map.
  '**/.yarn/**',
  '**/.pnp.*',
  '**/.pnpmfile.cjs',
  'pnpm-workspace.yaml',
  // Which runtime a version manager's shim runs (nvm, fnm, volta, asdf look upward from where the
  // command runs: `cd web && npm test`), and bun's own configuration (`[test] preload`), in any folder.
  '**/.nvmrc',
  '**/.node-version',
  '**/.tool-versions',
  '**/bunfig.toml',
  ...RUNNER_CONFIGS,
  VITE_CONFIG,
  '**/jest.setup.*',
  '**/jest-setup.*',
  '**/vitest.setup.*',
  '**/tsconfig*.json',
  '**/.swcrc',
  '**/pytest.ini',
  '**/.pytest.ini',
  '**/pytest.toml',
  '**/.pytest.toml',
  '**/conftest.py',
  '**/tox.ini',
  '**/.coveragerc',
  '**/.c8rc*',
  '**/.nycrc*',
  '**/nyc.config.*',
  '**/__mocks__/**',
  '**/__snapshots__/**',
  '**/*.snap',
  '**/__fixtures__/**',
  '**/fixtures/**',
  '**/testdata/**',
  '**/.env',
  '**/.env.*',
  // Python's start-up hooks, which run in the runner's process before any test: `site` imports
  // `sitecustomize` and `usercustomize` (a module or a package) from wherever sys.path finds them,
  // and runs the `import` lines of every `.pth` file in a site-packages folder. Anywhere in the
  // repository: which folders the suite's python has on sys.path is its command's and its
  // configuration's to say. A virtualenv's `pyvenv.cfg` decides which site-packages it uses, and
  // what is installed there is the runner and what it imports (the rest of a committed virtualenv
  // is judged by content: harness.ts). Installed packages' metadata (`*.dist-info`, `*.egg-info`)
  // names the plugins pytest loads.
  '**/sitecustomize.*',
  '**/sitecustomize/**',
  '**/usercustomize.*',
  '**/usercustomize/**',
  '**/*.pth',
  '**/pyvenv.cfg',
  '**/site-packages/**',
  '**/dist-packages/**',
  // Installed packages' metadata, which importlib.metadata finds in any folder on sys.path (the root,
  // under `python -m pytest`): an `entry_points.txt` with a `[pytest11]` section makes pytest load a
  // plugin module at start-up, one that can turn every test into a pass.
  '**/*.dist-info/**',
  '**/*.egg-info/**',
  // Read without a name by cargo (a target `runner` that runs every test binary, `[env]`, rustflags),
  // cargo-nextest (its JUnit path, filters, retries), rustup, go (a `go.work` module stands in for
  // one a test imports), rspec (`--require`).
  '**/.cargo/config',
  '**/.cargo/config.toml',
  '**/.config/nextest.toml',
  '**/rust-toolchain',
  '**/rust-toolchain.toml',
  '**/go.work',
  '**/.rspec',
  // Which interpreter pyenv's `python3` shim runs (like `.nvmrc`, `.tool-versions`).
  '**/.python-version',
  // How a proof's fresh checkout writes the tests and their data: `eol`, `working-tree-encoding` and
  // `ident` need no configuration (a frozen test's expected text checked out with the bug's line ends).
  '**/.gitattributes',
];

/**
 * Where tests live by default: every file a common runner collects without configuration. A file a
 * runner runs as a test that is not a test path is the driver's to write in GREEN, and a test is
 * known by its id, not its file (node:test names every test `test::<name>`): a driver's
 * `src/sum_test.js` could stand in for a frozen test its code kept from running. Jest and vitest
 * (`*.test.*`, `*.spec.*`, `__tests__/`, `test.js`), node:test (`*-test.*`, `*_test.*`, `test-*`,
 * any `test/` folder), pytest (`test_*.py`, `*_test.py`), go (`*_test.go`).
 */
export const DEFAULT_TEST_GLOBS = [
  'test/**',
  'tests/**',
  '**/__tests__/**',
  '**/*.test.*',
  '**/*.spec.*',
  '**/test/**',
  '**/tests/**',
  '**/{test,spec}.{js,cjs,mjs,jsx,ts,cts,mts,tsx}',
  '**/*{-,_}test.{js,cjs,mjs,jsx,ts,cts,mts,tsx,py,go}',
  // bun test collects `*_spec.*` too.
  '**/*_spec.{js,cjs,mjs,jsx,ts,cts,mts,tsx}',
  '**/test{-,_}*.{js,cjs,mjs,jsx,ts,cts,mts,tsx,py}',
];

const F = '{feature}';
const DESIGN_READS = [
  `${F}/feature-request.md`,
  `${F}/feature-spec.json`,
  `${F}/architecture.json`,
  `${F}/db-design.json`,
  `${F}/ux-design.json`,
];

export interface RoleDefaults {
  reads: string[];
  writes: string[];
}

export const ROLE_DEFAULTS: Record<Role, RoleDefaults> = {
  'product-owner': { reads: [`${F}/feature-request.md`], writes: [`${F}/feature-request.md`] },
  'spec-author': { reads: [`${F}/feature-request.md`], writes: [`${F}/feature-spec.json`] },
  'architect-reviewer': {
    reads: ['**', '!{tests}', '!.consort/**', `${F}/feature-request.md`, `${F}/feature-spec.json`],
    writes: [`${F}/architecture.json`],
  },
  dba: {
    reads: [`${F}/feature-request.md`, `${F}/feature-spec.json`, `${F}/architecture.json`, '{migrations}/**'],
    writes: [`${F}/db-design.json`],
  },
  'test-strategist': { reads: [...DESIGN_READS, '{tests}'], writes: [`${F}/test-list.json`] },
  'ux-designer': { reads: [`${F}/feature-request.md`, `${F}/feature-spec.json`], writes: [`${F}/ux-design.json`] },
  navigator: {
    reads: ['**', '!.consort/**', ...DESIGN_READS, `${F}/test-list.json`],
    writes: ['{tests}', `${F}/reviews/**`],
  },
  driver: {
    reads: ['**', '!.consort/**', ...DESIGN_READS, `${F}/test-list.json`],
    writes: ['**', '!{tests}', '!.consort/**', '!.github/**'],
  },
};

export interface Placeholders {
  /** The feature folder relative to the workspace, e.g. `.consort/features/001-phones`. */
  feature: string;
  tests: readonly string[];
  migrations: string;
}

/** Expand `{feature}`, `{tests}` and `{migrations}` in a glob list. */
export function expandGlobs(globs: readonly string[], p: Placeholders): string[] {
  return globs.flatMap((glob) => {
    const negated = glob.startsWith('!');
    const body = negated ? glob.slice(1) : glob;
    const bodies =
      body === '{tests}'
        ? [...p.tests]
        : [body.replaceAll('{feature}', p.feature).replaceAll('{migrations}', p.migrations.replace(/\/+$/, ''))];
    return bodies.map((b) => (negated ? `!${b}` : b));
  });
}

export function isRole(name: string): name is Role {
  return (ROLES as readonly string[]).includes(name);
}
