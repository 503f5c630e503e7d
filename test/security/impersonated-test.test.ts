/**
 * A test is known by its id (`classname::name`), not by its file: node:test reports every test of
 * every file under the classname `test`. The runner collects more files than `build.tests` named
 * by default (node:test's `*_test.js`, `*-test.js`, `test-*.js`, `test.js`, any `test/` folder;
 * jest's `test.js`; pytest's `test_*.py`, `*_test.py`; go's `*_test.go`), so the driver could write
 * one in GREEN: a passing test named like the frozen one, while the code under test ends the frozen
 * file's process before its test runs (node:test then reports that file as a passing test of
 * its own). The proof of that commit was green with the bug still in `src/`. Played by a scripted
 * `command` agent on the sum repository with node's own test discovery; every file a runner
 * collects by default is a test path now, so the scope check refuses it.
 */
import { loadConfig } from '../../src/config/load.js';
import { judgeGreen } from '../../src/conductor/proofs.js';
import { checkScope, isTestPath } from '../../src/conductor/scope.js';
import { bindWorkspace } from '../../src/git/local-workspace.js';
import { changesSince, workspaceHead, type GitWorkspace } from '../../src/git/workspace.js';
import type { Dependencies } from '../../src/lanes/tdd/clean-tree.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';
import { driverGreenTurn, git, proveHead, sumWorkspace, type SumWorkspace, testStates } from '../helpers/sum-repo.js';

let dir: string;
let ws: GitWorkspace;
let deps: Dependencies;
let sum: SumWorkspace;

beforeEach(async () => {
  sum = await sumWorkspace('consort-impersonated-', {
    suiteCommand: 'node --test --test-reporter=junit --test-reporter-destination=junit.xml',
  });
  ({ dir, ws, deps } = sum);
});

afterEach(async () => {
  await sum.dispose();
});

it('the driver cannot add a test the runner collects to stand in for the frozen one', async () => {
  expect(testStates(await proveHead(dir, ws, deps))).toEqual(['test::adds failed']);
  const base = await workspaceHead(ws);
  const result = await driverGreenTurn(
    dir,
    bindWorkspace(ws),
    deps,
    `printf 'process.exit(0);\\n' >> src/sum.js && printf '%s\\n' "import { test } from 'node:test';" "test('adds', () => {});" > src/sum_test.js`,
  );
  expect(result.exit).toEqual({ kind: 'done' });
  const changes = await changesSince(ws, base);
  const policy = buildPolicy((await loadConfig(dir)).config, '001-sum');
  const refused = checkScope({ policy, role: 'driver', step: 'green', item: 'T1', changes, frozen: {}, hashes: {} });
  // What the conductor's commit would carry: the proof is green, the bug still in src/sum.js.
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'GREEN as committed');
  const proof = await proveHead(dir, ws, deps);
  expect(judgeGreen({ outcome: proof.outcome, itemTests: ['test::adds'], frozen: {} }).verdict).toBe('green');
  expect(refused.map((r) => `${r.path}: ${r.why}`)).toEqual(['src/sum_test.js: tests cannot change in GREEN']);
}, 120_000);

it.each([
  'src/sum_test.js',
  'src/sum-test.mjs',
  'src/test-sum.js',
  'src/test.js',
  'src/test/sum.js',
  'lib/spec.ts',
  'app/test_orders.py',
  'app/orders_test.py',
  'pkg/orders_test.go',
  'src/sum_spec.ts', // bun test
])('%s is a test path by default', async (file) => {
  const policy = buildPolicy((await loadConfig(dir)).config, '001-sum');
  expect(isTestPath(policy, file)).toBe(true);
});

it.each([
  'src/testing.js',
  'src/contest.js',
  'src/latest.js',
  'src/test-data.json',
  'src/attest_x.py',
  'src/spec_data.ts',
])('%s is not', async (file) => {
  const policy = buildPolicy((await loadConfig(dir)).config, '001-sum');
  expect(isTestPath(policy, file)).toBe(false);
});
