/**
 * A run killed with SIGKILL runs no `finally`: its proofs' worktrees (with their registrations),
 * their dependency copies and its pristine copy stay next to the repository. The next run of the
 * workspace removes them (src/lanes/tdd/clean-tree.ts removeStaleTrees) — only those whose process,
 * named in the folder's name, is gone; a live run's are left alone.
 */
import { spawnSync } from 'node:child_process';
import { chmod, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bindWorkspace } from '../../src/git/local-workspace.js';
import { openWorkspace } from '../../src/git/workspace.js';
import { removeStaleTrees } from '../../src/lanes/tdd/clean-tree.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { sumRepo } from '../helpers/sum-repo.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;

it("removes a killed run's proof worktrees, registrations and copies, and leaves a live run's", async () => {
  const dir = await sumRepo('consort-stale-');
  const parent = path.dirname(dir);
  const name = path.basename(dir);
  // A process id that was used and is gone.
  const dead = spawnSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' }).stdout.trim();
  const gone = `${dir}-consort-proof-${dead}-0123abcd`;
  const live = `${dir}-consort-proof-${process.pid}-0123abcd`;
  // A proof of an experiment's attempt (a worktree named after its turn) is named after the attempt.
  const attemptGone = `${dir}-consort-turn-0007-consort-proof-${dead}-4567cdef`;
  for (const tree of [gone, live, attemptGone])
    await exec('git', ['-C', dir, 'worktree', 'add', '--detach', '-q', tree, 'HEAD']);
  // Its read-only dependency copies (as a proof and a run leave them).
  for (const copy of [`${gone}-deps/node_modules/x`, `${dir}-consort-deps-${dead}-89abcdef/node_modules/x`]) {
    await mkdir(copy, { recursive: true });
    await writeFile(path.join(copy, 'index.js'), '');
    await chmod(path.join(copy, 'index.js'), 0o444);
    await chmod(copy, 0o555);
  }
  // Not ours: another repository's, and a name that only looks alike.
  await mkdir(path.join(parent, `${name}x-consort-proof-${dead}-0123abcd`));
  await mkdir(path.join(parent, `${name}-consort-proof-keep`));
  const ws = bindWorkspace(await openWorkspace(dir));
  const removed = await removeStaleTrees(ws, localProcessRunner);
  expect(removed.sort()).toEqual(
    [
      `${name}-consort-proof-${dead}-0123abcd`,
      `${name}-consort-proof-${dead}-0123abcd-deps`,
      `${name}-consort-deps-${dead}-89abcdef`,
      `${name}-consort-turn-0007-consort-proof-${dead}-4567cdef`,
    ].sort(),
  );
  const left = (await readdir(parent)).filter((f) => f.startsWith(name) && f !== name).sort();
  expect(left).toEqual(
    [
      `${name}-consort-proof-${process.pid}-0123abcd`,
      `${name}-consort-proof-keep`,
      `${name}x-consort-proof-${dead}-0123abcd`,
    ].sort(),
  );
  const registered = (await exec('git', ['-C', dir, 'worktree', 'list', '--porcelain'])).stdout;
  expect(registered).not.toContain(gone);
  expect(registered).not.toContain(attemptGone);
  expect(registered).toContain(live);
  await ws.removeWorktree(live);
  for (const f of [`${name}-consort-proof-keep`, `${name}x-consort-proof-${dead}-0123abcd`, name])
    await rm(path.join(parent, f), { recursive: true, force: true });
});
