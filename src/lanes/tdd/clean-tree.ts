/**
 * Proofs judge what is committed, in a place no agent touched. Each proof runs in a fresh git
 * worktree of the commit being proven (next to the repository, so relative paths such as
 * `../../node_modules` resolve as in the checkout): ignored files, index flags (`skip-worktree`,
 * `assume-unchanged`), a report left from an earlier run and anything else outside the commit
 * cannot reach it. Dependencies come from a copy of the workspace's install made before the
 * run's first turn, so a patched `node_modules/jest/bin/jest.js` (ignored, so invisible to the
 * scope check) is not what runs; each proof gets its own copy of that pristine one, so code a proof
 * ran (the driver's, in GREEN) that rewrote its dependencies cannot reach a later proof; every
 * report path is emptied before the suite starts. Both copies are read-only (no write permission
 * for anyone; under bubblewrap the proof's copy is also bound read-only, which stops root), except
 * the cache folders runners write (`node_modules/.cache`, `node_modules/.vite`) in a proof's copy.
 */
import { randomBytes } from 'node:crypto';
import { chmod, cp, lstat, mkdir, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { glob } from 'tinyglobby';
import { childEnv } from '../../core/child-env.js';
import { ConsortError } from '../../core/errors.js';
import type { ProcessRunner } from '../../ports/process.js';
import type { Workspace } from '../../ports/workspace.js';

/** `cp` and `chmod`, started by the lane's ProcessRunner; a non-zero exit throws. */
type Tool = (program: 'cp' | 'chmod', args: string[]) => Promise<void>;

function tool(processes: ProcessRunner): Tool {
  return async (program, args) => {
    const r = await processes.run({
      command: [program, ...args],
      cwd: '/',
      env: childEnv(),
      maxOutputBytes: 16 * 1024,
    });
    if (r.exitCode !== 0)
      throw new ConsortError(
        'internal',
        `${program} ${args.join(' ')} failed: ${r.output.trim() || `exit ${r.exitCode}`}`,
        {
          hint: 'Check the disk space and the permissions next to the repository.',
        },
      );
  };
}

/** Ignored dependency folders a proof needs, relative to the workspace. */
const DEPENDENCY_DIRS = ['node_modules'];
/** Inside a dependency folder: where runners keep caches (babel, vite and vitest write there). */
const CACHE_DIRS = ['.cache', '.vite'];

export interface Dependencies {
  /** Where the copies live (removed by `dispose`). */
  root: string;
  /** Workspace-relative folder → the pristine copy (or the outside install a symlink pointed to). */
  links: Map<string, string>;
  /** The folders of `links` that are pristine copies: each proof gets a copy of its own. */
  copied: Set<string>;
  dispose(): Promise<void>;
}

async function copyTree(run: Tool, from: string, to: string): Promise<void> {
  await mkdir(path.dirname(to), { recursive: true });
  // cp -a keeps the install's own symlinks (.bin/) as they are; reflinks make it cheap where the filesystem can.
  if (process.platform === 'linux') await run('cp', ['-a', '--reflink=auto', from, to]);
  else await cp(from, to, { recursive: true, verbatimSymlinks: true });
}

/** Nobody may write under `dir` (symlinks are not followed: what they point to is not ours). */
const readOnly = (run: Tool, dir: string) => run('chmod', ['-R', 'a-w', dir]);
/** Writable again, so it can be removed. */
const removable = async (run: Tool, dir: string): Promise<void> => {
  if ((await lstat(dir).catch(() => undefined)) === undefined) return;
  await run('chmod', ['-R', 'u+w', dir]).catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
};

/**
 * The pristine copy, taken before any agent of this run works. A dependency folder that is itself
 * a symlink (to an install outside the repository) is linked as it is: it was never the agent's
 * to write, and copying it would copy the world.
 */
export async function snapshotDependencies(ws: Workspace, processes: ProcessRunner): Promise<Dependencies> {
  const run = tool(processes);
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
    await copyTree(run, source, target);
    links.set(rel, target);
    copied.add(rel);
  }
  if (copied.size > 0) await readOnly(run, root);
  return { root, links, copied, dispose: () => removable(run, root) };
}

export interface CleanTree {
  ws: Workspace;
  /** This proof's dependency copies (read-only) and the cache folders inside them that are not. */
  readOnly: string[];
  writable: string[];
  dispose(): Promise<void>;
}

/** A fresh worktree of `commit` with the pristine dependencies linked in and the report paths empty. */
export async function cleanTree(
  ws: Workspace,
  commit: string,
  deps: Dependencies | undefined,
  reports: readonly string[],
  processes: ProcessRunner,
): Promise<CleanTree> {
  const run = tool(processes);
  const dir = `${ws.top}-consort-proof-${randomBytes(4).toString('hex')}`;
  const own = `${dir}-deps`;
  const dispose = async (): Promise<void> => {
    await ws.removeWorktree(dir);
    await removable(run, own);
  };
  try {
    const clean = await ws.addWorktree(dir, commit);
    const locked: string[] = [];
    const writable: string[] = [];
    for (const [rel, pristine] of deps?.links ?? []) {
      const at = path.join(clean.dir, rel);
      // A committed file or folder at that path is the commit's own (and the suite's to use).
      if ((await lstat(at).catch(() => undefined)) !== undefined) continue;
      // This proof's own copy of the pristine install (a reflink where the filesystem can).
      const target = deps!.copied.has(rel) ? path.join(own, rel) : pristine;
      if (target !== pristine) {
        await copyTree(run, pristine, target); // read-only, as the pristine copy is
        await chmod(target, 0o755);
        for (const cache of CACHE_DIRS) {
          const folder = path.join(target, cache);
          await run('chmod', ['-R', 'u+w', folder]).catch(() => mkdir(folder));
          writable.push(folder);
        }
        await chmod(target, 0o555);
        locked.push(target);
      }
      await symlink(target, at, 'dir');
    }
    // A report in the commit (or written by a checkout filter) would be read as this run's.
    const stale = await glob([...reports], { cwd: clean.dir, absolute: true, onlyFiles: false, dot: true });
    await Promise.all(stale.map((file) => rm(file, { recursive: true, force: true })));
    return { ws: clean, readOnly: locked, writable, dispose };
  } catch (e) {
    await dispose();
    throw e;
  }
}
