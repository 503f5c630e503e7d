/**
 * Proofs judge what is committed, in a place no agent touched. Each proof runs in a fresh git
 * worktree of the commit being proven (next to the repository, so relative paths such as
 * `../../node_modules` resolve as in the checkout): ignored files, index flags (`skip-worktree`,
 * `assume-unchanged`), a report left from an earlier run and anything else outside the commit
 * cannot reach it. Dependencies come from a copy of the workspace's install made before the
 * run's first turn, so a patched `node_modules/jest/bin/jest.js` (ignored, so invisible to the
 * scope check) is not what runs; each proof gets its own copy of that pristine one, so code a proof
 * ran (the driver's, in GREEN) that rewrote its dependencies cannot reach a later proof; every
 * report path is emptied before the suite starts.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, lstat, mkdir, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { glob } from 'tinyglobby';
import { addWorktree, type GitWorkspace, openWorkspace, removeWorktree } from '../../git/workspace.js';

const run = promisify(execFile);

/** Ignored dependency folders a proof needs, relative to the workspace. */
const DEPENDENCY_DIRS = ['node_modules'];

export interface Dependencies {
  /** Where the copies live (removed by `dispose`). */
  root: string;
  /** Workspace-relative folder → the pristine copy (or the outside install a symlink pointed to). */
  links: Map<string, string>;
  /** The folders of `links` that are pristine copies: each proof gets a copy of its own. */
  copied: Set<string>;
  dispose(): Promise<void>;
}

async function copyTree(from: string, to: string): Promise<void> {
  await mkdir(path.dirname(to), { recursive: true });
  // cp -a keeps the install's own symlinks (.bin/) as they are; reflinks make it cheap where the filesystem can.
  if (process.platform === 'linux') await run('cp', ['-a', '--reflink=auto', from, to]);
  else await cp(from, to, { recursive: true, verbatimSymlinks: true });
}

/**
 * The pristine copy, taken before any agent of this run works. A dependency folder that is itself
 * a symlink (to an install outside the repository) is linked as it is: it was never the agent's
 * to write, and copying it would copy the world.
 */
export async function snapshotDependencies(ws: GitWorkspace): Promise<Dependencies> {
  const root = `${ws.top}-consort-deps-${randomBytes(4).toString('hex')}`;
  const links = new Map<string, string>();
  const copied = new Set<string>();
  for (const rel of DEPENDENCY_DIRS) {
    const source = path.join(ws.dir, rel);
    const info = await lstat(source).catch(() => undefined);
    if (info === undefined) continue;
    if (info.isSymbolicLink()) {
      links.set(rel, source);
      continue;
    }
    if (!info.isDirectory()) continue;
    const target = path.join(root, rel);
    await copyTree(source, target);
    links.set(rel, target);
    copied.add(rel);
  }
  return { root, links, copied, dispose: () => rm(root, { recursive: true, force: true }) };
}

export interface CleanTree {
  ws: GitWorkspace;
  dispose(): Promise<void>;
}

/** A fresh worktree of `commit` with the pristine dependencies linked in and the report paths empty. */
export async function cleanTree(
  ws: GitWorkspace,
  commit: string,
  deps: Dependencies | undefined,
  reports: readonly string[],
): Promise<CleanTree> {
  const dir = `${ws.top}-consort-proof-${randomBytes(4).toString('hex')}`;
  const own = `${dir}-deps`;
  const dispose = async (): Promise<void> => {
    await removeWorktree(ws, dir);
    await rm(own, { recursive: true, force: true });
  };
  await addWorktree(ws, dir, commit);
  try {
    const clean = await openWorkspace(path.join(dir, ws.prefix));
    for (const [rel, pristine] of deps?.links ?? []) {
      const at = path.join(clean.dir, rel);
      // A committed file or folder at that path is the commit's own (and the suite's to use).
      if ((await lstat(at).catch(() => undefined)) !== undefined) continue;
      // This proof's own copy of the pristine install (a reflink where the filesystem can).
      const target = deps!.copied.has(rel) ? path.join(own, rel) : pristine;
      if (target !== pristine) await copyTree(pristine, target);
      await symlink(target, at, 'dir');
    }
    // A report in the commit (or written by a checkout filter) would be read as this run's.
    const stale = await glob([...reports], { cwd: clean.dir, absolute: true, onlyFiles: false, dot: true });
    await Promise.all(stale.map((file) => rm(file, { recursive: true, force: true })));
    return { ws: clean, dispose };
  } catch (e) {
    await dispose();
    throw e;
  }
}
