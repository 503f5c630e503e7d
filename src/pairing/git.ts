/** The git queries pairing needs: the checked-out branch, where hooks and Consort's own state live. */
import path from 'node:path';
import { git as exec } from '../git/exec.js';

export interface GitResult {
  code: number;
  stdout: string;
}

export async function git(cwd: string, args: string[], options: { userHooksPath?: boolean } = {}): Promise<GitResult> {
  const r = await exec(cwd, args, options);
  return { code: r.code, stdout: r.stdout.trim() };
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
