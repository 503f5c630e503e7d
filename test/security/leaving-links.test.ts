/**
 * A commit may hold symbolic links, and a proof's fresh worktree checks them out as links: one that
 * leads out of the workspace (an absolute target, or `..` past its top) makes the proof run a file
 * no commit holds, which the agent wrote outside the workspace during its turn (the filesystem is
 * not confined). The driver's GREEN that replaces `src/sum.js` with a link to its fix elsewhere
 * proved green with the bug still all the commit has; a navigator's test that is such a link
 * would be frozen by its path while its content stays the driver's to change. Played by a scripted
 * `command` agent on the sum repository (test/helpers/sum-repo.ts); the scope check must refuse
 * every such link, whatever the role, and a link inside the tree stays the driver's.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { checkScope } from '../../src/conductor/scope.js';
import { bindWorkspace } from '../../src/git/local-workspace.js';
import { changesSince, workspaceHead, type GitWorkspace } from '../../src/git/workspace.js';
import type { Dependencies } from '../../src/lanes/tdd/clean-tree.js';
import { linksLeaving } from '../../src/lanes/tdd/harness.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';
import { driverGreenTurn, git, proveHead, sumWorkspace, type SumWorkspace, testStates } from '../helpers/sum-repo.js';

let dir: string;
let outside: string;
let ws: GitWorkspace;
let deps: Dependencies;
let sum: SumWorkspace;

beforeEach(async () => {
  sum = await sumWorkspace('consort-leaving-links-');
  ({ dir, ws, deps } = sum);
  outside = await mkdtemp(path.join(os.tmpdir(), 'consort-outside-'));
});

afterEach(async () => {
  await sum.dispose();
  await rm(outside, { recursive: true, force: true });
});

/** The turn, then the scope check as the conductor runs it (the links found as turn.ts finds them). */
async function refusedAfter(command: string, role: 'driver' | 'navigator' = 'driver'): Promise<string[]> {
  const base = await workspaceHead(ws);
  const result = await driverGreenTurn(dir, bindWorkspace(ws), deps, command);
  expect(result.exit).toEqual({ kind: 'done' });
  const changes = await changesSince(ws, base);
  const policy = buildPolicy((await loadConfig(dir)).config, '001-sum');
  const links = await linksLeaving(dir, changes);
  const step = role === 'driver' ? 'green' : 'red';
  return checkScope({ policy, role, step, item: 'T1', changes, frozen: {}, hashes: {}, links }).map(
    (r) => `${r.path}: ${r.why}`,
  );
}

const LEAVES = 'a link out of the workspace (the proof would run what it leads to, which no commit holds)';

it('the driver cannot prove a fix that lives outside the workspace through a link', async () => {
  expect(testStates(await proveHead(dir, ws, deps))).toEqual(['test::adds failed']);
  const fix = path.join(outside, 'sum.js');
  const refused = await refusedAfter(
    `printf 'export const sum = (a, b) => a + b;\\n' > '${fix}' && rm src/sum.js && ln -s '${fix}' src/sum.js`,
  );
  // What the conductor's commit would carry: a link, and the proof runs what it leads to.
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'GREEN as committed');
  expect(await git(dir, 'ls-files', '-s', 'src/sum.js')).toMatch(/^120000 /);
  expect(testStates(await proveHead(dir, ws, deps))).toEqual(['test::adds passed']);
  expect(refused).toEqual([`src/sum.js: ${LEAVES}`]);
}, 120_000);

it('nor through a relative link past the top, nor into .git', async () => {
  const rel = `../../${path.basename(outside)}/sum.js`;
  expect(
    await refusedAfter(
      `printf 'export const sum = (a, b) => a + b;\\n' > '${outside}/sum.js' && rm src/sum.js && ln -s '${rel}' src/sum.js && ln -s ../.git/config src/config.js`,
    ),
  ).toEqual([`src/config.js: ${LEAVES}`, `src/sum.js: ${LEAVES}`]);
}, 60_000);

it("a navigator's test that is such a link is refused in RED too", async () => {
  expect(
    await refusedAfter(
      `printf 'test("x", () => {});\\n' > '${outside}/more.test.js' && ln -s '${outside}/more.test.js' test/more.test.js`,
      'navigator',
    ),
  ).toEqual([`test/more.test.js: ${LEAVES}`]);
}, 60_000);

it("a link inside the tree is still the driver's", async () => {
  expect(
    await refusedAfter(
      `printf 'export const sum = (a, b) => a + b;\\n' > src/sum-impl.js && rm src/sum.js && ln -s sum-impl.js src/sum.js && mkdir -p src/a && ln -s ../sum-impl.js src/a/sum.js`,
    ),
  ).toEqual([]);
}, 60_000);
