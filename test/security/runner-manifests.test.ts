/**
 * Manifests that hold the driver's dependencies and the runner's settings side by side —
 * `pyproject.toml`, `setup.cfg`, `Cargo.toml`, `go.mod`, `deno.json` — were the driver's whole until
 * 2026-12-04: a GREEN turn that added `addopts = "-p cheat"` to `[tool.pytest.ini_options]` (or
 * `[tool:pytest]` in setup.cfg) had pytest load a plugin it wrote in `src/` that turns every test into
 * a pass, and the JUnit report said the failing test passed (played with the real pytest). Their
 * runner sections are test-owned now; the rest of each file (dependencies, metadata) stays the
 * driver's.
 */
import { rm } from 'node:fs/promises';
import { loadConfig } from '../../src/config/load.js';
import type { Policy } from '../../src/conductor/state.js';
import { type GitWorkspace } from '../../src/git/workspace.js';
import { goModReplaces, setupCfgSections } from '../../src/lanes/tdd/manifest-sections.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';
import { execFileAsync, type ExecError } from '../helpers/exec-file.js';
import { committedWorkspace, HARNESS_REFUSAL, scopedTurn } from '../helpers/scoped-turn.js';

const FROZEN = 'tests/test_calc.py';
const HARNESS = HARNESS_REFUSAL;

const PYPROJECT = '[project]\nname = "calc"\nversion = "0.1.0"\ndependencies = []\n';
const SETUP_CFG = '[metadata]\nname = calc\n\n[options]\ninstall_requires =\n    attrs\n';
/** A pytest plugin the driver writes as production code: every collected test runs nothing, and passes. */
const CHEAT =
  'def pytest_collection_modifyitems(items):\n    for item in items:\n        item.obj = lambda *a, **k: None\n';

let dir: string;
let ws: GitWorkspace;
let policy: Policy;

beforeEach(async () => {
  const files: Record<string, string> = {
    '.gitignore': '__pycache__/\njunit.xml\n',
    'pyproject.toml': PYPROJECT,
    'setup.cfg': SETUP_CFG,
    'src/calc.py': 'def add(a, b):\n    return a - b\n',
    [FROZEN]:
      'import os, sys\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))\nfrom calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n',
    'Cargo.toml':
      '[package]\nname = "calc"\nversion = "0.1.0"\n\n[dependencies]\nserde = "1"\n\n[dev-dependencies]\npretty_assertions = "1"\n',
    'go.mod': 'module example.com/calc\n\ngo 1.22\n\nrequire github.com/stretchr/testify v1.9.0\n',
    'deno.json': '{\n  "imports": { "@std/assert": "jsr:@std/assert@1" },\n  "fmt": { "lineWidth": 100 }\n}\n',
    'migrations/.keep': '',
    '.github/consort.yml':
      'suite:\n  command: python3 -m pytest -q -p no:cacheprovider --junitxml=junit.xml tests\n  reports: junit.xml\nmigrations:\n  dir: migrations\n',
  };
  ({ dir, ws } = await committedWorkspace('consort-runner-manifests-', files));
  policy = buildPolicy((await loadConfig(dir)).config, '001-calc');
});

afterEach(() => rm(dir, { recursive: true, force: true }));

/** The suite as configured, with the real pytest: its exit code. */
async function pytest(): Promise<number> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? dir };
  try {
    await execFileAsync('python3', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', '--junitxml=junit.xml', 'tests'], {
      cwd: dir,
      env,
      timeout: 60_000,
    });
    return 0;
  } catch (e) {
    return Number((e as ExecError).code);
  }
}

const driver = (script: string): Promise<string[]> =>
  scopedTurn({ dir, ws, policy, feature: '001-calc', role: 'driver', step: 'green', script, frozen: [FROZEN] });

const writeCheat = `mkdir -p src && cat > src/cheat.py <<'EOF'\n${CHEAT}EOF\n`;

it("the driver cannot load its own pytest plugin through pyproject.toml's [tool.pytest.ini_options]", async () => {
  expect(await pytest()).toBe(1);
  const refused = await driver(
    `${writeCheat}printf '\\n[tool.pytest.ini_options]\\naddopts = "-p cheat"\\npythonpath = ["src"]\\n' >> pyproject.toml`,
  );
  // The cheat is real: pytest loads src/cheat.py, the failing test passes, exit 0.
  expect(await pytest()).toBe(0);
  expect(refused).toEqual([`pyproject.toml: ${HARNESS}`]);
}, 120_000);

it('the driver cannot load it through [tool:pytest] in setup.cfg', async () => {
  expect(await pytest()).toBe(1);
  const refused = await driver(
    `${writeCheat}printf '\\n[tool:pytest]\\naddopts = -p cheat\\npythonpath = src\\n' >> setup.cfg`,
  );
  expect(await pytest()).toBe(0);
  expect(refused).toEqual([`setup.cfg: ${HARNESS}`]);
}, 120_000);

// However TOML spells the table: a dotted key before the first header, an inline table, quoted
// keys, the table behind a nested array that a line-by-line reading would take for a header.
it.each([
  [
    'a dotted key at the top',
    `{ printf 'tool.pytest.ini_options.addopts = "-p cheat"\\n'; cat pyproject.toml; } > p && mv p pyproject.toml`,
  ],
  ['an inline table', `printf '\\n[tool]\\npytest = { ini_options = { addopts = "-p cheat" } }\\n' >> pyproject.toml`],
  ['quoted keys', `printf '\\n[ "tool" . pytest."ini_options" ]\\naddopts = "-p cheat"\\n' >> pyproject.toml`],
  ['pytest 9 native table', `printf '\\n[tool.pytest]\\naddopts = ["-p", "cheat"]\\n' >> pyproject.toml`],
  [
    'behind a nested array',
    `printf '\\n[tool.pytest.ini_options]\\nmarkers = [\\n["project"],\\n]\\naddopts = "-p cheat"\\n' >> pyproject.toml`,
  ],
  ['a coverage gate', `printf '\\n[tool.coverage.report]\\nfail_under = 0\\n' >> pyproject.toml`],
  ['a pdm script', `printf '\\n[tool.pdm.scripts]\\ntest = "true"\\n' >> pyproject.toml`],
  [
    'a new pyproject.toml in a folder',
    `mkdir -p lib && printf '[tool.pytest.ini_options]\\naddopts = "-p cheat"\\n' > lib/pyproject.toml`,
  ],
])(
  'pyproject.toml: %s is test-owned',
  async (_what, script) => {
    const refused = await driver(script);
    expect(refused.length).toBe(1);
    expect(refused[0]).toMatch(new RegExp(`pyproject\\.toml: ${HARNESS.replace(/[()]/g, '\\$&')}$`));
  },
  30_000,
);

it('a manifest made a link to a file the driver writes is test-owned (pytest follows it)', async () => {
  expect(await pytest()).toBe(1);
  const refused = await driver(
    `${writeCheat}mkdir -p docs && { cat pyproject.toml; printf '[tool.pytest.ini_options]\\naddopts = "-p cheat"\\npythonpath = ["src"]\\n'; } > docs/settings.toml && ln -sf docs/settings.toml pyproject.toml && mkdir -p web && ln -s ../docs/pkg.json web/package.json`,
  );
  expect(await pytest()).toBe(0);
  expect(refused).toEqual([`pyproject.toml: ${HARNESS}`, `web/package.json: ${HARNESS}`]);
}, 120_000);

it('an unreadable pyproject.toml counts as changed (pytest would stop; another reader may not)', async () => {
  expect(await driver(`printf '\\n[tool.pytest.ini_options\\n' >> pyproject.toml`)).toEqual([
    `pyproject.toml: ${HARNESS}`,
  ]);
}, 30_000);

it.each([
  ['Cargo.toml', `printf '\\n[patch.crates-io]\\npretty_assertions = { path = "src/pa" }\\n' >> Cargo.toml`],
  ['Cargo.toml', `sed -i 's/^pretty_assertions = "1"/pretty_assertions = { path = "src\\/pa" }/' Cargo.toml`],
  ['Cargo.toml', `printf '\\n[[test]]\\nname = "calc"\\nharness = false\\n' >> Cargo.toml`],
  ['go.mod', `printf '\\nreplace github.com/stretchr/testify => ./src/testify\\n' >> go.mod`],
  ['go.mod', `printf '\\nreplace (\\n\\tgithub.com/stretchr/testify v1.9.0 => ./src/testify\\n)\\n' >> go.mod`],
  ['deno.json', `printf '{ "imports": { "@std/assert": "./src/assert.ts" } }\\n' > deno.json`],
  [
    'deno.json',
    `printf '{ "imports": { "@std/assert": "jsr:@std/assert@1" }, "tasks": { "test": "true" } }\\n' > deno.json`,
  ],
])(
  '%s: a change to what the tests build against or how they run is test-owned (%#)',
  async (file, script) => {
    expect(await driver(script)).toEqual([`${file}: ${HARNESS}`]);
  },
  30_000,
);

it("the rest of each manifest is still the driver's: dependencies, metadata, formatting", async () => {
  expect(
    await driver(
      [
        `sed -i 's/^dependencies = \\[\\]/dependencies = ["attrs>=23"]/' pyproject.toml`,
        `printf '\\n[tool.ruff]\\nline-length = 100\\n' >> pyproject.toml`,
        `printf '    requests\\n\\n[flake8]\\nmax-line-length = 100\\n' >> setup.cfg`,
        `sed -i 's/^serde = "1"/serde = { version = "1", features = ["derive"] }/' Cargo.toml`,
        `printf '\\nrequire golang.org/x/text v0.14.0\\n' >> go.mod`,
        `printf '{\\n  "imports": { "@std/assert": "jsr:@std/assert@1" },\\n  "fmt": { "lineWidth": 80 }\\n}\\n' > deno.json`,
        'printf "def add(a, b):\\n    return a + b\\n" > src/calc.py',
      ].join(' && '),
    ),
  ).toEqual([]);
  expect(await pytest()).toBe(0);
}, 120_000);

describe("setup.cfg's runner sections, read so that neither pytest's reader nor configparser sees more", () => {
  const read = (text: string) => JSON.parse(setupCfgSections(text)) as string[];

  it('keeps the runner sections and what precedes any header', () => {
    expect(read('[metadata]\nname = a\n[tool:pytest]\naddopts = -x\n[options]\nzip_safe = 0\n')).toEqual([
      '[tool:pytest]',
      'addopts = -x',
    ]);
    expect(read('addopts = -x\n[metadata]\nname = a\n')).toEqual(['addopts = -x']);
  });

  it('an indented header may be a continuation to one reader and a header to the other: it ends nothing', () => {
    expect(read('[tool:pytest]\naddopts =\n  [metadata]\n  -p cheat\n')).toContain('  -p cheat');
    expect(read('[metadata]\ndescription =\n  [tool:pytest]\naddopts = -p cheat\n')).toContain('addopts = -p cheat');
  });

  it('a header only one reader takes for one ends nothing', () => {
    // iniconfig reads `[metadata] x` as a continuation of addopts; configparser as a header.
    expect(read('[tool:pytest]\naddopts = -q\n[metadata] x\n  -p cheat\n')).toContain('  -p cheat');
    // `[coverage:run]` cut at `;` by iniconfig, whole to configparser: a runner either way.
    expect(read('[metadata]\n[coverage:run] ; c\nplugins = cheat\n')).toContain('plugins = cheat');
  });
});

it("go.mod's replacements, in a block or on one line, comments aside", () => {
  expect(
    JSON.parse(goModReplaces('module m\nreplace (\n  a => ./b // why\n)\nreplace c v1 => d v2\nrequire e v1\n')),
  ).toEqual(['replace a => ./b', 'replace c v1 => d v2']);
});

it.each([
  [
    '.cargo/config.toml',
    `mkdir -p .cargo && printf '[target.x86_64-unknown-linux-gnu]\\nrunner = "true"\\n' > .cargo/config.toml`,
  ],
  [
    '.config/nextest.toml',
    `mkdir -p .config && printf '[profile.default]\\ndefault-filter = "none()"\\n' > .config/nextest.toml`,
  ],
  ['rust-toolchain.toml', `printf '[toolchain]\\nchannel = "nightly"\\n' > rust-toolchain.toml`],
  ['go.work', `printf 'go 1.22\\n\\nuse (\\n\\t.\\n\\t./src/testify\\n)\\n' > go.work`],
  ['.rspec', `printf -- '--require ./src/cheat.rb\\n' > .rspec`],
  ['.python-version', `printf 'cheat\\n' > .python-version`],
])(
  '%s, which its runner reads unnamed, is test-owned',
  async (file, script) => {
    expect(await driver(script)).toEqual([`${file}: ${HARNESS}`]);
  },
  30_000,
);
