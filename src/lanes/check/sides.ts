/**
 * The two sides a check compares, built from git: a commit's migrations (read with `git ls-tree`,
 * without touching the working tree) and the working tree's. Shared by `consort check` and the
 * Action, which differ only in how they pick the commits; git is the GitRepo port they pass.
 */
import path from 'node:path';
import type { ConsortConfig } from '../../config/schema.js';
import { EVERY_FILE, readMigrationSet, type MigrationEntry } from '../../migrations/files.js';
import type { GitRepo } from '../../ports/git.js';
import { settingsAtCommit } from './base-settings.js';
import type { CheckSide } from './plan.js';

/** Nothing to compare with: no migrations, and no seed (seeding an empty schema with head's seed would fail). */
export const EMPTY_SIDE: CheckSide = { ref: '(empty)', sha: null, migrations: [], seed: null };

/**
 * The migrations directory, the seed file and the configuration's settings as they are at `sha`
 * (`configPath`: the configuration file named with `--config` or the Action's `config` input).
 */
export async function commitSide(
  git: Pick<GitRepo, 'filesAt'>,
  root: string,
  ref: string,
  sha: string,
  config: ConsortConfig,
  configPath?: string,
): Promise<CheckSide> {
  const seed = config.database.seed;
  const settings = await settingsAtCommit(git, root, sha, configPath);
  const side: CheckSide = {
    ref,
    sha,
    // The side's own folder: a change that points migrations.dir elsewhere does not hide the base's.
    migrations: await git.filesAt(root, sha, settings.migrationsDir ?? config.migrations.dir),
    tree: { kind: 'commit', repo: root, sha },
    settings,
  };
  if (seed?.kind !== 'file') return side;
  const file = path.posix.normalize(seed.path.replace(/\\/g, '/'));
  const found = (await git.filesAt(root, sha, file)).find((f) => f.file === file);
  return { ...side, seed: found?.content ?? null };
}

/** The migrations directory as it is on disk (what CI checked out, or uncommitted local work). */
export async function workingTreeSide(
  root: string,
  ref: string,
  sha: string | null,
  config: ConsortConfig,
): Promise<CheckSide> {
  // Every file, as filesAt gives a commit's: which of them are migrations is the trusted (base's)
  // migrations.ignorePattern's to say, in migrationSets, not this side's configuration.
  const files = await readMigrationSet(path.join(root, config.migrations.dir), {
    relativeTo: root,
    ignorePattern: EVERY_FILE,
  });
  return {
    ref,
    sha,
    migrations: files.map((f) => ({ file: f.file, content: f.content })),
    tree: { kind: 'dir', dir: root },
  };
}

const folder = (dir: string) => path.posix.normalize(dir.replace(/\\/g, '/')).replace(/\/+$/, '') || '.';

/**
 * The change's side with its files in the base's migrations folder when its own `migrations.dir`
 * (`dir`) names another (CheckSide.leftBehind); unchanged when the folders are the same or the
 * base's is not known. The plan turns a migration added or edited there into a problem: moving the
 * folder in the configuration must not let a migration slip into the deployed one unchecked.
 */
export async function withLeftBehind(
  git: Pick<GitRepo, 'filesAt'> | undefined,
  base: Pick<CheckSide, 'settings'>,
  head: CheckSide,
  dir: string,
): Promise<CheckSide> {
  const baseDir = base.settings?.migrationsDir;
  if (baseDir === undefined || folder(baseDir) === folder(dir) || !head.tree) return head;
  const tree = head.tree;
  let migrations: MigrationEntry[];
  if (tree.kind === 'dir') {
    const files = await readMigrationSet(path.join(tree.dir, baseDir), {
      relativeTo: tree.dir,
      missingOk: true,
      ignorePattern: EVERY_FILE,
    });
    migrations = files.map((f) => ({ file: f.file, content: f.content }));
  } else if (git) migrations = await git.filesAt(tree.repo, tree.sha, baseDir);
  else return head;
  return { ...head, leftBehind: { baseDir: folder(baseDir), migrations } };
}
