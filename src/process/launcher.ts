/**
 * Consort's own short commands (git, cp, chmod: an argv, no sandbox, no time limit, no stream of
 * output) are started by a small helper process, launcher-child.ts, which runs them with the same
 * runner (src/process/runner.ts) and answers over an IPC channel.
 *
 * Why: Node starts a child with fork(), which copies the parent's page tables, so it costs time in
 * proportion to the parent's memory and blocks its main thread meanwhile — 3–4 ms for a lane whose
 * process holds 130 MB, against ~1 ms for a 45 MB helper. A TDD cycle starts some thirty git
 * processes, most of them one after the other (measured: 3.4 ms median blocked per spawn in
 * `npm run bench:conductor`).
 *
 * The helper gets an allow-listed environment (childEnv()); each command still gets exactly the
 * environment its request holds, and its program by the absolute path this process resolved
 * (host-programs.ts). It is started on first use, in a session of its own (a Ctrl-C meant for
 * this process's group does not stop it mid-command), and holds nothing open: it leaves when this
 * process does (its IPC channel closes). Until it is ready — or if it cannot start, or has died —
 * the command is started here, as before. A command in flight when the helper dies fails (it may
 * or may not have run, so it is not run again): the run stops and says to run again.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnv } from '../core/child-env.js';
import { ConsortError, type ErrorCode } from '../core/errors.js';
import type { ProcessRequest, ProcessResult } from '../ports/process.js';

/** What the helper is sent: a request without what cannot cross (a signal, callbacks). */
export interface LauncherRequest {
  id: number;
  request: Omit<ProcessRequest, 'signal' | 'onOutput'>;
}

export type LauncherReply =
  { id: number; result: ProcessResult } | { id: number; error: { code: ErrorCode; message: string; hint?: string } };

/** Requests the helper may run: Consort's own argv commands that need nothing but their result. */
export function launchable(request: ProcessRequest): boolean {
  return (
    typeof request.command !== 'string' &&
    !request.isolate &&
    request.signal === undefined &&
    request.timeoutMs === undefined &&
    request.onOutput === undefined
  );
}

/** The helper's script: next to this module (lib/, or dist/ where the Action is one bundle). */
function helperScript(): string | null {
  const here = path.dirname(fileURLToPath(import.meta.url));
  for (const candidate of [
    path.join(here, 'launcher-child.js'),
    path.join(here, '..', '..', 'lib', 'src', 'process', 'launcher-child.js'),
  ])
    if (existsSync(candidate)) return candidate;
  return null;
}

interface Helper {
  child: ChildProcess;
  ready: boolean;
  pending: Map<number, { resolve: (r: ProcessResult) => void; reject: (e: unknown) => void }>;
}

let helper: Helper | null | undefined;
let nextId = 1;

/** Off (CONSORT_LAUNCHER=off, or no helper script): every command is started by this process. */
function disabled(): boolean {
  return process.env.CONSORT_LAUNCHER === 'off';
}

function start(): Helper | null {
  const script = helperScript();
  if (script === null) return null;
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [script], {
      cwd: '/',
      env: childEnv(),
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      serialization: 'advanced',
      detached: true,
    });
  } catch {
    return null;
  }
  const h: Helper = { child, ready: false, pending: new Map() };
  const gone = (): void => {
    if (helper === h) helper = null; // not started again: this process starts its own commands from now on
    for (const p of h.pending.values())
      p.reject(
        new ConsortError('internal', "The helper process that starts Consort's git commands stopped during one.", {
          hint: 'Run the command again: it resumes where it stopped.',
        }),
      );
    h.pending.clear();
  };
  child.on('error', gone);
  child.on('exit', gone);
  child.on('message', (message: unknown) => {
    if (message === 'ready') {
      h.ready = true;
      return;
    }
    const reply = message as LauncherReply;
    const p = h.pending.get(reply.id);
    if (p === undefined) return;
    h.pending.delete(reply.id);
    if (h.pending.size === 0) idle(h);
    if ('error' in reply)
      p.reject(
        new ConsortError(reply.error.code, reply.error.message, reply.error.hint ? { hint: reply.error.hint } : {}),
      );
    else p.resolve(withBuffers(reply.result));
  });
  idle(h);
  return h;
}

/** Nothing pending: the helper must not keep this process alive. */
function idle(h: Helper): void {
  h.child.unref();
  h.child.channel?.unref();
}

/** Buffers cross the channel as Uint8Arrays. */
function withBuffers(result: ProcessResult): ProcessResult {
  const stdout = result.stdout as Uint8Array | undefined;
  return stdout === undefined
    ? result
    : { ...result, stdout: Buffer.from(stdout.buffer, stdout.byteOffset, stdout.byteLength) };
}

/**
 * Run `request` (its program already resolved to an absolute path) in the helper; null when the
 * helper is not ready, so the caller starts the command itself. `direct` is how the caller would
 * have started it: used when the request could not be handed over.
 */
export function viaLauncher(
  request: ProcessRequest,
  direct: () => Promise<ProcessResult>,
): Promise<ProcessResult> | null {
  if (disabled() || !launchable(request)) return null;
  if (helper === undefined) helper = start();
  const h = helper;
  if (h === null || !h.ready || !h.child.connected) return null;
  const id = nextId++;
  return new Promise<ProcessResult>((resolve, reject) => {
    h.pending.set(id, { resolve, reject });
    h.child.ref();
    h.child.channel?.ref();
    const { signal: _signal, onOutput: _onOutput, ...rest } = request;
    const message: LauncherRequest = { id, request: rest };
    try {
      h.child.send(message, (error) => {
        if (error === null || !h.pending.has(id)) return;
        h.pending.delete(id);
        direct().then(resolve, reject);
      });
    } catch {
      h.pending.delete(id);
      direct().then(resolve, reject);
    }
  });
}
