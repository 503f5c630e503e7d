/**
 * The little of git the check lane needs: resolve refs, find a sensible default base, and read a
 * directory's files as they are at a commit (without touching the working tree).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { posix } from 'node:path';
import { ConsortError } from '../core/errors.js';
import type { GitRepo } from '../ports/git.js';
import { hostProgram } from '../process/host-programs.js';
import { git as exec, gitProgram } from './exec.js';
import { gitEnv, SAFE_GIT_ARGS } from './safe.js';

async function gitBytes(root: string, args: string[], input?: string): Promise<Buffer> {
  const r = await exec(root, args, input !== undefined ? { input } : {});
  if (r.code !== 0)
    throw new ConsortError('invalid-input', `git ${args[0]} failed: ${r.stderr.trim() || `exit ${r.code}`}`);
  return r.bytes;
}

async function git(root: string, args: string[], input?: string): Promise<string> {
  return (await gitBytes(root, args, input)).toString('utf8');
}

export async function isGitRepo(root: string): Promise<boolean> {
  return git(root, ['rev-parse', '--is-inside-work-tree']).then(
    (o) => o.trim() === 'true',
    () => false,
  );
}

export async function resolveCommit(root: string, ref: string): Promise<string> {
  try {
    return (await git(root, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])).trim();
  } catch {
    throw new ConsortError('invalid-input', `Unknown git ref "${ref}".`, {
      hint: 'Pass a branch, tag or commit that exists (git fetch it first in a shallow CI checkout).',
    });
  }
}

/** Files under `dir` that git does not track yet (new and not added), relative to `root`. */
export async function untrackedFiles(root: string, dir: string): Promise<Set<string>> {
  const out = await git(root, ['ls-files', '--others', '--exclude-standard', '--full-name', '--', dir]).catch(() => '');
  const prefix = (await git(root, ['rev-parse', '--show-prefix']).catch(() => '')).trim();
  return new Set(
    out
      .split('\n')
      .filter(Boolean)
      .map((f) => (prefix && f.startsWith(prefix) ? f.slice(prefix.length) : f)),
  );
}

/** The branch checked out at `root`, or null when HEAD is detached (or not a repository). */
export async function currentBranch(root: string): Promise<string | null> {
  return git(root, ['symbolic-ref', '--quiet', '--short', 'HEAD']).then(
    (o) => o.trim() || null,
    () => null,
  );
}

/** The merge-base of HEAD with the default branch: what a PR would be compared against. */
export async function defaultBase(root: string): Promise<{ ref: string; sha: string }> {
  for (const candidate of ['origin/HEAD', 'origin/main', 'main', 'origin/master', 'master']) {
    const sha = await git(root, ['rev-parse', '--verify', '--quiet', `${candidate}^{commit}`]).then(
      (o) => o.trim(),
      () => '',
    );
    if (!sha) continue;
    const base = (await git(root, ['merge-base', 'HEAD', sha])).trim();
    return { ref: candidate, sha: base };
  }
  throw new ConsortError('invalid-input', 'Cannot tell which commit to compare against.', {
    hint: 'Pass --base <ref> (for example --base origin/main).',
  });
}

/**
 * The files directly in `dir` at `commit` (or the file `dir` names), with their content
 * (binary-safe enough for migrations). Not its subdirectories' files: node-pg-migrate reads one
 * directory, and a project may keep files its migrations read in a folder inside it
 * (`migrations/sql/<name>.up.sql`); listed, they would be migrations of one side only.
 */
export async function filesAt(root: string, commit: string, dir: string): Promise<{ file: string; content: string }[]> {
  // As git lists paths: `./migrations/`, `db\\migrations` and `migrations` are one folder.
  const clean = posix.normalize(dir.replace(/\\/g, '/')).replace(/\/+$/, '') || '.';
  const listing = await git(root, ['ls-tree', '-r', '-z', '--full-tree', commit, '--', clean]);
  const entries = listing
    .split('\0')
    .filter(Boolean)
    .map((line) => {
      const [meta, path] = line.split('\t') as [string, string];
      const [, type, sha] = meta.split(' ') as [string, string, string];
      return { type, sha, path };
    })
    .filter((e) => e.type === 'blob' && (e.path === clean || posix.dirname(e.path) === clean));
  if (entries.length === 0) return [];
  // One `cat-file --batch` for all blobs instead of a process per file.
  const out = await gitBytes(root, ['cat-file', '--batch'], entries.map((e) => e.sha).join('\n') + '\n');
  const files: { file: string; content: string }[] = [];
  let offset = 0;
  for (const entry of entries) {
    const headerEnd = out.indexOf(0x0a, offset);
    const size = Number(out.subarray(offset, headerEnd).toString().split(' ')[2]);
    const start = headerEnd + 1;
    files.push({ file: entry.path, content: out.subarray(start, start + size).toString('utf8') });
    offset = start + size + 1;
  }
  return files;
}

export async function headCommit(root: string): Promise<string | null> {
  return git(root, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']).then(
    (o) => o.trim() || null,
    () => null,
  );
}

export async function hasCommit(root: string, sha: string): Promise<boolean> {
  return git(root, ['cat-file', '-e', `${sha}^{commit}`]).then(
    () => true,
    () => false,
  );
}

/**
 * The parents a commit names. Read from the commit object itself, so they are known even in a
 * shallow clone that lacks the parent commits.
 */
export async function commitParents(root: string, sha: string): Promise<string[]> {
  const text = await git(root, ['cat-file', 'commit', sha]);
  const header = text.slice(0, text.indexOf('\n\n'));
  return header
    .split('\n')
    .filter((l) => l.startsWith('parent '))
    .map((l) => l.slice('parent '.length).trim());
}

/** Make `sha` available in a shallow or partial clone (one commit deep, no tags). */
export async function fetchCommit(root: string, sha: string, remote = 'origin'): Promise<void> {
  await git(root, ['fetch', '--no-tags', '--depth=1', remote, sha]);
}

/** The best common ancestor of two commits, or null when there is none (or history is missing). */
export async function mergeBase(root: string, a: string, b: string): Promise<string | null> {
  return git(root, ['merge-base', a, b]).then(
    (o) => o.trim() || null,
    () => null,
  );
}

/**
 * `git archive <sha> | tar -x`, git as src/git/exec.ts starts it (hooks off, allow-listed environment).
 * Not the ProcessRunner: the tree streams from one child into the other instead of through memory.
 */
export function extractCommit(repo: string, sha: string, dest: string): Promise<void> {
  const env = gitEnv();
  return new Promise((resolve, reject) => {
    const git = spawn(gitProgram(), [...SAFE_GIT_ARGS, 'archive', '--format=tar', sha], {
      cwd: repo,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tar = spawn(hostProgram('tar', env.PATH ?? ''), ['-x', '-f', '-', '-C', dest], {
      env,
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let err = '';
    git.stderr.on('data', (d: Buffer) => (err += d.toString()));
    tar.stderr.on('data', (d: Buffer) => (err += d.toString()));
    git.stdout.pipe(tar.stdin);
    // tar may stop reading at the end-of-archive marker, before git's trailing padding: that write
    // fails (EPIPE) and the rest of git's output is drained, so git is never left blocked on a full pipe.
    tar.stdin.on('error', () => undefined);
    tar.once('close', () => git.stdout.resume());
    const closed = (child: ChildProcess) =>
      new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done, fail) => {
        child.once('error', fail);
        child.once('close', (code, signal) => done({ code, signal }));
      });
    // Judged once both have ended: either may close first.
    Promise.all([closed(git), closed(tar)]).then(([g, t]) => {
      if (g.code === 0 && t.code === 0) return resolve();
      const how = (r: { code: number | null; signal: string | null }) =>
        r.signal ? `signal ${r.signal}` : `exit ${r.code}`;
      reject(new Error(`could not extract ${sha.slice(0, 12)} (git archive ${how(g)}, tar ${how(t)}): ${err.trim()}`));
    }, reject);
  });
}

/** The GitRepo port (src/ports/git.ts) over these functions. */
export const localGitRepo: GitRepo = {
  isGitRepo,
  resolveCommit,
  headCommit,
  currentBranch,
  defaultBase,
  untrackedFiles,
  filesAt,
  hasCommit,
  commitParents,
  fetchCommit,
  mergeBase,
  extractCommit,
};
