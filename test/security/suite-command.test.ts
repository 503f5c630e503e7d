/**
 * What the suite command and a seed command run is frozen like the harness. Consort's
 * configuration is no agent's, but `suite.command: npm test` runs package.json scripts, which run
 * committed files (`scripts/run.mjs`, a config passed as `--config=…`, a `pretest` shell script);
 * `seed.command: node db/seed.mjs` runs a committed seed script. A scripted `command` agent's GREEN
 * turn rewrites each (an `exit 0` runner, a schema change through the seed): the scope check
 * refuses them — the suite's files as the harness (the navigator may change them in RED), the
 * seed's as no agent's, like a seed file — and an honest change in `src/` still passes.
 */
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import type { Role } from '../../src/conductor/roles.js';
import type { Policy, TurnStep } from '../../src/conductor/state.js';
import { workspaceHead, type GitWorkspace } from '../../src/git/workspace.js';
import { bindWorkspace } from '../../src/git/local-workspace.js';
import { commandFiles, commandPaths } from '../../src/lanes/tdd/harness.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';
import { execFileAsync } from '../helpers/exec-file.js';
import { committedWorkspace, scopedTurn } from '../helpers/scoped-turn.js';

const exec = execFileAsync;
const git = (cwd: string, ...args: string[]) =>
  exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd });

const PACKAGE = {
  name: 'app',
  type: 'module',
  scripts: {
    pretest: 'sh scripts/prepare.sh',
    test: 'node scripts/run.mjs --config=runner.json && npm run report',
    report: 'node scripts/report.mjs junit.xml',
    build: 'node scripts/build.mjs',
  },
};

let dir: string;
let ws: GitWorkspace;
let policy: Policy;

beforeEach(async () => {
  const files: Record<string, string> = {
    'package.json': `${JSON.stringify(PACKAGE, null, 2)}\n`,
    'scripts/prepare.sh': 'echo preparing\n',
    'scripts/run.mjs': "import './runner.js';\n",
    'scripts/report.mjs': '// copies the JUnit file\n',
    'scripts/build.mjs': '// builds\n',
    'runner.json': '{ "tests": "test/" }\n',
    'db/seed.mjs': '// INSERT INTO customers … through DATABASE_URL\n',
    'src/sum.js': 'export const sum = (a, b) => a - b;\n',
    'test/sum.test.js': '// the frozen test\n',
    'migrations/.keep': '',
    '.github/consort.yml':
      'suite:\n  command: npm test\n  reports: junit.xml\nmigrations:\n  dir: migrations\ndatabase:\n  seed:\n    command: node ./db/seed.mjs\n',
  };
  ({ dir, ws } = await committedWorkspace('consort-suite-cmd-', files));
  const { config } = await loadConfig(dir);
  // What the driver adds to a run's policy when it starts (src/lanes/tdd/driver.ts, startEvent).
  policy = buildPolicy(config, '001-sum');
  const named = await commandPaths(bindWorkspace(ws), await workspaceHead(ws), config);
  policy.harness.push(...named.harness);
  policy.locked.push(...named.locked);
});

afterEach(() => rm(dir, { recursive: true, force: true }));

it('names the files the suite command runs through package.json scripts, and the seed command runs', async () => {
  const { config } = await loadConfig(dir);
  expect(await commandPaths(bindWorkspace(ws), await workspaceHead(ws), config)).toEqual({
    harness: ['runner.json', 'scripts/prepare.sh', 'scripts/report.mjs', 'scripts/run.mjs'],
    locked: ['db/seed.mjs'],
  });
  // Only committed files, named as words of the command; a script the suite does not run is not named.
  const tracked = new Set(['scripts/test.sh', 'jest.ci.js', 'scripts/build.mjs']);
  expect(commandFiles('sh ./scripts/test.sh && jest --config "jest.ci.js" ../x /abs', null, tracked)).toEqual([
    'jest.ci.js',
    'scripts/test.sh',
  ]);
});

/** A scripted command agent's turn, then the scope check as the conductor runs it. */
const turn = (role: Role, step: TurnStep, script: string): Promise<string[]> =>
  scopedTurn({ dir, ws, policy, feature: '001-sum', role, step, script });

it.each([
  ['a runner script that reports green', 'scripts/run.mjs', `printf 'process.exit(0);\\n' > scripts/run.mjs`],
  ["the runner's config passed as a flag", 'runner.json', `printf '{ "tests": "nothing/" }\\n' > runner.json`],
  ['a pretest script', 'scripts/prepare.sh', `printf 'exit 0\\n' > scripts/prepare.sh`],
  [
    'the JUnit post-processor (strips failures)',
    'scripts/report.mjs',
    `printf '// drop <failure>\\n' > scripts/report.mjs`,
  ],
])(
  'the driver cannot change %s the suite command runs',
  async (_what, file, script) => {
    expect(await turn('driver', 'green', script)).toEqual([
      `${file}: the test harness (test-owned: only the navigator changes it, in RED)`,
    ]);
  },
  30_000,
);

it('the navigator may change them in RED, with its tests', async () => {
  expect(
    await turn(
      'navigator',
      'red',
      `printf 'import "./runner.js"; // v2\\n' > scripts/run.mjs && echo '// t' >> test/sum.test.js`,
    ),
  ).toEqual([]);
}, 30_000);

it("the seed command's script is no agent's, in any step", async () => {
  for (const [role, step] of [
    ['driver', 'green'],
    ['navigator', 'red'],
  ] as const) {
    expect(await turn(role, step, `printf 'ALTER TABLE customers ADD COLUMN phone text;\\n' >> db/seed.mjs`)).toEqual([
      `db/seed.mjs: no agent's to change (Consort's configuration, a migration already on the base, the seed)`,
    ]);
    await git(dir, 'checkout', '--', 'db/seed.mjs');
  }
}, 30_000);

it("an honest GREEN (the fix in src/), and a build script the suite does not run, are the driver's", async () => {
  expect(
    await turn('driver', 'green', `sed -i 's/a - b/a + b/' src/sum.js && echo '// faster' >> scripts/build.mjs`),
  ).toEqual([]);
}, 30_000);

describe('a program that reads its file unnamed (`make test` and its Makefile)', () => {
  it('names the files make, just, task, nox, rake and invoke read, present or added later', () => {
    const tracked = new Set(['Makefile', 'src/sum.js']);
    expect(commandFiles('make test', null, tracked)).toEqual([
      '**/*.mk',
      '**/GNUmakefile',
      '**/Makefile',
      '**/makefile',
    ]);
    // Through a package.json script, by path, as a module of python.
    expect(
      commandFiles('npm test', JSON.stringify({ scripts: { test: '/usr/bin/make -C web ci' } }), tracked),
    ).toContain('**/Makefile');
    expect(commandFiles('python3 -m nox -s tests', null, tracked)).toEqual(['**/noxfile.py']);
    expect(commandFiles('just test', null, tracked)).toContain('**/[Jj][Uu][Ss][Tt][Ff][Ii][Ll][Ee]');
    expect(commandFiles('node run.mjs', null, tracked)).toEqual([]);
  });

  it.each([
    ['the Makefile it runs', `printf 'test:\\n\\techo ok\\n' > Makefile`, 'Makefile'],
    // GNU make reads GNUmakefile, then makefile, before Makefile.
    ['a GNUmakefile that make prefers', `printf 'test:\\n\\techo ok\\n' > GNUmakefile`, 'GNUmakefile'],
    ['a file the Makefile includes', `printf 'X = 1\\n' > tests.mk`, 'tests.mk'],
  ])(
    'the driver cannot change %s when suite.command is make test',
    async (_what, script, file) => {
      await writeFile(
        path.join(dir, '.github', 'consort.yml'),
        'suite:\n  command: make test\n  reports: junit.xml\nmigrations:\n  dir: migrations\n',
      );
      await writeFile(path.join(dir, 'Makefile'), 'test:\n\tnode scripts/run.mjs\n');
      await git(dir, 'add', '-A');
      await git(dir, 'commit', '-qm', 'make');
      const { config } = await loadConfig(dir);
      const makePolicy = buildPolicy(config, '001-sum');
      makePolicy.harness.push(...(await commandPaths(bindWorkspace(ws), await workspaceHead(ws), config)).harness);
      expect(
        await scopedTurn({ dir, ws, policy: makePolicy, feature: '001-sum', role: 'driver', step: 'green', script }),
      ).toEqual([`${file}: the test harness (test-owned: only the navigator changes it, in RED)`]);
    },
    30_000,
  );
});
