/** The git queries pairing needs: the checked-out branch, where hooks and Consort's own state live. */
import { execFile } from 'node:child_process';
import path from 'node:path';

export interface GitResult {
  code: number;
  stdout: string;
}

export function git(cwd: string, args: string[]): Promise<GitResult> {
  return new Promise((resolve) => {
    execFile('git', args, { cwd, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }, (err, stdout) => {
      const code = err
        ? typeof (err as { code?: unknown }).code === 'number'
          ? (err as { code: number }).code
          : 1
        : 0;
      resolve({ code, stdout: stdout.trim() });
    });
  });
}

/** The checked-out branch, or undefined on a detached HEAD (nothing to pair). */
export async function currentGitBranch(cwd: string): Promise<string | undefined> {
  const r = await git(cwd, ['symbolic-ref', '--quiet', '--short', 'HEAD']);
  return r.code === 0 && r.stdout !== '' ? r.stdout : undefined;
}

/** The `.git` directory shared by all worktrees (hooks and pairing state live there). */
export async function commonGitDir(cwd: string): Promise<string> {
  const r = await git(cwd, ['rev-parse', '--git-common-dir']);
  if (r.code !== 0) throw new Error(`not a git repository: ${cwd}`);
  return path.resolve(cwd, r.stdout);
}

/** True when git ignores `file` (so a URL with a password written there will not be committed). */
export async function isIgnored(root: string, file: string): Promise<boolean> {
  return (await git(root, ['check-ignore', '-q', '--', file])).code === 0;
}

export async function isTracked(root: string, file: string): Promise<boolean> {
  return (await git(root, ['ls-files', '--error-unmatch', '--', file])).code === 0;
}
