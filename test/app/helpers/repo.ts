/**
 * Repositories for App tests: the example shop as a real git repository (src/demo/scenarios.ts),
 * more commits on top, and the tarball GitHub would serve for a commit (`git archive`, with the
 * `<owner>-<repo>-<sha7>/` directory GitHub wraps the tree in).
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FolderEntry } from '../../../src/ports/github.js';
import { execFileAsync } from '../../helpers/exec-file.js';

const exec = execFileAsync;
const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Consort test',
  GIT_AUTHOR_EMAIL: 'test@consort.invalid',
  GIT_COMMITTER_NAME: 'Consort test',
  GIT_COMMITTER_EMAIL: 'test@consort.invalid',
};

/** Commit `files` on top of `from` (default: the current HEAD); returns the new commit's SHA. */
export async function commit(
  dir: string,
  files: Record<string, string>,
  message = 'change',
  from?: string,
): Promise<string> {
  if (from !== undefined) await exec('git', ['checkout', '-q', '--detach', from], { cwd: dir, env });
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), content);
  }
  await exec('git', ['add', '-A'], { cwd: dir, env });
  await exec('git', ['-c', 'commit.gpgsign=false', 'commit', '-qm', message, '--allow-empty'], { cwd: dir, env });
  return (await exec('git', ['rev-parse', 'HEAD'], { cwd: dir, env })).stdout.trim();
}

/** The repository each commit a tarball was made of lives in, for the stand-ins' Git Trees API. */
const repositoryOf = new Map<string, string>();

/**
 * What the Git Trees API answers for an object of a repository a tarball was made from: a
 * commit's tree, or a tree's own entries (`git ls-tree`, not recursive). undefined: no such object.
 * Synchronous: the HTTP stand-in's routes answer in one go.
 */
export function gitObject(
  sha: string,
): { kind: 'commit'; tree: string } | { kind: 'tree'; entries: FolderEntry[] } | undefined {
  const git = (dir: string, ...args: string[]): string | undefined => {
    try {
      return execFileSync('git', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    } catch {
      return undefined;
    }
  };
  for (const dir of new Set(repositoryOf.values())) {
    const type = git(dir, 'cat-file', '-t', sha)?.trim();
    if (type === 'commit') return { kind: 'commit', tree: git(dir, 'rev-parse', `${sha}^{tree}`)!.trim() };
    if (type === 'tree') {
      const entries = git(dir, 'ls-tree', '-z', sha)!
        .split('\0')
        .filter(Boolean)
        .map((line) => {
          const tab = line.indexOf('\t');
          const [mode, type, id] = line.slice(0, tab).split(' ') as [string, FolderEntry['type'], string];
          return { name: line.slice(tab + 1), mode, type, sha: id };
        });
      return { kind: 'tree', entries };
    }
  }
  return undefined;
}

/** A folder's entries in a commit a tarball was made of, as GitHubPort.folderEntries answers. */
export function folderEntriesOf(sha: string, dir: string): FolderEntry[] | null {
  const commit = gitObject(sha);
  if (commit?.kind !== 'commit') throw new Error(`no commit ${sha} among the tarballs made`);
  let tree = commit.tree;
  for (const name of dir.split('/').filter(Boolean)) {
    const listed = gitObject(tree);
    const next = listed?.kind === 'tree' ? listed.entries.find((e) => e.name === name && e.type === 'tree') : undefined;
    if (!next) return null;
    tree = next.sha;
  }
  const listed = gitObject(tree);
  return listed?.kind === 'tree' ? listed.entries : null;
}

export async function tarballOf(dir: string, sha: string, owner = 'Codertocat', repo = 'Hello-World'): Promise<Buffer> {
  repositoryOf.set(sha, dir);
  const { stdout } = await exec(
    'git',
    ['archive', '--format=tar.gz', `--prefix=${owner}-${repo}-${sha.slice(0, 7)}/`, sha],
    { cwd: dir, encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout;
}

/** A Consort config whose suite is a plain shell command (the App's workspace has no node_modules). */
export function appConfig(suite: string, extra = ''): string {
  return [
    'database:',
    '  seed:',
    '    file: seed.sql',
    'migrations:',
    '  dir: migrations',
    'suite:',
    `  command: ${JSON.stringify(suite)}`,
    '  timeout: 2m',
    extra,
  ].join('\n');
}
