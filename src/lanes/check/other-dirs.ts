/**
 * Migrations a change adds, edits or deletes in another folder the project's own scripts run node-pg-migrate
 * on (a `migrate:data` script with `-m data-migrations` beside `migrate`, a second package of a
 * monorepo): the check applies `migrations.dir` alone, so a broken one there passed with nothing
 * said. Warnings, not problems: such a folder is the project's to deploy, and a change may rightly
 * add to it; the warning names the folder, the script and what the check did read.
 */
import { normalRepoPath } from '../../config/schema.js';
import { migrationSetFromEntries } from '../../migrations/files.js';
import type { Problem } from '../../migrations/plan.js';
import { migrationsPackage } from '../../migrations/project-packages.js';
import { scriptedCommands } from '../../migrations/scripted-dirs.js';
import { isIgnored } from '../../git/repo.js';
import type { GitRepo } from '../../ports/git.js';
import type { CheckRequest } from './plan.js';
import { filesIn } from './sides.js';

/** The folders, other than migrations.dir, that the project's scripts run node-pg-migrate on, with the first script naming each. */
async function otherFolders(
  workspace: string,
  migrationsDir: string,
): Promise<{ dir: string; manifest: string; script: string }[]> {
  const checked = normalRepoPath(migrationsDir);
  const out = new Map<string, { dir: string; manifest: string; script: string }>();
  // The package that owns migrations.dir is read too when it is no workspace (a nested db/ of its own).
  const owner = await migrationsPackage(workspace, migrationsDir);
  for (const c of await scriptedCommands(workspace, { owner: owner.dir })) {
    if (c.dir === undefined || c.args.includes('create')) continue; // `create` makes files, applies none
    const dir = normalRepoPath(c.dir);
    if (dir === checked || out.has(dir)) continue;
    // A folder git ignores is a build's output (dist/migrations, made from migrations.dir): no change adds to it.
    if (await isIgnored(workspace, dir).catch(() => false)) continue;
    out.set(dir, { dir, manifest: c.manifest, script: c.script });
  }
  return [...out.values()];
}

/** The change's new and edited migrations in those folders, as plan warnings (`unchecked-migrations-dir`). */
export async function uncheckedMigrationDirs(
  request: Pick<CheckRequest, 'workspace' | 'base' | 'head'>,
  config: { dir: string; ignorePattern: string },
  git: Pick<GitRepo, 'filesAt'> | undefined,
): Promise<Problem[]> {
  const { base, head } = request;
  if (!head.tree) return [];
  const out: Problem[] = [];
  for (const other of await otherFolders(request.workspace, config.dir)) {
    // The base's folder a change moved migrations.dir away from is a problem already (outside-migrations-dir).
    if (head.leftBehind && normalRepoPath(head.leftBehind.baseDir) === other.dir) continue;
    const headFiles = (await filesIn(git, head.tree, other.dir)) ?? [];
    const baseFiles = base.tree ? ((await filesIn(git, base.tree, other.dir)) ?? []) : [];
    if (headFiles.length + baseFiles.length === 0) continue;
    const before = new Map(migrationSetFromEntries(baseFiles, config.ignorePattern).map((m) => [m.file, m]));
    const now = migrationSetFromEntries(headFiles, config.ignorePattern);
    const warn = (m: { file: string; name: string }, change: 'added' | 'edited' | 'deleted'): Problem => ({
      kind: 'unchecked-migrations-dir',
      file: m.file,
      name: m.name,
      dir: other.dir,
      migrationsDir: normalRepoPath(config.dir),
      manifest: other.manifest,
      script: other.script,
      change,
    });
    for (const m of now) {
      const was = before.get(m.file);
      if (was?.sha256 !== m.sha256) out.push(warn(m, was === undefined ? 'added' : 'edited'));
    }
    // One that ran where base is deployed and is gone: that folder's history is rewritten.
    const kept = new Set(now.map((m) => m.file));
    for (const m of before.values()) if (!kept.has(m.file)) out.push(warn(m, 'deleted'));
  }
  return out;
}
