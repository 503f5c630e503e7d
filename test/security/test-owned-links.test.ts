/**
 * A link at a test-owned path that leads to a file the driver writes. The navigator's RED may add
 * files under the tests and the harness, links among them; a test's data file (or a helper, or a
 * folder of fixtures) made a link to `data/values.json` is frozen by its path, while what the test
 * reads through it stays the driver's to rewrite in GREEN: until 2026-12-04 a RED that planted
 * `test/fixtures/expected.json` → `../../data/values.json` let the next GREEN prove the committed
 * bug green by rewriting `data/values.json` (played through a proof on the sum repository, node's
 * test runner). Such a link is refused in every step, whatever the role; a link among test-owned
 * files, and a driver's link among its own, are not.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { checkScope } from '../../src/conductor/scope.js';
import { bindWorkspace } from '../../src/git/local-workspace.js';
import { changesSince, workspaceHead, type GitWorkspace } from '../../src/git/workspace.js';
import type { Dependencies } from '../../src/lanes/tdd/clean-tree.js';
import { linksLeaving, linkTargets, testOwnedChanges } from '../../src/lanes/tdd/harness.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';
import { driverGreenTurn, git, proveHead, sumWorkspace, type SumWorkspace, testStates } from '../helpers/sum-repo.js';
import { workspaceAt } from '../helpers/tdd.js';

let dir: string;
let ws: GitWorkspace;
let deps: Dependencies;
let sum: SumWorkspace;

/** test/sum.test.js reading its expected value from a fixture next to it. */
const FIXTURE_TEST = `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { sum } from '../src/sum.js';
const expected = JSON.parse(readFileSync(new URL('./fixtures/expected.json', import.meta.url), 'utf8'));
test('adds', () => { assert.equal(sum(1, 2), expected.sum); });
`;

beforeEach(async () => {
  sum = await sumWorkspace('consort-test-owned-links-', {
    before: async (d) => {
      await mkdir(path.join(d, 'data'));
      await writeFile(path.join(d, 'data', 'values.json'), '{ "sum": 3 }\n');
    },
  });
  ({ dir, ws, deps } = sum);
});

afterEach(() => sum.dispose());

/** A scripted turn, then the scope check as the conductor runs it (turn.ts's facts). */
async function refusedAfter(command: string, role: 'driver' | 'navigator', frozen: string[] = []): Promise<string[]> {
  const base = await workspaceHead(ws);
  const result = await driverGreenTurn(dir, bindWorkspace(ws), deps, command);
  expect(result.exit).toEqual({ kind: 'done' });
  const changes = await changesSince(ws, base);
  const { config } = await loadConfig(dir);
  const policy = buildPolicy(config, '001-sum');
  const port = await workspaceAt(dir);
  return checkScope({
    policy,
    role,
    step: role === 'driver' ? 'green' : 'red',
    item: 'T1',
    changes,
    frozen: {},
    hashes: {},
    links: await linksLeaving(dir, changes),
    linkTargets: await linkTargets(dir, changes),
    testOwned: await testOwnedChanges(port, base, changes, frozen, config.build.tests, config.suite),
  }).map((r) => `${r.path}: ${r.why}`);
}

const PLANT = `cat > test/sum.test.js <<'EOF'\n${FIXTURE_TEST}EOF\nmkdir -p test/fixtures && ln -s ../../data/values.json test/fixtures/expected.json`;

it("a navigator's fixture that is a link to the driver's file is refused in RED", async () => {
  const refused = await refusedAfter(PLANT, 'navigator');
  // The cheat is real: committed as RED was (red for the right reason) …
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'RED as committed');
  expect(testStates(await proveHead(dir, ws, deps))).toEqual(['test::adds failed']);
  // … a GREEN that rewrites only data/values.json is in the driver's scope, and proves the bug green.
  expect(await refusedAfter(`printf '{ "sum": -1 }\\n' > data/values.json`, 'driver', ['test/sum.test.js'])).toEqual(
    [],
  );
  await git(dir, 'commit', '-qam', 'GREEN as committed');
  expect(await git(dir, 'show', 'HEAD:src/sum.js')).toContain('a - b');
  expect(testStates(await proveHead(dir, ws, deps))).toEqual(['test::adds passed']);
  expect(refused).toEqual([
    'test/fixtures/expected.json: a test-owned link leading to data/values.json, which is not (the driver could change what the test reads through it)',
  ]);
}, 120_000);

it('so is a folder of fixtures made a link to a folder of the code, and a harness file made one', async () => {
  expect(
    await refusedAfter(
      'mkdir -p test/unit && ln -s ../../data test/unit/fixtures && ln -s src/setup.js jest.setup.js',
      'navigator',
    ),
  ).toEqual([
    'jest.setup.js: a test-owned link leading to src/setup.js, which is not (the driver could change what the test reads through it)',
    'test/unit/fixtures: a test-owned link leading to data/, which is not (the driver could change what the test reads through it)',
  ]);
}, 60_000);

it("a link among test-owned files (or to a locked one) is the navigator's, and one among the code's the driver's", async () => {
  expect(
    await refusedAfter(
      `mkdir -p test/fixtures && printf '{ "sum": 3 }\\n' > test/expected.json && ln -s ../expected.json test/fixtures/expected.json && ln -s ../../.github/consort.yml test/fixtures/consort.yml`,
      'navigator',
    ),
  ).toEqual([]);
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'RED');
  expect(await refusedAfter('ln -s ../data/values.json src/values.json', 'driver')).toEqual([]);
}, 60_000);
