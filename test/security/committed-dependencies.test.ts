/**
 * A proof links the pristine install at `node_modules` only where the commit has nothing of its own
 * there (src/lanes/tdd/clean-tree.ts: a committed folder is the commit's). The ignored `node_modules`
 * is the agent's to patch, and `.gitignore` is the driver's to edit: a GREEN turn that stops
 * ignoring `node_modules` and patches the runner there has the conductor's `git add -A` commit the
 * patched runner, which the proof then runs instead of the pristine one — green, the bug still in
 * `src/`. Played by a scripted `command` agent on the sum repository (test/helpers/sum-repo.ts),
 * under the lane's read-only binds; the scope check must refuse it. The same holds for a
 * `node_modules` beside a test (`src/node_modules/…`, resolved first by a test in `src/`).
 */
import { loadConfig } from '../../src/config/load.js';
import { checkScope } from '../../src/conductor/scope.js';
import { bindWorkspace } from '../../src/git/local-workspace.js';
import { changesSince, workspaceHead, type GitWorkspace } from '../../src/git/workspace.js';
import type { Dependencies } from '../../src/lanes/tdd/clean-tree.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';
import {
  driverGreenTurn,
  git,
  PATCHED_RUNNER,
  proveHead,
  sumWorkspace,
  type SumWorkspace,
  testStates,
} from '../helpers/sum-repo.js';

let dir: string;
let ws: GitWorkspace;
let deps: Dependencies;
let sum: SumWorkspace;

beforeEach(async () => {
  sum = await sumWorkspace('consort-committed-deps-');
  ({ dir, ws, deps } = sum);
});

afterEach(async () => {
  await sum.dispose();
});

async function refusedAfter(command: string): Promise<string[]> {
  const base = await workspaceHead(ws);
  const result = await driverGreenTurn(dir, bindWorkspace(ws), deps, command);
  expect(result.exit).toEqual({ kind: 'done' });
  const changes = await changesSince(ws, base);
  const policy = buildPolicy((await loadConfig(dir)).config, '001-sum');
  return checkScope({ policy, role: 'driver', step: 'green', item: 'T1', changes, frozen: {}, hashes: {} }).map(
    (r) => r.path,
  );
}

it('the driver cannot commit a patched runner by un-ignoring node_modules', async () => {
  expect(testStates(await proveHead(dir, ws, deps))).toEqual(['test::adds failed']);
  const refused = await refusedAfter(
    `printf 'junit.xml\\n' > .gitignore && cat > node_modules/runner/run.mjs <<'EOF'\n${PATCHED_RUNNER}EOF\n`,
  );
  // What the conductor's commit would carry (git add -A): the proof runs it, and it is green.
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'GREEN as committed');
  expect(await git(dir, 'ls-files', 'node_modules')).toBe('node_modules/runner/run.mjs');
  expect(testStates(await proveHead(dir, ws, deps))).toEqual(['test::adds passed']);
  expect(refused).toEqual(['node_modules/runner/run.mjs']);
}, 120_000);

it('nor a node_modules beside a test in src/', async () => {
  expect(
    await refusedAfter(
      `printf 'junit.xml\\n/node_modules/\\n' > .gitignore && mkdir -p src/node_modules/assert && printf 'export default {}\\n' > src/node_modules/assert/index.js`,
    ),
  ).toEqual(['src/node_modules/assert/index.js']);
}, 60_000);

it('nor a link named node_modules, which `node_modules/` in .gitignore does not match', async () => {
  expect(await refusedAfter('mkdir lib && ln -s /tmp lib/node_modules')).toEqual(['lib/node_modules']);
}, 60_000);
