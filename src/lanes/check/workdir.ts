/**
 * Migration sets written to a scratch directory for node-pg-migrate, which loads files from disk.
 * Inside the project's node_modules/.cache/consort when there is one, so JS migrations that
 * import packages resolve them exactly as in the project (a real directory inside the repository,
 * never a link a pull request committed); the system temp directory otherwise.
 * Every run has a directory of its own (mkdtemp, mode 0700: never a directory shared between runs
 * or users), named with its process id, so a run removes what killed runs left.
 */
import { lstat, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { MigrationFile } from '../../migrations/files.js';
import type { GitRepo } from '../../ports/git.js';
import { asPackage, SCRATCH_IN_MODULES, type MigrationsPackage } from '../../migrations/project-packages.js';
import { processAlive } from '../../core/process-alive.js';
import { resolvedInside } from '../../core/read-regular.js';

export interface Workdir {
  root: string;
  /** Write a migration set; returns the directory to hand to the runner and the base for reported paths. */
  write(
    side: string,
    migrationsDir: string,
    files: readonly MigrationFile[],
  ): Promise<{ dir: string; relativeTo: string }>;
  /**
   * The whole tree of a commit, so migrations that import project code (`require('../src/kinds')`)
   * find it; packages still resolve through the workspace's node_modules above the scratch root.
   */
  extract(side: string, migrationsDir: string, repo: string, sha: string): Promise<{ dir: string; relativeTo: string }>;
  dispose(): Promise<void>;
}

const PREFIX = 'consort-check-';

/** Scratch directories of runs whose process is gone (killed before their `finally`). */
async function sweepDead(parent: string): Promise<void> {
  const entries = await readdir(parent).catch(() => [] as string[]);
  await Promise.all(
    entries.map(async (name) => {
      const pid = Number(/^consort-check-(\d+)-/.exec(name)?.[1]);
      if (Number.isInteger(pid) && pid > 0 && !processAlive(pid))
        await rm(path.join(parent, name), { recursive: true, force: true }).catch(() => undefined);
    }),
  );
}

/** A real directory (never a link to one) at `p`. */
const isRealDir = (p: string): Promise<boolean> =>
  lstat(p).then(
    (st) => st.isDirectory() && !st.isSymbolicLink(),
    () => false,
  );

/**
 * The node_modules nearest the package that owns the migrations, up to the workspace: in a
 * monorepo, `packages/db/node_modules` when the package has its own install (so a migration's
 * imports of the package's dependencies resolve), else the root's hoisted one. Undefined when the
 * nearest is not a real directory inside the repository: a pull request can commit `node_modules`
 * as a link to anywhere, and the check would write its migrations (and sweep old scratch folders) there.
 */
async function nearestModules(at: MigrationsPackage): Promise<string | undefined> {
  const root = path.resolve(at.root);
  for (let d = path.resolve(at.dir); ; d = path.dirname(d)) {
    const modules = path.join(d, 'node_modules');
    if ((await lstat(modules).catch(() => undefined)) !== undefined)
      return (await isRealDir(modules)) && resolvedInside(root, modules) !== null ? modules : undefined;
    if (d === root || d === path.dirname(d)) return undefined;
  }
}

/**
 * `node_modules/.cache/consort`, made one component at a time and each checked to be a real
 * directory (a committed `node_modules/.cache` link would lead out of the repository); undefined
 * when one is not, or cannot be made.
 */
async function scratchIn(modules: string, root: string): Promise<string | undefined> {
  let dir = modules;
  for (const name of SCRATCH_IN_MODULES) {
    dir = path.join(dir, name);
    await mkdir(dir).catch(() => undefined); // there already, or not makeable: the check below decides
    if (!(await isRealDir(dir))) return undefined;
  }
  return resolvedInside(root, dir) === null ? undefined : dir;
}

/**
 * `at`: the workspace, or the package of it that owns the migrations (migrationsPackage). `git` is
 * needed only by `extract` (the TDD lane writes the base's migrations it read itself).
 */
export async function createWorkdir(
  at: string | MigrationsPackage,
  git?: Pick<GitRepo, 'extractCommit'>,
): Promise<Workdir> {
  const owner = asPackage(at);
  const modules = await nearestModules(owner);
  const parent = (modules === undefined ? undefined : await scratchIn(modules, owner.root)) ?? os.tmpdir();
  await sweepDead(parent);
  const root = await mkdtemp(path.join(parent, `${PREFIX}${process.pid}-`));
  return {
    root,
    async write(side, migrationsDir, files) {
      const relativeTo = path.join(root, side);
      const dir = path.join(relativeTo, migrationsDir);
      await mkdir(dir, { recursive: true });
      for (const f of files) await writeFile(path.join(dir, path.posix.basename(f.file)), f.content);
      return { dir, relativeTo };
    },
    async extract(side, migrationsDir, repo, sha) {
      const relativeTo = path.join(root, side);
      await mkdir(relativeTo, { recursive: true });
      if (!git) throw new Error('createWorkdir: extract needs a GitRepo');
      await git.extractCommit(repo, sha, relativeTo);
      const dir = path.join(relativeTo, migrationsDir);
      await mkdir(dir, { recursive: true });
      return { dir, relativeTo };
    },
    dispose: () => rm(root, { recursive: true, force: true }),
  };
}
