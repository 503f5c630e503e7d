/**
 * A workspace whose `node_modules` is a link to an install outside the repository (a Nix store's,
 * read-only to the user) gives its proofs that install as it is: it is not copied, since it was
 * never the agent's to write (src/lanes/tdd/clean-tree.ts). The link itself is the work tree's,
 * though, and an agent's turn can point it elsewhere. Until 2026-12-05 the run kept the link's own
 * path, and each proof's `node_modules` led through it: an agent that pointed it at a folder of its
 * own, with a runner that reports green, had every later proof run that runner. The run now keeps
 * where the link led when it started, before any turn.
 */
import { chmod, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bindWorkspace } from '../../src/git/local-workspace.js';
import { openWorkspace, type GitWorkspace } from '../../src/git/workspace.js';
import { snapshotDependencies, type Dependencies } from '../../src/lanes/tdd/clean-tree.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { driverGreenTurn, PATCHED_RUNNER, proveHead, sumRepo, testStates } from '../helpers/sum-repo.js';

let dir: string;
let outside: string;
let ws: GitWorkspace;
let deps: Dependencies | undefined;

beforeEach(async () => {
  dir = await sumRepo('consort-linked-install-', {
    before: async (d) => {
      // The install lives outside the repository, read-only; the workspace links to it.
      outside = `${d}-store`;
      await mkdir(outside);
      await rename(path.join(d, 'node_modules'), path.join(outside, 'node_modules'));
      await symlink(path.join(outside, 'node_modules'), path.join(d, 'node_modules'), 'dir');
      await chmod(path.join(outside, 'node_modules', 'runner'), 0o555);
      await writeFile(path.join(d, '.gitignore'), 'node_modules\njunit.xml\n');
    },
  });
  ws = await openWorkspace(dir);
});

afterEach(async () => {
  await deps?.dispose();
  deps = undefined;
  await chmod(path.join(outside, 'node_modules', 'runner'), 0o755);
  for (const d of [dir, outside, `${dir}-consort-evil`]) await rm(d, { recursive: true, force: true });
});

it("an agent that points the workspace's linked node_modules elsewhere does not change what proofs run", async () => {
  deps = await snapshotDependencies(bindWorkspace(ws), localProcessRunner);
  expect(await proveHead(dir, ws, deps).then(testStates)).toEqual(['test::adds failed']);
  // The driver's GREEN turn: no fix, only the link, to a runner of its own.
  const evil = `${dir}-consort-evil`;
  const script = `mkdir -p ${JSON.stringify(`${evil}/runner`)}
cat > ${JSON.stringify(`${evil}/runner/run.mjs`)} <<'EOF'
${PATCHED_RUNNER}EOF
cd ${JSON.stringify(dir)} && rm node_modules && ln -s ${JSON.stringify(evil)} node_modules`;
  const turn = await driverGreenTurn(dir, bindWorkspace(ws), deps, script);
  expect(turn.exit).toEqual({ kind: 'done' });
  // Until 2026-12-05: ['test::adds passed'], the forged report of the agent's runner.
  expect(await proveHead(dir, ws, deps).then(testStates)).toEqual(['test::adds failed']);
}, 60_000);

it('a linked node_modules that leads into the repository is copied at the start, as a folder there is', async () => {
  // The install in an ignored folder of the work tree, which agents write.
  const inside = path.join(dir, '.deps');
  await chmod(path.join(outside, 'node_modules', 'runner'), 0o755);
  await mkdir(inside);
  await rm(path.join(dir, 'node_modules'));
  await rename(path.join(outside, 'node_modules'), path.join(inside, 'node_modules'));
  await mkdir(path.join(outside, 'node_modules', 'runner'), { recursive: true }); // for afterEach
  await symlink('.deps/node_modules', path.join(dir, 'node_modules'), 'dir');
  await writeFile(path.join(dir, '.git', 'info', 'exclude'), '.deps\n');
  deps = await snapshotDependencies(bindWorkspace(ws), localProcessRunner);
  expect(deps.copied.has('node_modules')).toBe(true);
  const script = `cat > ${JSON.stringify(path.join(inside, 'node_modules', 'runner', 'run.mjs'))} <<'EOF'
${PATCHED_RUNNER}EOF`;
  const turn = await driverGreenTurn(dir, bindWorkspace(ws), deps, script);
  expect(turn.exit).toEqual({ kind: 'done' });
  // Until 2026-12-05: ['test::adds passed'], the proof's node_modules led into the work tree.
  expect(await proveHead(dir, ws, deps).then(testStates)).toEqual(['test::adds failed']);
}, 60_000);
