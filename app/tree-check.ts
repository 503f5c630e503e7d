/**
 * The App reads a commit from GitHub's tarball, which is `git archive`: it honours the commit's own
 * `.gitattributes`, so a pull request could mark its migration `export-ignore` (the App's plan and
 * run never see it; a deploy from a checkout applies it) or `export-subst` (the text that runs is
 * not the text committed). Before a side's migrations are planned, the folder as unpacked is
 * compared with the commit's own tree (the Git Trees API): the same files, each with git's hash of
 * the bytes committed. Anything else stops the check, naming the file.
 */
import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import { ConsortError } from '../src/core/errors.js';
import type { GitHubPort, RepoRef } from '../src/ports/github.js';

/** git's object id of a file's bytes (`blob <size>\0<bytes>`), as the tree names it. */
export function blobId(bytes: Buffer): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/** The entries directly in `dir` on disk that node-pg-migrate could read as migrations: files and links. */
async function onDisk(dir: string): Promise<Map<string, 'file' | 'link'>> {
  const entries = await readdir(dir, { withFileTypes: true }).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return [];
    throw e;
  });
  const out = new Map<string, 'file' | 'link'>();
  for (const e of entries)
    if (e.isFile()) out.set(e.name, 'file');
    else if (e.isSymbolicLink()) out.set(e.name, 'link');
  return out;
}

/**
 * Throws unless the folder `migrationsDir` of the tree unpacked at `root` holds exactly the files
 * of that folder in the commit `sha`, byte for byte (links: by name; the check follows them inside
 * the unpacked tree only).
 */
export async function sameAsCommit(
  gh: Pick<GitHubPort, 'folderEntries'>,
  repo: RepoRef,
  sha: string,
  root: string,
  migrationsDir: string,
): Promise<void> {
  const dir = path.posix.normalize(migrationsDir.replace(/\\/g, '/')).replace(/^\.\/?|\/$/g, '');
  const committed = ((await gh.folderEntries(repo, sha, dir === '.' ? '' : dir)) ?? []).filter(
    (e) => e.type === 'blob',
  );
  const unpacked = await onDisk(path.join(root, dir));
  const differs = (file: string, how: string) =>
    new ConsortError(
      'invalid-input',
      `${path.posix.join(dir, file)} ${how} in GitHub's tarball of ${sha.slice(0, 12)}, so the App would not check what the commit holds.`,
      {
        hint: "GitHub's tarball applies the commit's .gitattributes (export-ignore, export-subst, ident): remove those attributes from the migrations folder's files, or check this repository with the GitHub Action, which reads the commit from git.",
      },
    );
  for (const e of committed) {
    const kind = unpacked.get(e.name);
    if (kind === undefined) throw differs(e.name, 'is missing');
    const full = path.join(root, dir, e.name);
    if (e.mode !== '120000') {
      if ((await lstat(full)).isSymbolicLink() || blobId(await readFile(full)) !== e.sha)
        throw differs(e.name, 'is not the file committed');
      continue;
    }
    // A link: the link as committed, then the file it leads to as committed (its folder's tree).
    const target = kind === 'link' ? await readlink(full) : undefined;
    if (target === undefined || blobId(Buffer.from(target)) !== e.sha)
      throw differs(e.name, 'is not the link committed');
    const to = path.posix.normalize(path.posix.join(dir === '.' ? '' : dir, target));
    if (path.posix.isAbsolute(to) || to === '..' || to.startsWith('../')) continue; // refused when the migrations are read
    const folder = path.posix.dirname(to);
    const entry = ((await gh.folderEntries(repo, sha, folder === '.' ? '' : folder)) ?? []).find(
      (x) => x.name === path.posix.basename(to),
    );
    if (entry === undefined || entry.type !== 'blob') continue; // names nothing, or a folder: refused when read
    if (entry.mode === '120000') throw differs(e.name, 'leads to another link, which the App does not follow');
    const bytes = await readFile(path.join(root, to)).catch(() => undefined);
    if (bytes === undefined || blobId(bytes) !== entry.sha)
      throw differs(e.name, `leads to ${to}, which is not the file committed`);
  }
  const names = new Set(committed.map((e) => e.name));
  for (const name of unpacked.keys()) if (!names.has(name)) throw differs(name, 'is not in the commit but is');
}
