/**
 * Migration sets written to a scratch directory for node-pg-migrate, which loads files from disk.
 * Inside the project's node_modules/.cache/consort when there is one, so JS migrations that
 * import packages resolve them exactly as in the project (a real directory inside the repository,
 * never a link a pull request committed); the system temp directory otherwise, and always for the
 * TDD lane's baseline (OutsideWorkTree), whose packages come from the run's pristine install.
 * Every run has a directory of its own (mkdtemp, mode 0700: never a directory shared between runs
 * or users), named with its process id, so a run removes what killed runs left.
 */
import { lstat, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ConsortError } from '../../core/errors.js';
import type { MigrationEntry, MigrationFile } from '../../migrations/files.js';
import type { GitRepo } from '../../ports/git.js';
import {
  asPackage,
  SCRATCH_IN_MODULES,
  workspacePackages,
  type MigrationsPackage,
} from '../../migrations/project-packages.js';
import { processAlive } from '../../core/process-alive.js';
import { readRegularFile, resolvedInside } from '../../core/read-regular.js';
import { configFileToEdit } from '../../config/files.js';

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
   * `planned`: the files of `migrationsDir` the plan read from the commit (filesAt); what was
   * written there must be exactly those, byte for byte, or nothing runs (sameAsPlanned).
   * `leftOut`: the commit's links not written (they lead outside it, nowhere, or loop).
   */
  extract(
    side: string,
    migrationsDir: string,
    repo: string,
    sha: string,
    planned: readonly MigrationEntry[],
  ): Promise<{ dir: string; relativeTo: string; leftOut: string[] }>;
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
 * The files node-pg-migrate will load from `dir` (files and links, as its getMigrationFilePaths
 * lists them) are the ones the plan read and linted, with the same text: a materialisation that
 * dropped, added or rewrote one (git archive's `export-ignore` and `export-subst` did) would run
 * what nobody checked. Throws naming the first file that differs.
 */
async function sameAsPlanned(
  relativeTo: string,
  dir: string,
  planned: readonly MigrationEntry[],
  sha: string,
): Promise<void> {
  const differs = (file: string, how: string) =>
    new ConsortError('internal', `The migration ${file} written for the run ${how} (commit ${sha.slice(0, 12)}).`, {
      hint: 'Nothing was migrated: the run would not apply what the plan read. This is a Consort bug: report it.',
    });
  const want = new Map(planned.map((f) => [path.posix.basename(f.file), f]));
  const dirents = await readdir(dir, { withFileTypes: true });
  for (const d of dirents)
    if ((d.isFile() || d.isSymbolicLink()) && !want.has(d.name))
      throw differs(path.relative(relativeTo, path.join(dir, d.name)), 'is not in the commit');
  for (const [name, f] of want) {
    const full = path.join(dir, name);
    const real = resolvedInside(relativeTo, full);
    const bytes = real === null ? null : readRegularFile(real);
    if (bytes === null) throw differs(f.file, 'is missing');
    if (bytes.toString('utf8') !== f.content) throw differs(f.file, "differs from the commit's");
  }
}

/**
 * In a commit's extracted tree, its own workspace packages where a migration's `import … from
 * '@acme/shared'` finds them first: `<tree>/node_modules/@acme/shared` → `<tree>/packages/shared`.
 * Without them the import resolves through the working tree's install, to the working tree's
 * packages/shared, and base's migrations would run with the change's code. A package the commit
 * does not hold, or a name its tree already has in its own node_modules, is left as it is.
 */
async function linkWorkspacePackages(tree: string, packages: Map<string, string>): Promise<void> {
  for (const [name, rel] of packages) {
    const target = path.join(tree, rel);
    if (readRegularFile(path.join(target, 'package.json')) === null) continue;
    const link = path.join(tree, 'node_modules', name);
    if ((await lstat(link).catch(() => undefined)) !== undefined) continue;
    await mkdir(path.dirname(link), { recursive: true });
    await symlink(path.relative(path.dirname(link), target), link, 'dir');
  }
}

/**
 * Where the TDD lane's baseline resolves packages: `modules`, the run's pristine install
 * (clean-tree.ts), or none (no install was copied). The work tree's `node_modules` is an agent's to
 * rewrite unseen (it is ignored, and a baseline's name does not cover it), and the baseline's
 * migrations run as the admin.
 */
export interface OutsideWorkTree {
  modules: string | undefined;
}

/**
 * `at`: the workspace, or the package of it that owns the migrations (migrationsPackage). `git` is
 * needed only by `extract` (the TDD lane writes the base's migrations it read itself).
 * `outside`: never in the workspace's node_modules, whose packages (and its `.cache` above the
 * scratch folder) Node would search first; in the system temp directory, with a `node_modules` that
 * leads to `outside.modules` where there is one, so packages resolve from that install alone.
 */
export async function createWorkdir(
  at: string | MigrationsPackage,
  git?: Pick<GitRepo, 'extractCommit'>,
  outside?: OutsideWorkTree,
): Promise<Workdir> {
  const owner = asPackage(at);
  const modules = outside ? undefined : await nearestModules(owner);
  const parent = (modules === undefined ? undefined : await scratchIn(modules, owner.root)) ?? os.tmpdir();
  await sweepDead(parent);
  const root = await mkdtemp(path.join(parent, `${PREFIX}${process.pid}-`));
  if (outside?.modules !== undefined) await symlink(outside.modules, path.join(root, 'node_modules'), 'dir');
  return {
    root,
    async write(side, migrationsDir, files) {
      const relativeTo = path.join(root, side);
      const dir = path.join(relativeTo, migrationsDir);
      await mkdir(dir, { recursive: true });
      for (const f of files) await writeFile(path.join(dir, path.posix.basename(f.file)), f.content);
      return { dir, relativeTo };
    },
    async extract(side, migrationsDir, repo, sha, planned) {
      const relativeTo = path.join(root, side);
      await mkdir(relativeTo, { recursive: true });
      if (!git) throw new Error('createWorkdir: extract needs a GitRepo');
      const { leftOut } = await git.extractCommit(repo, sha, relativeTo);
      await linkWorkspacePackages(relativeTo, await workspacePackages(owner));
      const dir = path.join(relativeTo, migrationsDir);
      await mkdir(dir, { recursive: true }).catch(async (e: NodeJS.ErrnoException) => {
        // A folder of the path is a file of the commit (`migrations.dir: schema.sql/migrations`).
        if (e.code !== 'ENOTDIR' && e.code !== 'EEXIST') throw e;
        throw new ConsortError(
          'config',
          `migrations.dir ${migrationsDir} is not a folder in the commit ${sha.slice(0, 12)}: a part of it is a file.`,
          {
            hint: `Set migrations.dir in ${await configFileToEdit(repo)} to the folder that holds your migrations.`,
            cause: e,
          },
        );
      });
      await sameAsPlanned(relativeTo, dir, planned, sha);
      return { dir, relativeTo, leftOut };
    },
    dispose: () => rm(root, { recursive: true, force: true }),
  };
}
