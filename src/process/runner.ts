/**
 * The ProcessRunner's one adapter (src/ports/process.ts). Every child runs so that it can always be
 * stopped: it gets its own process group, so a timeout or an abort reaches every grandchild a test
 * runner forks (workers, servers, `sleep`s in shell scripts), not just the shell we started. The
 * child's environment is the request's, as given (plus the isolation marker): nothing is read from
 * this process's.
 */
import { stat } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { ConsortError } from '../core/errors.js';
import type { ProcessRequest, ProcessResult, ProcessRunner } from '../ports/process.js';
import { hostProgram } from './host-programs.js';
import { startChild } from './launcher.js';
import {
  hideFromIsolated,
  hideProofTreeFromIsolated,
  isolation,
  isolationKind,
  type IsolationKind,
  protectFromIsolated,
} from './isolate.js';
import { docsUrl } from '../core/docs-url.js';

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

function validate(options: ProcessRequest): void {
  const empty = typeof options.command === 'string' ? options.command.trim() === '' : options.command[0] === '';
  if (empty) {
    throw new ConsortError('invalid-input', 'Cannot run an empty command.', { hint: 'Set the suite command.' });
  }
  if (typeof options.command !== 'string' && options.isolate) {
    throw new ConsortError('internal', 'Only shell commands run isolated.');
  }
  if (!(options.timeoutMs === undefined || options.timeoutMs > 0) || !(options.maxOutputBytes >= 0)) {
    throw new ConsortError('invalid-input', 'timeoutMs must be positive and maxOutputBytes must not be negative.');
  }
}

export interface ProcessRunnerOptions {
  /** How isolated requests are sandboxed (default: what src/process/isolate.ts finds on this machine). */
  isolation?: IsolationKind;
}

export function createProcessRunner(runnerOptions: ProcessRunnerOptions = {}): ProcessRunner {
  return {
    run: (request) => runProcess(request, runnerOptions),
    protect: (paths) => {
      const releases = paths.map((p) => protectFromIsolated(p));
      return () => releases.forEach((release) => release());
    },
    hide: (dir) => hideFromIsolated(dir),
    hideProofTree: (dir) => hideProofTreeFromIsolated(dir),
    canBind: () => (runnerOptions.isolation ?? isolationKind()) === 'bwrap',
  };
}

/** The runner every composition root builds on (isolation as the machine allows). */
export const localProcessRunner: ProcessRunner = createProcessRunner();

async function runProcess(options: ProcessRequest, runnerOptions: ProcessRunnerOptions): Promise<ProcessResult> {
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

  const stdoutChunks: Buffer[] | undefined = options.captureStdout ? [] : undefined;

  return new Promise<ProcessResult>((resolve, reject) => {
    const shell = typeof options.command === 'string' ? options.command : undefined;
    const sandbox =
      shell !== undefined && options.isolate
        ? isolation(runnerOptions.isolation, {
            ...(options.readOnly ? { readOnly: options.readOnly } : {}),
            ...(options.writable ? { writable: options.writable } : {}),
            ...(options.binds ? { binds: options.binds } : {}),
            ...(options.masks ? { masks: options.masks } : {}),
            ...(options.reshown ? { reshown: options.reshown } : {}),
          })
        : undefined;
    const argv = options.command as readonly string[];
    const [program, args]: [string, string[]] =
      shell === undefined
        ? // A program by name as PATH named it before any untrusted code ran (host-programs.ts).
          [hostProgram(argv[0]!, options.env.PATH ?? ''), argv.slice(1)]
        : sandbox
          ? sandbox.argv(shell)
          : ['/bin/sh', ['-c', shell]];
    const child = startChild({
      file: program,
      args,
      cwd: options.cwd,
      env: { ...options.env, ...sandbox?.env },
      ...(options.input !== undefined ? { input: options.input } : {}),
    });
    let timedOut = false;
    let aborted = false;
    let exit: { code: number | null; signal: string | null } | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;
    let settled = false;

    let stopping = false;
    const stop = (): void => {
      stopping = true;
      const pgid = child.pid;
      if (pgid === undefined || !signalGroup(pgid, 'SIGTERM')) return;
      killTimer ??= setTimeout(() => signalGroup(pgid, 'SIGKILL'), grace);
    };
    // Started by the launcher, the pid comes a moment later: a stop asked for before it is done then.
    child.on('spawn', () => {
      if (stopping) stop();
    });
    const timeout =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
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
      if (error !== undefined && !(shell === undefined && (error as NodeJS.ErrnoException).code === 'ENOENT')) {
        const lost = (error as NodeJS.ErrnoException).code === 'ELAUNCHER';
        reject(
          lost
            ? new ConsortError('internal', `${program} was stopped: the process launcher exited while it ran.`, {
                hint: `Run it again; CONSORT_LAUNCHER=off starts children without the launcher (${docsUrl('configuration.md')}).`,
                cause: error,
              })
            : new ConsortError('internal', `Could not start ${program} to run the command: ${String(error)}`, {
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
        ...(stdoutChunks ? { stdout: Buffer.concat(stdoutChunks) } : {}),
        // An argv whose program does not exist fails to start (ENOENT), a shell's command exits 127.
        notFound: error !== undefined || (shell !== undefined && exitCode === 127 && !timedOut && !aborted),
      });
    };

    const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
    child.on('data', (name: 'stdout' | 'stderr', chunk: Buffer) => {
      if (stdoutChunks && name === 'stdout') stdoutChunks.push(chunk);
      else output.push(chunk);
      if (!options.onOutput) return;
      try {
        options.onOutput(decoders[name].write(chunk), name);
      } catch {
        // A broken progress callback must not take the run down with it.
      }
    });
    child.on('error', (error: Error) => finish(error));
    child.on('exit', (code: number | null, signal: string | null) => {
      exit = { code, signal };
      // The command has finished: a timeout or abort now would misreport how it ended.
      clearTimeout(timeout);
      options.signal?.removeEventListener('abort', onAbort);
      // Background processes the command left behind would outlive the run and hold the pipes open.
      stop();
      sandbox?.sweep();
      drainTimer = setTimeout(() => {
        child.destroyStreams();
        finish();
      }, grace + PIPE_DRAIN_MS);
    });
    child.on('close', () => finish());
  });
}
