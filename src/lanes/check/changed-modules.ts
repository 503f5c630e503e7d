/**
 * The baseline applies the base's migrations as the admin, in a migration child that loads
 * node-pg-migrate, the TypeScript loader and the packages those migrations import from the
 * workspace's `node_modules` — the pull request's tree. Packages the pull request's commit brings
 * there (a committed `node_modules`: in the App, which unpacks the head's tarball and installs
 * nothing, the whole of it) would run with the admin's connection: every branch's data, `main`, a
 * superuser's `COPY … TO PROGRAM`. Such a change is refused before anything runs; it is the base's
 * to make. What an install step puts in an ignored `node_modules` is not a commit's, and not seen
 * here (docs/security.md, "Not covered yet").
 */
import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { ConsortError } from '../../core/errors.js';
import { changedBetween } from '../../git/repo.js';
import type { MigrationEngine } from '../../migrations/engine.js';
import type { MigrationFile } from '../../migrations/files.js';
import { installedIn } from '../../migrations/project-packages.js';
import type { CheckSide } from './plan.js';

const MODULES = 'node_modules';

/** The folders, relative to the workspace, the baseline's child loads code from besides the base's files. */
async function loadedFolders(workspace: string, engine: MigrationEngine): Promise<string[]> {
  const folders: string[] = [];
  if (engine.source === 'project') folders.push(engine.dir);
  // The TypeScript loader and tsconfig-paths, when loaded from the workspace rather than the cache.
  const paths = engine.tsconfigPaths;
  const loaders = [
    ...(engine.tsLoader ? [engine.tsLoader] : []),
    ...(paths?.via === 'register' && paths.workspace !== undefined
      ? [{ ...paths, workspace: paths.workspace, name: 'tsconfig-paths' }]
      : []),
  ];
  for (const loader of loaders) {
    if (loader.from !== undefined) continue;
    const at = await installedIn({ root: loader.root ?? loader.workspace, dir: loader.workspace }, loader.name);
    if (at !== undefined)
      folders.push(
        await realpath(path.join(at, MODULES, loader.name)).catch(() => path.join(at, MODULES, loader.name)),
      );
  }
  const root = await realpath(workspace).catch(() => path.resolve(workspace));
  return folders
    .map((f) => path.relative(root, f))
    .filter((rel) => rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel))
    .map((rel) => rel.split(path.sep).join('/'));
}

/** A folder's (or file's, or link's) names and bytes, as one hash; '' when nothing is there. */
async function digest(p: string): Promise<string> {
  const st = await lstat(p).catch(() => undefined);
  if (!st) return '';
  const h = createHash('sha256');
  if (st.isSymbolicLink()) h.update(`l\0${await readlink(p)}`);
  else if (st.isFile()) h.update(`f${st.mode & 0o111 ? 'x' : ''}\0`).update(await readFile(p));
  else if (st.isDirectory()) {
    h.update('d\0');
    for (const name of (await readdir(p)).sort()) h.update(`${name}\0${await digest(path.join(p, name))}\0`);
  } else h.update('o\0');
  return h.digest('hex');
}

/** Every `node_modules` in a folder (not looked into), relative to it; `.git` is not walked. */
async function modulesIn(root: string, rel = ''): Promise<string[]> {
  const entries = await readdir(path.join(root, rel), { withFileTypes: true }).catch(() => []);
  const found: string[] = [];
  for (const e of entries) {
    const child = rel === '' ? e.name : `${rel}/${e.name}`;
    if (e.name === MODULES) found.push(child);
    else if (e.isDirectory() && e.name !== '.git') found.push(...(await modulesIn(root, child)));
  }
  return found;
}

/** What the change's tree holds differently from the base's among `folders` and every `node_modules`. */
async function changedModules(
  workspace: string,
  base: Pick<CheckSide, 'sha' | 'tree'>,
  head: Pick<CheckSide, 'sha' | 'tree'>,
  folders: string[],
): Promise<string[]> {
  if (base.tree?.kind === 'dir' && head.tree?.kind === 'dir') {
    // Both unpacked from commits (the App): every file there is committed.
    const candidates = [...new Set([...(await modulesIn(head.tree.dir)), ...folders])];
    const changed: string[] = [];
    for (const rel of candidates)
      if ((await digest(path.join(head.tree.dir, rel))) !== (await digest(path.join(base.tree.dir, rel))))
        changed.push(rel);
    return changed;
  }
  if (base.sha === null || head.sha === null) return [];
  const repo = head.tree?.kind === 'commit' ? head.tree.repo : workspace;
  return changedBetween(repo, base.sha, head.sha, [`:(glob)**/${MODULES}/**`, ...folders]);
}

/**
 * Throws when the baseline's child would load code the pull request's commit changed: its
 * node-pg-migrate or TypeScript loader from the workspace, or base's JS/TS migrations (whose
 * packages resolve through the workspace's `node_modules`), beside a committed `node_modules` (or
 * that engine's or loader's folder) that differs from the base's.
 */
export async function refuseChangedModules(
  request: { workspace: string; base: Pick<CheckSide, 'sha' | 'tree'>; head: Pick<CheckSide, 'sha' | 'tree'> },
  engine: MigrationEngine,
  base: readonly MigrationFile[],
): Promise<void> {
  const folders = await loadedFolders(request.workspace, engine);
  const code = base.some((m) => m.kind !== 'sql' && m.kind !== 'other');
  if (folders.length === 0 && !code) return;
  const changed = await changedModules(request.workspace, request.base, request.head, folders);
  if (changed.length === 0) return;
  const shown = changed.slice(0, 5).join(', ') + (changed.length > 5 ? ` and ${changed.length - 5} more` : '');
  throw new ConsortError(
    'config',
    `The change commits packages the baseline would load as the admin (${shown}): the baseline applies the base's migrations with the admin's connection, through the workspace's node-pg-migrate, TypeScript loader and node_modules, so it runs no package the pull request brings.`,
    {
      hint: 'Land the change to the committed node_modules on the base branch first (or stop committing node_modules and install it instead).',
    },
  );
}
