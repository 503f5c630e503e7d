/**
 * The pull request's branch in the runner's checkout: fetched and checked out (a comment-triggered
 * run starts on the default branch), and pushed after every turn so a later run resumes from it.
 *
 * The token reaches git only through the environment of the fetch and push themselves
 * (GIT_CONFIG_* → an `http.<server>/.extraheader`), never through .git/config or a command line,
 * and a token actions/checkout persisted in .git/config is removed first: an agent with a shell
 * must not be able to read a credential from the checkout.
 */
import { ConsortError } from '../../core/errors.js';
import { git as exec } from '../../git/exec.js';

export interface GitAuth {
  token: string | undefined;
  /** e.g. https://github.com */
  serverUrl: string;
}

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function git(cwd: string, args: string[], extraEnv: Record<string, string> = {}): Promise<Result> {
  return exec(cwd, args, { env: extraEnv });
}

function authEnv(auth: GitAuth): Record<string, string> {
  if (!auth.token) return {};
  const basic = Buffer.from(`x-access-token:${auth.token}`).toString('base64');
  return {
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: `http.${auth.serverUrl}/.extraheader`,
    GIT_CONFIG_VALUE_0: `AUTHORIZATION: basic ${basic}`,
  };
}

/** Removes credentials actions/checkout stored in the checkout's config; returns the keys removed. */
export async function dropPersistedCredentials(dir: string): Promise<string[]> {
  const listed = await git(dir, [
    'config',
    '--local',
    '--name-only',
    '--get-regexp',
    '^(http\\..*\\.extraheader|includeif\\..*\\.path)$',
  ]);
  const keys = [
    ...new Set(
      listed.stdout
        .split('\n')
        .map((k) => k.trim())
        .filter(Boolean),
    ),
  ];
  for (const key of keys) await git(dir, ['config', '--local', '--unset-all', key]);
  return keys;
}

/** Fetches `refs/heads/<ref>` from origin into `refs/remotes/origin/<ref>` (`what` names it in the error). */
export async function fetchBranch(dir: string, ref: string, auth: GitAuth, what: string): Promise<void> {
  const fetched = await git(
    dir,
    ['fetch', '--no-tags', 'origin', `+refs/heads/${ref}:refs/remotes/origin/${ref}`],
    authEnv(auth),
  );
  if (fetched.code !== 0) {
    throw new ConsortError(
      'invalid-input',
      `Cannot fetch ${what} ${ref}: ${fetched.stderr.trim().split('\n').pop() ?? ''}`,
      {
        hint: 'Check out the repository with actions/checkout first (fetch-depth: 0, persist-credentials: false), and give the job `contents: write`.',
      },
    );
  }
}

/** Fetches the pull request's head branch and checks it out as a local branch of the same name. */
export async function checkoutBranch(dir: string, ref: string, auth: GitAuth): Promise<string> {
  await fetchBranch(dir, ref, auth, "the pull request's branch");
  // -f: the runner's checkout is Consort's to reset (a self-hosted runner may keep a failed run's changes).
  const checkout = await git(dir, ['checkout', '-f', '-B', ref, `refs/remotes/origin/${ref}`]);
  if (checkout.code !== 0)
    throw new ConsortError('invalid-input', `Cannot check out ${ref}: ${checkout.stderr.trim()}`, {
      hint: 'The workspace must be a clean checkout.',
    });
  return (await git(dir, ['rev-parse', 'HEAD'])).stdout.trim();
}

/** Pushes HEAD to the branch; a rejected push (someone pushed meanwhile) is a clear error, never a force. */
export async function pushBranch(dir: string, ref: string, auth: GitAuth): Promise<void> {
  const pushed = await git(dir, ['push', '--porcelain', 'origin', `HEAD:refs/heads/${ref}`], authEnv(auth));
  if (pushed.code === 0) return;
  const why = `${pushed.stdout}\n${pushed.stderr}`;
  if (/\[rejected\]|non-fast-forward|fetch first/.test(why)) {
    throw new ConsortError(
      'branch-busy',
      `Someone pushed to ${ref} while Consort was working, so its commits were not pushed.`,
      {
        hint: 'Run `/consort build` again: it resumes from the last turn it pushed.',
      },
    );
  }
  throw new ConsortError('internal', `git push to ${ref} failed: ${pushed.stderr.trim().split('\n').pop() ?? ''}`, {
    hint: 'Give the job `permissions: contents: write`; branch protection must allow the workflow to push to the pull request branch.',
  });
}
