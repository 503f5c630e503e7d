/**
 * Runs a user's command (a test suite, a migration tool) as a child process that can always be
 * stopped: it gets its own process group, so a timeout or an abort reaches every grandchild a test
 * runner forks (workers, servers, `sleep`s in shell scripts), not just the shell we started.
 */
import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { childEnv } from '../core/child-env.js';
import { ConsortError } from '../core/errors.js';
import { isolation } from './isolate.js';

export interface RunCommandOptions {
  /** Shell text, run as `/bin/sh -c command` so users can write pipes, `&&` and `VAR=x cmd`. */
  command: string;
  cwd: string;
  /**
   * What the command gets besides the allow-listed basics (PATH, HOME, LANG, … read from
   * `inherit`): the branch URL, the turn's variables. `undefined` removes a variable. Nothing else
   * of Consort's environment reaches the command (src/core/child-env.ts).
   */
  env?: Record<string, string | undefined>;
  /** Where the basics come from (default: process.env). */
  inherit?: NodeJS.ProcessEnv;
  /** More names to take from `inherit` (a caller's own allow-list); credential names are dropped all the same. */
  pass?: readonly string[];
  /** Credential-looking variables this command may still receive (an agent's own model key). */
  secrets?: readonly string[];
  /**
   * Untrusted code (an agent's turn, a proof's suite): run it in a PID namespace where available,
   * so nothing it starts outlives it and it cannot read its ancestors' environments (src/suite/isolate.ts).
   */
  isolate?: boolean;
  /** With `isolate`: folders bound read-only (and writable ones inside them) where bubblewrap is used. */
  readOnly?: readonly string[];
  writable?: readonly string[];
  timeoutMs: number;
  /** Bound on captured output; the head and the tail are kept because errors show up in both. */
  maxOutputBytes: number;
  /** Time between SIGTERM and SIGKILL. Default 2000 ms. */
  killGraceMs?: number;
  signal?: AbortSignal;
  /** Every chunk as it arrives (unbounded), for progress streaming. */
  onOutput?: (chunk: string, stream: 'stdout' | 'stderr') => void;
}

export interface CommandResult {
  exitCode: number | null;
  /** The signal that ended the command's shell, e.g. `SIGTERM` after a timeout. */
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
  /** Combined stdout and stderr in arrival order; a marker line stands where bytes were dropped. */
  output: string;
  droppedBytes: number;
  /** The shell could not find the command (exit 127). */
  notFound: boolean;
}

const DEFAULT_GRACE_MS = 2000;
/** After the shell exits, how long to wait for escaped stragglers to release the output pipes. */
const PIPE_DRAIN_MS = 500;

/** Keeps the first and last halves of a byte stream and counts what fell in between. */
class BoundedOutput {
  private readonly head: Buffer[] = [];
  private readonly tail: Buffer[] = [];
  private headBytes = 0;
  private tailBytes = 0;
  private total = 0;
  private readonly headLimit: number;
  private readonly tailLimit: number;

  constructor(limit: number) {
    this.headLimit = Math.floor(limit / 2);
    this.tailLimit = limit - this.headLimit;
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.headBytes < this.headLimit) {
      const take = Math.min(rest.length, this.headLimit - this.headBytes);
      this.head.push(rest.subarray(0, take));
      this.headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0) return;
    this.tail.push(rest);
    this.tailBytes += rest.length;
    while (this.tail.length > 1 && this.tailBytes - this.tail[0]!.length >= this.tailLimit) {
      this.tailBytes -= this.tail.shift()!.length;
    }
  }

  result(): { output: string; droppedBytes: number } {
    const tail = Buffer.concat(this.tail);
    const kept = tail.subarray(Math.max(0, tail.length - this.tailLimit));
    const droppedBytes = this.total - this.headBytes - kept.length;
    const head = Buffer.concat(this.head).toString('utf8');
    if (droppedBytes === 0) return { output: head + kept.toString('utf8'), droppedBytes };
    const marker = `\n[... ${droppedBytes} bytes of output dropped ...]\n`;
    return { output: head + marker + kept.toString('utf8'), droppedBytes };
  }
}

/** Signal a whole process group; a group that is already gone is the outcome we wanted. */
function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

async function assertDirectory(cwd: string): Promise<void> {
  const info = await stat(cwd).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new ConsortError('invalid-input', `Cannot run the command: working directory ${cwd} does not exist.`, {
      hint: 'Check the working directory in the configuration (paths are relative to the repository root).',
    });
  }
}

function validate(options: RunCommandOptions): void {
  if (options.command.trim() === '') {
    throw new ConsortError('invalid-input', 'Cannot run an empty command.', { hint: 'Set the suite command.' });
  }
  if (!(options.timeoutMs > 0) || !(options.maxOutputBytes >= 0)) {
    throw new ConsortError('invalid-input', 'timeoutMs must be positive and maxOutputBytes must not be negative.');
  }
}

export async function runCommand(options: RunCommandOptions): Promise<CommandResult> {
  validate(options);
  const started = performance.now();
  if (options.signal?.aborted) {
    return {
      exitCode: null,
      signal: null,
      timedOut: false,
      aborted: true,
      durationMs: 0,
      output: '',
      droppedBytes: 0,
      notFound: false,
    };
  }
  await assertDirectory(options.cwd);
  const grace = options.killGraceMs ?? DEFAULT_GRACE_MS;
  const output = new BoundedOutput(options.maxOutputBytes);

  return new Promise<CommandResult>((resolve, reject) => {
    const sandbox = options.isolate
      ? isolation(undefined, {
          ...(options.readOnly ? { readOnly: options.readOnly } : {}),
          ...(options.writable ? { writable: options.writable } : {}),
        })
      : undefined;
    const [program, args] = sandbox ? sandbox.argv(options.command) : ['/bin/sh', ['-c', options.command]];
    const child = spawn(program, args, {
      cwd: options.cwd,
      env: childEnv(
        { ...options.env, ...sandbox?.env },
        {
          ...(options.inherit ? { inherit: options.inherit } : {}),
          ...(options.secrets ? { secrets: options.secrets } : {}),
          ...(options.pass ? { pass: options.pass } : {}),
        },
      ),
      detached: true,
      // No stdin: a suite that waits for input would otherwise hang until the timeout.
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let timedOut = false;
    let aborted = false;
    let exit: { code: number | null; signal: string | null } | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;
    let settled = false;

    const stop = (): void => {
      const pgid = child.pid;
      if (pgid === undefined || !signalGroup(pgid, 'SIGTERM')) return;
      killTimer ??= setTimeout(() => signalGroup(pgid, 'SIGKILL'), grace);
    };
    const timeout = setTimeout(() => {
      timedOut = true;
      stop();
    }, options.timeoutMs);
    const onAbort = (): void => {
      aborted = true;
      stop();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });

    const finish = (error?: unknown): void => {
      if (settled) return;
      settled = true;
      sandbox?.sweep();
      clearTimeout(timeout);
      clearTimeout(drainTimer);
      options.signal?.removeEventListener('abort', onAbort);
      // A pending SIGKILL stays armed while the group exists (stragglers that closed their output
      // and ignore SIGTERM), but it must not keep the caller's process alive.
      if (killTimer && (child.pid === undefined || !signalGroup(child.pid, 0))) clearTimeout(killTimer);
      else killTimer?.unref();
      if (error !== undefined) {
        reject(
          new ConsortError('internal', `Could not start /bin/sh to run the command: ${String(error)}`, {
            cause: error,
          }),
        );
        return;
      }
      const { output: text, droppedBytes } = output.result();
      const exitCode = exit?.code ?? null;
      resolve({
        exitCode,
        signal: exit?.signal ?? null,
        timedOut,
        aborted,
        durationMs: Math.round(performance.now() - started),
        output: text,
        droppedBytes,
        notFound: exitCode === 127 && !timedOut && !aborted,
      });
    };

    for (const name of ['stdout', 'stderr'] as const) {
      const decoder = new StringDecoder('utf8');
      child[name].on('data', (chunk: Buffer) => {
        output.push(chunk);
        if (!options.onOutput) return;
        try {
          options.onOutput(decoder.write(chunk), name);
        } catch {
          // A broken progress callback must not take the run down with it.
        }
      });
    }
    child.on('error', (error) => finish(error));
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // The command has finished: a timeout or abort now would misreport how it ended.
      clearTimeout(timeout);
      options.signal?.removeEventListener('abort', onAbort);
      // Background processes the command left behind would outlive the run and hold the pipes open.
      stop();
      sandbox?.sweep();
      drainTimer = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        finish();
      }, grace + PIPE_DRAIN_MS);
    });
    child.on('close', () => finish());
  });
}
