/**
 * Proofs judge what is committed, in a place no agent touched. Each proof runs in a fresh git
 * worktree of the commit being proven (next to the repository, so relative paths such as
 * `../../node_modules` resolve as in the checkout): ignored files, index flags (`skip-worktree`,
 * `assume-unchanged`), a report left from an earlier run and anything else outside the commit
 * cannot reach it. Dependencies come from a pristine install — the one kept for the npm lockfile
 * in the git directory (made once, reused by later runs), else a copy of the workspace's install
 * made before the run's first turn — so a patched `node_modules/jest/bin/jest.js` (ignored, so
 * invisible to the scope check) is not what runs; code a proof ran (the driver's, in GREEN) that
 * rewrote its dependencies cannot reach a later proof: under bubblewrap the pristine install is
 * bound read-only at the proof's own path (which stops root; its own path is bound read-only too),
 * elsewhere each proof gets a copy of it, read-only by its modes. Every report path is emptied
 * before the suite starts. The cache folders runners write (`node_modules/.cache`,
 * `node_modules/.vite`) are each proof's own: a copy of the pristine's, bound over it, or in the copy.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  chmod,
  cp,
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  realpath,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { glob } from 'tinyglobby';
import { z } from 'zod';
import { childEnv } from '../../core/child-env.js';
import { ConsortError } from '../../core/errors.js';
import { escapeRegExp } from '../../core/regexp.js';
import type { Bind, ProcessRunner } from '../../ports/process.js';
import type { Workspace } from '../../ports/workspace.js';
import { processAlive } from '../../core/process-alive.js';

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

/**
 * A writable copy of a cache folder of the pristine install. Most are empty (the mount points
 * cacheMountPoints made): then an empty folder, without starting `cp` and `chmod` — two processes
 * per folder and per proof tree on the TDD lane's critical path (tens of milliseconds each on a
 * busy two-core runner).
 */
async function writableCopy(run: Tool, from: string, to: string): Promise<void> {
  const entries = await readdir(from).catch(() => undefined);
  if (entries !== undefined && entries.length === 0) {
    await mkdir(to, { recursive: true });
    return;
  }
  await copyTree(run, from, to);
  await run('chmod', ['-R', 'u+w', to]);
}

/**
 * The cache folders a proof's own copies are bound over (cleanTree), made in a pristine install
 * that lacks them: bubblewrap binds only onto a folder that exists, and this one is read-only.
 */
async function cacheMountPoints(folder: string): Promise<void> {
  const missing = CACHE_DIRS.filter((c) => !existsSync(path.join(folder, c)));
  if (missing.length === 0) return;
  await chmod(folder, 0o755);
  for (const c of missing) await mkdir(path.join(folder, c), { recursive: true });
}

/** Nobody may write under `dir` (symlinks are not followed: what they point to is not ours). */
const readOnly = (run: Tool, dir: string) => run('chmod', ['-R', 'a-w', dir]);
/** Writable again, so it can be removed. */
const removable = async (run: Tool, dir: string): Promise<void> => {
  if ((await lstat(dir).catch(() => undefined)) === undefined) return;
  await run('chmod', ['-R', 'u+w', dir]).catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
};

/** npm's lockfiles, in the order npm reads them. */
const LOCKFILES = ['npm-shrinkwrap.json', 'package-lock.json'];

const LockSchema = z.object({
  packages: z.record(
    z.string(),
    z.object({ version: z.string().optional(), resolved: z.string().optional(), integrity: z.string().optional() }),
  ),
});

/** Package folder (`node_modules/jest`, `node_modules/a/node_modules/b`) → version, resolved and integrity. */
function identities(text: string): Map<string, string> | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const lock = LockSchema.safeParse(parsed);
  if (!lock.success) return null;
  const out = new Map<string, string>();
  for (const [rel, p] of Object.entries(lock.data.packages))
    if (rel.startsWith('node_modules/')) out.set(rel, `${p.version ?? ''} ${p.resolved ?? ''} ${p.integrity ?? ''}`);
  return out;
}

interface Installed {
  /** The store's folder for this lockfile on this runtime. */
  entry: string;
  /** Its siblings' parent (other lockfiles, same runtime). */
  shelf: string;
  packages: Map<string, string>;
}

/**
 * Which kept install the workspace's `node_modules` is, if npm made it: the tracked lockfile
 * (never an ignored file an agent could rewrite) and the runtime it was built for name it. npm's
 * own record of what it installed (`node_modules/.package-lock.json`) must agree with that lockfile
 * package by package. Null when the workspace has no npm lockfile and npm record (yarn, pnpm, an
 * npm before 7), or when they disagree and no install was kept yet.
 */
async function installedFromLockfile(ws: Workspace): Promise<Installed | null> {
  let text: string | undefined;
  for (const name of LOCKFILES) {
    text = await readFile(path.join(ws.dir, name), 'utf8').catch(() => undefined);
    if (text !== undefined) break;
  }
  if (text === undefined) return null;
  const packages = identities(text);
  const hidden = await readFile(path.join(ws.dir, 'node_modules', '.package-lock.json'), 'utf8').catch(() => undefined);
  if (packages === null || hidden === undefined) return null;
  const installed = identities(hidden) ?? new Map<string, string>();
  const runtime = createHash('sha256')
    .update(`${process.platform} ${process.arch} ${process.versions.modules} ${ws.dir}`)
    .digest('hex')
    .slice(0, 16);
  const shelf = path.join(ws.gitDir, 'consort', 'dependencies', runtime);
  // npm leaves out what it did not install (optional packages for another platform, `--omit=dev`);
  // whatever it did install must be what the lockfile says.
  const differ = [...installed].filter(([rel, id]) => packages.get(rel) !== id).map(([rel]) => rel);
  if (differ.length > 0) {
    // No install kept yet (a fresh checkout, the Action's job after switching to the pull request's
    // branch): the workspace's install, copied as it is, as before any run. Once one is kept, an
    // install that no longer matches its lockfile is refused: it may be an agent's doing.
    if ((await readdir(shelf).catch(() => [])).length === 0) return null;
    throw new ConsortError(
      'invalid-input',
      `node_modules is not the install package-lock.json describes (${differ.slice(0, 3).join(', ')}${differ.length > 3 ? ', …' : ''} differ${differ.length === 1 ? 's' : ''}).`,
      { hint: 'Install from the lockfile (npm ci) before running the TDD lane.' },
    );
  }
  return { entry: path.join(shelf, createHash('sha256').update(text).digest('hex').slice(0, 32)), shelf, packages };
}

const IDENTITIES = 'identities.json';
const USED = 'used';
/** Kept installs not used for this long are removed, and no more than this many are kept per runtime. */
const KEEP_MS = 14 * 24 * 3600 * 1000;
const KEEP_COUNT = 3;

/** The kept install of this runtime used last before, other than `entry`, with its packages. */
async function previousInstall(
  run: Tool,
  shelf: string,
  entry: string,
): Promise<{ dir: string; packages: Map<string, string> } | null> {
  const kept: { dir: string; at: number }[] = [];
  for (const name of await readdir(shelf).catch(() => [] as string[])) {
    const dir = path.join(shelf, name);
    if (dir === entry || name.includes('.')) continue;
    const at = (await stat(path.join(dir, USED)).catch(() => null))?.mtimeMs;
    if (at !== undefined) kept.push({ dir, at });
  }
  kept.sort((x, y) => y.at - x.at);
  // Each is a whole node_modules: the few used last stay, none unused for long.
  for (const [i, { dir, at }] of kept.entries())
    if (i >= KEEP_COUNT - 1 || Date.now() - at > KEEP_MS) await removable(run, dir).catch(() => undefined);
  const best = kept[0];
  if (best === undefined || Date.now() - best.at > KEEP_MS) return null;
  const text = await readFile(path.join(best.dir, IDENTITIES), 'utf8').catch(() => undefined);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text ?? 'null');
  } catch {
    return null;
  }
  const packages = z.record(z.string(), z.string()).safeParse(parsed);
  return packages.success ? { dir: best.dir, packages: new Map(Object.entries(packages.data)) } : null;
}

/**
 * A new kept install, from the workspace's `node_modules`: every package the lockfile names as the
 * previous kept install had it (same version, source and integrity) is taken from that install, not
 * from the workspace, whose ignored files an agent of an earlier run could have changed; only
 * packages the new lockfile changed (which npm has just installed) come from the workspace.
 */
async function keepInstall(run: Tool, ws: Workspace, installed: Installed): Promise<void> {
  const building = `${installed.entry}.${randomBytes(4).toString('hex')}`;
  await copyTree(run, path.join(ws.dir, 'node_modules'), path.join(building, 'node_modules'));
  const previous = await previousInstall(run, installed.shelf, installed.entry);
  if (previous !== null) {
    const carried = [...installed.packages].filter(([rel, id]) => previous.packages.get(rel) === id).map(([r]) => r);
    for (const rel of carried) {
      const from = path.join(previous.dir, rel);
      const to = path.join(building, rel);
      if ((await lstat(from).catch(() => null)) === null) continue;
      // The package's own files; packages nested in its node_modules/ are judged on their own.
      for (const name of await readdir(to).catch(() => [] as string[]))
        if (name !== 'node_modules') await rm(path.join(to, name), { recursive: true, force: true });
      await mkdir(to, { recursive: true });
      for (const name of await readdir(from))
        if (name !== 'node_modules')
          await cp(path.join(from, name), path.join(to, name), {
            recursive: true,
            verbatimSymlinks: true,
            preserveTimestamps: true,
          });
    }
    // The commands npm links in node_modules/.bin, for the packages carried over.
    const bin = path.join(previous.dir, 'node_modules', '.bin');
    const kept = new Set(carried);
    for (const name of await readdir(bin).catch(() => [] as string[])) {
      const target = await readlink(path.join(bin, name)).catch(() => null);
      if (target === null) continue;
      const owner = [...kept].find((rel) => path.join('node_modules', '.bin', target).startsWith(`${rel}/`));
      if (owner === undefined) continue;
      await rm(path.join(building, 'node_modules', '.bin', name), { force: true });
      await mkdir(path.join(building, 'node_modules', '.bin'), { recursive: true });
      await symlink(target, path.join(building, 'node_modules', '.bin', name));
    }
  }
  await writeFile(path.join(building, IDENTITIES), JSON.stringify(Object.fromEntries(installed.packages)));
  await rename(building, installed.entry).catch(async () => {
    // Another run kept the same install first: use that one.
    await removable(run, building);
  });
}

/**
 * The pristine copy, taken before any agent of this run works. With an npm lockfile it is the
 * install kept for that lockfile in the repository's git directory (under bubblewrap no agent can
 * write there), made once per lockfile and runtime and reused by every later run: a package an
 * agent changed in the workspace's (ignored) `node_modules` during an earlier run never reaches it.
 * Without one it is a copy of the workspace's install, taken at the run's start. A dependency folder
 * that is itself a symlink to an install outside the repository is linked, where it leads at the
 * run's start (the link is the work tree's): that install was never the agent's to write, and
 * copying it would copy the world.
 */
export async function snapshotDependencies(ws: Workspace, processes: ProcessRunner): Promise<Dependencies> {
  const run = tool(processes);
  const links = new Map<string, string>();
  const copied = new Set<string>();
  const source = path.join(ws.dir, 'node_modules');
  const info = await lstat(source).catch(() => undefined);
  const installed = info?.isDirectory() ? await installedFromLockfile(ws) : null;
  if (installed !== null) {
    if ((await lstat(installed.entry).catch(() => null)) === null) await keepInstall(run, ws, installed);
    const root = installed.entry;
    await writeFile(path.join(root, USED), '').catch(async () => {
      await chmod(root, 0o755);
      await writeFile(path.join(root, USED), '');
    });
    await cacheMountPoints(path.join(root, 'node_modules'));
    await readOnly(run, root);
    links.set('node_modules', path.join(root, 'node_modules'));
    copied.add('node_modules');
    // Kept for the next run; its owner may write it again between runs (and remove it).
    return { root, links, copied, dispose: () => run('chmod', ['-R', 'u+w', root]).catch(() => undefined) };
  }
  const root = `${ws.top}-consort-deps-${process.pid}-${randomBytes(4).toString('hex')}`;
  for (const rel of DEPENDENCY_DIRS) {
    let from = path.join(ws.dir, rel);
    let at = await lstat(from).catch(() => undefined);
    if (at === undefined) continue;
    if (at.isSymbolicLink()) {
      // Where it leads now, before any turn: the link is the work tree's, and a turn can point it
      // elsewhere (a proof's `node_modules` that led through it would follow). One that leads into
      // the repository leads to what agents write: copied, as a folder there is.
      const real = await realpath(from).catch(() => undefined);
      if (real === undefined) continue;
      const within = path.relative(await realpath(ws.top), real);
      if (within.startsWith('..') || path.isAbsolute(within)) {
        links.set(rel, real);
        continue;
      }
      from = real;
      at = await lstat(from);
    }
    if (!at.isDirectory()) continue;
    const target = path.join(root, rel);
    await copyTree(run, from, target);
    await cacheMountPoints(target);
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
  /** Under bubblewrap: the pristine install shown read-only in this proof's tree, with cache folders of its own. */
  binds: Bind[];
  dispose(): Promise<void>;
}

/** A new proof worktree's folder, next to the repository, named with this process's id (see removeStaleTrees). */
const proofDir = (ws: Workspace): string => `${ws.top}-consort-proof-${process.pid}-${randomBytes(4).toString('hex')}`;

/**
 * What runs of this workspace that were killed (no `finally` ran) left next to it: proof worktrees
 * with their registrations, their dependency copies, and pristine copies. Each name carries the
 * id of the process that made it; only those whose process is gone are removed. Returns their names.
 */
export async function removeStaleTrees(ws: Workspace, processes: ProcessRunner): Promise<string[]> {
  const run = tool(processes);
  const parent = path.dirname(ws.top);
  const own = escapeRegExp(path.basename(ws.top));
  // An experiment's attempt is a worktree named `<top>-consort-turn-<n>`: its proofs' trees carry that name.
  const pattern = new RegExp(`^${own}(?:-consort-turn-\\d+)?-consort-(proof|deps)-(\\d+)-[0-9a-f]{8}(-deps)?$`);
  const removed: string[] = [];
  for (const name of await readdir(parent).catch(() => [] as string[])) {
    const m = pattern.exec(name);
    if (m === null || processAlive(Number(m[2]))) continue;
    const full = path.join(parent, name);
    if (m[1] === 'proof' && m[3] === undefined) await ws.removeWorktree(full);
    await removable(run, full);
    removed.push(name);
  }
  return removed;
}

/**
 * The next proof's worktree, begun ahead (Workspace.prepareWorktree): the turn before a proof
 * starts it at its base commit while the agent works, and the proof takes it.
 */
export interface ProofTrees {
  /** Begin the next proof's worktree at `commit`; one begun earlier and never taken is removed. */
  prepare(commit: string): void;
  /** The folder of the worktree begun for this proof (undefined: none). */
  take(): string | undefined;
  /** Remove one begun and never taken (the run's end). */
  dispose(): Promise<void>;
}

export function proofTrees(ws: Workspace): ProofTrees {
  let next: string | undefined;
  const drop = async (dir: string | undefined): Promise<void> => {
    if (dir !== undefined) await ws.removeWorktree(dir);
  };
  return {
    prepare(commit) {
      if (ws.prepareWorktree === undefined) return;
      const earlier = next;
      next = proofDir(ws);
      void ws.prepareWorktree(next, commit);
      void drop(earlier).catch(() => undefined);
    },
    take() {
      const dir = next;
      next = undefined;
      return dir;
    },
    async dispose() {
      const dir = next;
      next = undefined;
      await drop(dir);
    },
  };
}

/**
 * A fresh worktree of `commit` with the pristine dependencies linked in and the report paths empty;
 * at `dir` when a worktree was begun there for it (ProofTrees).
 */
export async function cleanTree(
  ws: Workspace,
  commit: string,
  deps: Dependencies | undefined,
  reports: readonly string[],
  processes: ProcessRunner,
  prepared?: string,
): Promise<CleanTree> {
  const run = tool(processes);
  const dir = prepared ?? proofDir(ws);
  // The proof's dependency copies: a name of its own, not derived from `dir` (a worktree begun ahead
  // is listed next to the repository while the agent works, and `<dir>-deps` planted there, a
  // folder or a link, would be copied into, linked and removed), made here or not used at all.
  const own = `${proofDir(ws)}-deps`;
  let ownMade = false;
  const makeOwn = async (): Promise<void> => {
    if (ownMade) return;
    await mkdir(own); // fails when anything is there already
    ownMade = true;
  };
  const dispose = async (): Promise<void> => {
    // The proof's result does not wait for its files to go (the run's end does: Workspace.settle).
    await ws.removeWorktree(dir, { folderLater: true });
    if (ownMade) await removable(run, own);
  };
  try {
    const clean = await ws.addWorktree(dir, commit);
    // The pristine install itself, read-only to the suite wherever bubblewrap binds (root ignores its modes).
    const locked: string[] = deps?.copied.size ? [deps.root] : [];
    const writable: string[] = [];
    const binds: Bind[] = [];
    for (const [rel, pristine] of deps?.links ?? []) {
      const at = path.join(clean.dir, rel);
      // A committed file or folder at that path is the commit's own (and the suite's to use).
      if ((await lstat(at).catch(() => undefined)) !== undefined) continue;
      const target = deps!.copied.has(rel) ? path.join(own, rel) : pristine;
      if (target !== pristine) await makeOwn();
      if (target !== pristine && processes.canBind?.() && CACHE_DIRS.every((c) => existsSync(path.join(pristine, c)))) {
        // Under bubblewrap the pristine install is shown at this proof's own path, read-only (which
        // stops root), instead of copied: a copy is a full one on ext4 (13 s for 27,000 files here).
        // Its cache folders are this proof's own copies of the pristine's, bound over them writable.
        await mkdir(target, { recursive: true });
        binds.push({ source: pristine, target });
        const caches = CACHE_DIRS.map((cache) => ({ cache, ownCache: path.join(own, 'caches', rel, cache) }));
        await Promise.all(caches.map(({ cache, ownCache }) => writableCopy(run, path.join(pristine, cache), ownCache)));
        for (const { cache, ownCache } of caches)
          binds.push({ source: ownCache, target: path.join(target, cache), writable: true });
      } else if (target !== pristine) {
        // This proof's own copy of the pristine install (a reflink where the filesystem can).
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
    return { ws: clean, readOnly: locked, writable, binds, dispose };
  } catch (e) {
    await dispose();
    throw e;
  }
}
