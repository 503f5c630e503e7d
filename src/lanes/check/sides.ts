/**
 * The two sides a check compares, built from git: a commit's migrations (read with `git ls-tree`,
 * without touching the working tree) and the working tree's. Shared by `consort check` and the
 * Action, which differ only in how they pick the commits; git is the GitRepo port they pass.
 */
import path from 'node:path';
import { defaultConfig, normalRepoPath, type ConsortConfig } from '../../config/schema.js';
import { EVERY_FILE, readMigrationSet, type MigrationEntry } from '../../migrations/files.js';
import type { GitRepo } from '../../ports/git.js';
import { ConsortError } from '../../core/errors.js';
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

/**
 * The migrations directory as it is on disk (what CI checked out, or uncommitted local work).
 * `git`: where the working tree is a repository's, a folder git ignores that the checked-out commit
 * does not hold (a build's output, such as `dist/migrations`) is refused — no commit holds it, so
 * every migration in it would count as new.
 */
export async function workingTreeSide(
  root: string,
  ref: string,
  sha: string | null,
  config: ConsortConfig,
  git?: Pick<GitRepo, 'isIgnored' | 'pathKindAt'>,
): Promise<CheckSide> {
  // Ignored, and not in the checked-out commit either (files force-added to an ignored folder are tracked).
  if (
    git &&
    sha !== null &&
    (await git.isIgnored(root, config.migrations.dir)) &&
    (await git.pathKindAt(root, sha, config.migrations.dir)) === 'missing'
  ) {
    const dir = config.migrations.dir;
    const { builtFrom } = await import('../../migrations/scripted-dirs.js');
    const source = await builtFrom(root, dir).catch(() => undefined);
    throw new ConsortError(
      'config',
      `The migrations directory ${dir} (migrations.dir) is ignored by git: a build writes it, so no commit holds it and the check would count every migration in it as new.`,
      {
        hint:
          source === undefined
            ? 'Set migrations.dir in .github/consort.yml to the folder git keeps the migrations in.'
            : `Set migrations.dir: ${source} in .github/consort.yml, the TypeScript it is built from (loaded through the project's TypeScript loader, tsx or ts-node, or node-pg-migrate 9's own).`,
      },
    );
  }
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

/** The change's (or the base's) files directly in `dir`, every one: the plan filters them with the base's ignorePattern. */
export async function filesIn(
  git: Pick<GitRepo, 'filesAt'> | undefined,
  tree: NonNullable<CheckSide['tree']>,
  dir: string,
): Promise<MigrationEntry[] | undefined> {
  if (tree.kind === 'commit') return git ? git.filesAt(tree.repo, tree.sha, dir) : undefined;
  const files = await readMigrationSet(path.join(tree.dir, dir), {
    relativeTo: tree.dir,
    missingOk: true,
    ignorePattern: EVERY_FILE,
  });
  return files.map((f) => ({ file: f.file, content: f.content }));
}

/**
 * The change's side with its files in the base's migrations folder when its own `migrations.dir`
 * (`dir`) names another (CheckSide.leftBehind); unchanged when the folders are the same, or when
 * there is no base commit or its configuration is a file outside the repository (which the change
 * cannot edit either). A base without a valid configuration deploys from node-pg-migrate's (and
 * Consort's) default folder, `migrations`: its side was read from the change's folder (a repository
 * adopting Consort), so the base's own files in `migrations` are read here too, for the comparison.
 * The plan turns a migration added or edited there into a problem: moving the folder in the
 * configuration must not let a migration slip into the deployed one unchecked.
 */
export async function withLeftBehind(
  git: Pick<GitRepo, 'filesAt'> | undefined,
  base: Pick<CheckSide, 'settings' | 'tree'>,
  head: CheckSide,
  dir: string,
): Promise<CheckSide> {
  const settings = base.settings;
  if (!settings?.verdict || !head.tree) return head;
  const known = settings.migrationsDir;
  const baseDir = normalRepoPath(known ?? defaultConfig().migrations.dir);
  if (baseDir === normalRepoPath(dir)) return head;
  const migrations = await filesIn(git, head.tree, baseDir);
  if (!migrations) return head;
  if (known !== undefined) return { ...head, leftBehind: { baseDir, migrations } };
  // The base side holds the change's folder as it is on the base: read the base's own files here.
  const baseMigrations = base.tree ? await filesIn(git, base.tree, baseDir) : [];
  if (!baseMigrations) return head;
  return { ...head, leftBehind: { baseDir, migrations, baseMigrations } };
}
