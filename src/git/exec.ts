/**
 * The one place git is started, through the ProcessRunner: always with hooks, fsmonitor and the
 * untracked cache off and `-c core.quotepath=off` (src/git/safe.ts), and an allow-listed environment
 * (gitEnv: LC_ALL=C, no prompts, no system config). Callers parse what it returns; none spawns git.
 */
import type { ProcessRunner } from '../ports/process.js';
import { hostProgram } from '../process/host-programs.js';
import { localProcessRunner } from '../process/runner.js';
import { gitEnv, NO_FSMONITOR_ARGS, SAFE_GIT_ARGS } from './safe.js';

export interface GitResult {
  code: number;
  stdout: string;
  /** stdout as bytes (blobs). */
  bytes: Buffer;
  stderr: string;
}

export interface GitOptions {
  input?: string;
  /** Variables laid on gitEnv() (a push's auth header config, a demo's author). */
  env?: Record<string, string>;
  /** Credential-looking names in `env` the child may receive. */
  secrets?: readonly string[];
  /** Default: the local runner. */
  processes?: ProcessRunner;
  /**
   * Leave `core.hooksPath` as the user configured it (for reading that setting: `-c` would answer
   * for it). Only for commands that run no hook.
   */
  userHooksPath?: boolean;
  /** Read git's global files in the home folder even while a run pins them (src/git/pinned-config.ts). */
  realGlobalConfig?: boolean;
}

/**
 * git's absolute path as PATH named it before any untrusted code of a run (src/process/host-programs.ts):
 * a `git` a suite plants in `~/.local/bin` later is never the conductor's.
 */
export function gitProgram(): string {
  return hostProgram('git');
}

/** Bound on stderr kept (stdout is kept whole: it is data). */
const MAX_STDERR = 1024 * 1024;

export async function git(cwd: string, args: readonly string[], options: GitOptions = {}): Promise<GitResult> {
  let r;
  try {
    r = await (options.processes ?? localProcessRunner).run({
      command: [
        gitProgram(),
        ...(options.userHooksPath ? NO_FSMONITOR_ARGS : SAFE_GIT_ARGS),
        '-c',
        'core.quotepath=off',
        ...args,
      ],
      cwd,
      env: gitEnv(options.env, options.secrets, options.realGlobalConfig),
      ...(options.input !== undefined ? { input: options.input } : {}),
      captureStdout: true,
      maxOutputBytes: MAX_STDERR,
    });
  } catch (e) {
    // A working directory that does not exist: git's own failure, as git would report it.
    return { code: -1, stdout: '', bytes: Buffer.alloc(0), stderr: e instanceof Error ? e.message : String(e) };
  }
  const bytes = r.stdout ?? Buffer.alloc(0);
  const code = r.exitCode ?? (r.notFound ? 127 : -1);
  return { code, stdout: bytes.toString('utf8'), bytes, stderr: r.output };
}
