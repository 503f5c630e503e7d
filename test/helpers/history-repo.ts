/**
 * The history fixtures (test/fixtures/histories) as git repositories for the PR lane's tests.
 */
import { cp, mkdir, mkdtemp, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isolatedGit as git } from './check-repo.js';

export const HISTORIES = path.join(process.cwd(), 'test/fixtures/histories');
/** Consort's own node_modules: a fixture's packages are links into it. */
export const MODULES = path.join(process.cwd(), 'node_modules');

export interface History {
  dir: string;
  dispose(): Promise<void>;
}

/**
 * The fixture as a git repository outside Consort's tree (so nothing resolves from Consort's own
 * node_modules by accident): `main` holds its first `baseCount` migrations, the checked-out
 * branch all of them. `links`: node_modules entries of the project, as packages of Consort's;
 * `files`: files of the fixture replaced (on both sides) before anything is committed.
 */
export async function history(
  name: string,
  baseCount: number,
  links: Record<string, string>,
  files: Record<string, string> = {},
  monorepo?: { under: string; rootLinks: Record<string, string> },
  {
    migrationsDir = 'migrations',
    prFiles = {},
  }: {
    /** The fixture's migrations folder, relative to its package. */
    migrationsDir?: string;
    /** Files of the package the pull request changes besides its migrations (path → text). */
    prFiles?: Record<string, string>;
  } = {},
): Promise<History> {
  const root = await mkdtemp(path.join(tmpdir(), `consort-history-${name}-`));
  // In a monorepo the fixture is one package of it (`links` its own node_modules), the root's node_modules hoisted.
  const pkgDir = monorepo ? path.join(root, monorepo.under) : root;
  await cp(path.join(HISTORIES, name), pkgDir, { recursive: true });
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), content);
  }
  await writeFile(path.join(root, '.gitignore'), 'node_modules/\n');
  await mkdir(path.join(pkgDir, 'node_modules'));
  for (const [as, pkg] of Object.entries(links))
    await symlink(path.join(MODULES, pkg), path.join(pkgDir, 'node_modules', as), 'dir');
  if (monorepo) {
    await mkdir(path.join(root, 'node_modules'));
    for (const [as, pkg] of Object.entries(monorepo.rootLinks))
      await symlink(path.join(MODULES, pkg), path.join(root, 'node_modules', as), 'dir');
  }
  const migrations = path.join(pkgDir, migrationsDir);
  const all = (await readdir(migrations)).sort();
  const later = all.slice(baseCount);
  const aside = path.join(root, '.later');
  await mkdir(aside);
  for (const f of later) await rename(path.join(migrations, f), path.join(aside, f));
  await git(root, 'init', '-q', '-b', 'main');
  await git(root, 'add', '-A');
  await git(root, 'commit', '-qm', 'base');
  await git(root, 'checkout', '-qb', 'feature');
  for (const f of later) await rename(path.join(aside, f), path.join(migrations, f));
  await rm(aside, { recursive: true });
  for (const [file, content] of Object.entries(prFiles)) await writeFile(path.join(pkgDir, file), content);
  await git(root, 'add', '-A');
  await git(root, 'commit', '-qm', 'the pull request', '--allow-empty');
  return { dir: root, dispose: () => rm(root, { recursive: true, force: true }) };
}
