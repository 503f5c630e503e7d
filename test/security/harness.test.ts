/**
 * The test harness is test-owned. Each cheat the issue lists (and a few more ways to change how a
 * suite runs) is played as the driver's GREEN turn and must be refused; the navigator may change
 * the harness in RED; Consort's configuration, migrations already on the base and the seed are
 * no agent's to change.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import type { FileChange } from '../../src/conductor/events.js';
import { checkScope } from '../../src/conductor/scope.js';
import type { Role } from '../../src/conductor/roles.js';
import type { TurnStep } from '../../src/conductor/state.js';
import { dataReferences, testOwnedChanges } from '../../src/lanes/tdd/harness.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';
import { runPolicy } from '../../src/lanes/tdd/driver.js';
import { laneConfigFile } from '../../src/cli/commands/lane.js';
import { SHOP_DIR } from '../../src/demo/scenarios.js';
import { workspaceAt } from '../helpers/tdd.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
const git = (cwd: string, ...args: string[]) =>
  exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd });

async function shopPolicy() {
  const { config } = await loadConfig(SHOP_DIR);
  const policy = buildPolicy(config, '001-phones');
  // What a run adds at its start: the base's migrations (examples/shop/migrations).
  policy.locked.push('migrations/1730000000000_create_customers.sql');
  return policy;
}

async function refusedFor(role: Role, step: TurnStep, paths: string[], testOwned: string[] = []) {
  const changes: FileChange[] = paths.map((p) => ({ path: p, status: 'modified' }));
  return checkScope({
    policy: await shopPolicy(),
    role,
    step,
    item: 'T1',
    changes,
    frozen: {},
    hashes: {},
    testOwned,
  }).map((r) => `${r.path}: ${r.why}`);
}

describe('the driver cannot change how the suite runs or what it expects', () => {
  it.each([
    ['a moduleNameMapper to an in-memory double', 'jest.config.js'],
    ['a setup file', 'jest.setup.js'],
    ['a vitest config', 'vitest.config.ts'],
    ['a mocha config', '.mocharc.yml'],
    ['a transform config', 'babel.config.cjs'],
    ['a tsconfig (paths to a double)', 'tsconfig.json'],
    ['a module double', 'src/__mocks__/db.js'],
    ['a snapshot', 'src/__snapshots__/orders.test.js.snap'],
    ['a fixture', 'fixtures/customers.json'],
    ['the package manager configuration', '.npmrc'],
    ['a pytest conftest', 'tests/conftest.py'],
  ])('%s (%s)', async (_what, file) => {
    expect(await refusedFor('driver', 'green', [file])).toEqual([
      `${file}: the test harness (test-owned: only the navigator changes it, in RED)`,
    ]);
  });

  it.each([
    ['consort.config.json (gates.mode: proxy)', 'consort.config.json'],
    ['.github/consort.yml', '.github/consort.yml'],
    ['a migration already on the base', 'migrations/1730000000000_create_customers.sql'],
    ['the seed', 'seed.sql'],
  ])("%s is no agent's, in any step", async (_what, file) => {
    for (const [role, step] of [
      ['driver', 'green'],
      ['navigator', 'red'],
      ['driver', 'refactor'],
    ] as const) {
      expect(await refusedFor(role, step, [file])).toEqual([expect.stringContaining("no agent's to change")]);
    }
  });

  it('the navigator may change the harness in RED, with its tests', async () => {
    expect(
      await refusedFor('navigator', 'red', ['test/phones.test.js', 'jest.config.js', 'src/__mocks__/db.js']),
    ).toEqual([]);
  });

  it("a new migration is still the driver's to add", async () => {
    expect(await refusedFor('driver', 'green', ['migrations/1730000400000_add_phone.sql', 'src/customers.js'])).toEqual(
      [],
    );
  });

  it('content-judged paths the driver reports (package.json runner keys, data files) are refused', async () => {
    expect(
      await refusedFor('driver', 'green', ['package.json', 'src/expected.json'], ['package.json', 'src/expected.json']),
    ).toHaveLength(2);
  });
});

describe('testOwnedChanges', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'consort-harness-'));
    await mkdir(path.join(dir, 'test'));
    await mkdir(path.join(dir, 'data'));
    await writeFile(
      path.join(dir, 'package.json'),
      JSON.stringify({ name: 'x', type: 'module', scripts: { test: 'jest' }, dependencies: {} }, null, 2),
    );
    await writeFile(path.join(dir, 'data', 'expected.json'), '{ "total": 42 }\n');
    await writeFile(path.join(dir, 'data', 'unrelated.json'), '{}\n');
    await writeFile(
      path.join(dir, 'test', 'total.test.js'),
      "import expected from '../data/expected.json' with { type: 'json' };\ntest('total', () => expect(total()).toBe(expected.total));\n",
    );
    await git(dir, 'init', '-q');
    await git(dir, 'add', '-A');
    await git(dir, 'commit', '-qm', 'base');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const owned = async (changes: FileChange[]) => {
    const ws = await workspaceAt(dir);
    const base = (await git(dir, 'rev-parse', 'HEAD')).stdout.trim();
    return testOwnedChanges(ws, base, changes, ['test/total.test.js']);
  };

  it.each([
    ['"test": "exit 0"', { scripts: { test: 'exit 0' } }],
    [
      'jest.passWithNoTests / testPathIgnorePatterns',
      { jest: { passWithNoTests: true, testPathIgnorePatterns: ['total'] } },
    ],
    [
      'jest.moduleNameMapper to a double',
      { jest: { moduleNameMapper: { '^../src/db.js$': '<rootDir>/src/db-double.js' } } },
    ],
    ['a JUnit-stripping wrapper as the test script', { scripts: { test: 'jest; node strip-failures.js junit.xml' } }],
    ['imports remapping', { imports: { '#db': './src/db-double.js' } }],
  ])('package.json: %s', async (_what, patch) => {
    await writeFile(
      path.join(dir, 'package.json'),
      JSON.stringify({ name: 'x', type: 'module', scripts: { test: 'jest' }, dependencies: {}, ...patch }, null, 2),
    );
    expect(await owned([{ path: 'package.json', status: 'modified' }])).toEqual(['package.json']);
  });

  it("package.json: a new dependency is the driver's", async () => {
    await writeFile(
      path.join(dir, 'package.json'),
      JSON.stringify({ name: 'x', type: 'module', scripts: { test: 'jest' }, dependencies: { zod: '4.0.0' } }, null, 2),
    );
    expect(await owned([{ path: 'package.json', status: 'modified' }])).toEqual([]);
  });

  it('a data file a frozen test reads is frozen with it; others are not', async () => {
    await writeFile(path.join(dir, 'data', 'expected.json'), '{ "total": 0 }\n');
    expect(
      await owned([
        { path: 'data/expected.json', status: 'modified' },
        { path: 'data/unrelated.json', status: 'modified' },
      ]),
    ).toEqual(['data/expected.json']);
    expect(dataReferences("readFileSync(path.join(__dirname, 'golden', 'out.csv'))\nimport x from './x.js'")).toEqual([
      'out.csv',
    ]);
  });
});

describe('a configuration file passed by path (--config, the Action’s config input)', () => {
  it('is locked like .github/consort.yml: the driver may not change its suite command or passEnv', async () => {
    const { config } = await loadConfig(SHOP_DIR);
    const change: FileChange[] = [{ path: 'ci/consort.yml', status: 'modified' }];
    const scope = (policy: ReturnType<typeof runPolicy>) =>
      checkScope({ policy, role: 'driver', step: 'green', item: 'T1', changes: change, frozen: {}, hashes: {} }).map(
        (r) => r.path,
      );
    // Without it the driver's `**` covers it.
    expect(scope(runPolicy({ config, feature: '001-phones' }))).toEqual([]);
    expect(scope(runPolicy({ config, feature: '001-phones', configFile: 'ci/consort.yml' }))).toEqual([
      'ci/consort.yml',
    ]);
  });

  it('the CLI names --config relative to the repository, and only inside it', () => {
    const c = { root: '/work/repo' } as Parameters<typeof laneConfigFile>[0];
    expect(laneConfigFile(c, 'ci/consort.yml')).toBe('ci/consort.yml');
    expect(laneConfigFile(c, '/work/repo/ci/../ci/consort.yml')).toBe('ci/consort.yml');
    expect(laneConfigFile(c, '../elsewhere.yml')).toBeUndefined();
    expect(laneConfigFile(c, undefined)).toBeUndefined();
  });
});
