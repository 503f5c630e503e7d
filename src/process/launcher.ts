/**
 * Where the ProcessRunner's children are started: by a small helper process of ours (the launcher),
 * not by this process. Starting a program means fork(), and fork() copies the page tables of the
 * process that calls it; on the virtual machines CI runs on here (Firecracker) that costs about
 * 0.08 ms per MB the caller has touched: 25 ms for a 300 MB conductor or jest worker, 1.5 ms for
 * the launcher, measured in docs/benchmarks.md. posix_spawn would avoid the copy, but Node has no
 * such call, and the caller's thread waits for the whole fork: the TDD lane starts a dozen git
 * processes on its critical path per cycle.
 *
 * The launcher is `node -e` with the script below, started on first use with an empty environment
 * (every request carries the child's whole, allow-listed environment) and no inherited options. It
 * starts each child exactly as the runner would (detached into its own process group, the same
 * stdio) and relays its pid, output, exit and close over the IPC channel; signals go from here to
 * the child's group directly. Until it says it is ready, children are spawned here (nothing waits
 * for its start); idle for 20 s it offers to exit, and does when its parent has nothing in flight;
 * it exits with its parent (the channel's disconnect). It is used
 * once this process is large (150 MB resident) or CONSORT_LAUNCHER=on; never under Electron (VS
 * Code's extension host), with CONSORT_LAUNCHER=off, or when it does not start: children are then
 * spawned here as before. Its output relay has flow control: above 4 MB not yet taken by this
 * process, the children's pipes are paused (the output waits there, as it would for a direct child).
 *
 * Known limits: a launcher killed in the instant between forking a child and telling this process
 * its pid leaves that child unknown here (an isolated one is still swept by its marker); a launcher
 * stopped (SIGSTOP) holds its commands' results until it runs again — only a process of this user
 * can do either, and it could do the same to this process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';

export interface SpawnRequest {
  file: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to stdin, then closed; without it stdin is /dev/null. */
  input?: string | Buffer;
}

/**
 * A started child, as the runner uses it. Events: `spawn` (pid), `data` (stream, chunk), `error`
 * (an Error with the errno `code`), `exit` (code, signal), `close` (its output is done).
 */
export interface Started extends EventEmitter {
  pid: number | undefined;
  /** Stop reading its output (stragglers holding the pipes): `close` follows. */
  destroyStreams(): void;
}

/** A launcher with nothing to do for this long offers to exit (a jest worker starts one per test file's modules). */
let idleMs = 20_000;

/** How long launchers started from now on stay idle before they offer to exit (tests). */
export function setLauncherIdleMs(ms: number): void {
  idleMs = ms;
}

/** The launcher's own code (CommonJS, run by `node -e`): start, relay, nothing else. */
const script = (): string => `
const { spawn } = require('node:child_process');
const children = new Map();
const send = (m) => { if (process.connected) process.send(m, () => {}); };
let idle;
// Flow control: output waits in the child's pipe, not in this process, while the parent is behind.
let queued = 0;
const paused = new Set();
const relay = (id, s, stream, c) => {
  if (!process.connected) return;
  queued += c.length;
  process.send({ id, ev: 'data', s, c }, () => {
    queued -= c.length;
    if (queued < ${1 << 20}) { for (const p of paused) p.resume(); paused.clear(); }
  });
  if (queued >= ${4 << 20}) { stream.pause(); paused.add(stream); }
};
// Idle for a while, it offers to go; it goes only when its parent says so (no request is in flight).
const rest = () => { clearTimeout(idle); if (children.size === 0) idle = setTimeout(() => send({ id: 0, ev: 'idle' }), ${idleMs}); };
process.on('disconnect', () => process.exit(0));
process.on('message', (m) => {
  if (m.op === 'exit') { if (children.size === 0) process.exit(0); return; }
  if (m.op === 'destroy') {
    const c = children.get(m.id);
    if (c) { paused.delete(c.stdout); paused.delete(c.stderr); c.stdout.destroy(); c.stderr.destroy(); }
    return;
  }
  if (m.op !== 'spawn') return;
  clearTimeout(idle);
  const id = m.id;
  let child;
  try {
    child = spawn(m.file, m.args, { cwd: m.cwd, env: m.env, detached: true,
      stdio: [m.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
  } catch (e) {
    send({ id, ev: 'error', code: e.code, message: String(e.message) });
    send({ id, ev: 'close' });
    rest();
    return;
  }
  if (!child.stdout || !child.stderr) {
    // EMFILE/ENFILE: Node gives no stdio; only 'error' follows.
    child.once('error', (e) => { send({ id, ev: 'error', code: e.code, message: String(e.message) }); send({ id, ev: 'close' }); rest(); });
    return;
  }
  children.set(id, child);
  if (child.pid !== undefined) send({ id, ev: 'spawn', pid: child.pid });
  if (m.input !== undefined) { child.stdin.on('error', () => {}); child.stdin.end(m.input); }
  child.stdout.on('data', (c) => relay(id, 'stdout', child.stdout, c));
  child.stderr.on('data', (c) => relay(id, 'stderr', child.stderr, c));
  child.on('error', (e) => send({ id, ev: 'error', code: e.code, message: String(e.message) }));
  child.on('exit', (code, signal) => send({ id, ev: 'exit', code, signal }));
  child.on('close', () => { children.delete(id); send({ id, ev: 'close' }); rest(); });
});
send({ id: 0, ev: 'ready' });
rest();
`;

type Message =
  | { id: 0; ev: 'ready' | 'idle' }
  | { id: number; ev: 'spawn'; pid: number }
  | { id: number; ev: 'data'; s: 'stdout' | 'stderr'; c: Uint8Array }
  | { id: number; ev: 'error'; code?: string; message: string }
  | { id: number; ev: 'exit'; code: number | null; signal: NodeJS.Signals | null }
  | { id: number; ev: 'close' };

class Launched extends EventEmitter implements Started {
  pid: number | undefined;
  closed = false;
  constructor(
    private readonly destroy: () => void,
    /** The launcher relaying it (none: spawned here). */
    readonly owner: ChildProcess | null = null,
  ) {
    super();
  }
  destroyStreams(): void {
    this.destroy();
  }
}

let launcher: ChildProcess | null = null;
const readyWaiters: ((ready: boolean) => void)[] = [];
/** It said it is ready: until then children are spawned here, not queued behind its start. */
let ready = false;
let broken = false;
let nextId = 1;
const running = new Map<number, Launched>();

function errorOf(code: string | undefined, message: string): NodeJS.ErrnoException {
  const e: NodeJS.ErrnoException = new Error(message);
  if (code !== undefined) e.code = code;
  return e;
}

function startLauncher(): ChildProcess | null {
  if (launcher !== null) return launcher;
  if (broken) return null;
  let proc: ChildProcess;
  try {
    proc = spawn(process.execPath, ['-e', script()], {
      env: {},
      // A group of its own, as every child's: Ctrl-C at a terminal (or a CI runner's signal to this
      // process group) reaches this process, which cancels its commands as it always has, and not
      // the launcher, whose death would turn that cancel into "the launcher exited".
      detached: true,
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
  } catch {
    broken = true;
    return null;
  }
  proc.on('message', (m: Message) => {
    if (m.ev === 'ready') {
      if (launcher === proc) ready = true;
      for (const wake of readyWaiters.splice(0)) wake(ready);
      return;
    }
    if (m.ev === 'idle') {
      // Only with nothing in flight; a request sent meanwhile keeps it (it exits only when told).
      if (launcher === proc && running.size === 0) {
        launcher = null;
        ready = false;
        proc.send({ op: 'exit' });
      }
      return;
    }
    const child = running.get(m.id);
    if (child === undefined) return;
    switch (m.ev) {
      case 'spawn':
        child.pid = m.pid;
        child.emit('spawn', m.pid);
        break;
      case 'data':
        child.emit('data', m.s, Buffer.from(m.c.buffer, m.c.byteOffset, m.c.byteLength));
        break;
      case 'error':
        child.emit('error', errorOf(m.code, m.message));
        break;
      case 'exit':
        child.emit('exit', m.code, m.signal);
        break;
      case 'close':
        settle(m.id);
        break;
    }
  });
  let over = false;
  const gone = (): void => {
    if (over) return; // exit, disconnect and error may each say so
    over = true;
    if (launcher === proc) {
      launcher = null;
      ready = false;
      for (const wake of readyWaiters.splice(0)) wake(false);
    }
    // Whatever it was relaying is lost: each child's group is stopped (nothing runs on unwatched),
    // and its caller hears an error.
    for (const [id, child] of [...running]) {
      if (child.owner !== proc) continue; // another (newer) launcher's
      if (child.pid !== undefined)
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // gone already
        }
      child.emit('error', errorOf('ELAUNCHER', 'the process launcher exited while the command ran'));
      settle(id);
    }
  };
  let saidReady = false;
  proc.once('message', () => {
    saidReady = true;
  });
  proc.on('error', () => {
    // One that never came up will not next time either (no node to run it); a send to one that
    // died is only that.
    if (!saidReady) broken = true;
    gone();
  });
  proc.on('exit', gone);
  proc.on('disconnect', gone);
  launcher = proc;
  idle(proc);
  return proc;
}

function settle(id: number): void {
  const child = running.get(id);
  running.delete(id);
  if (launcher !== null && running.size === 0) idle(launcher);
  if (child !== undefined && !child.closed) {
    child.closed = true;
    child.emit('close');
  }
}

/** Nothing pending: the launcher must not keep this process alive. */
function idle(proc: ChildProcess): void {
  proc.unref();
  (proc.channel as { unref?: () => void } | undefined)?.unref?.();
}

function busy(proc: ChildProcess): void {
  proc.ref();
  (proc.channel as { ref?: () => void } | undefined)?.ref?.();
}

/**
 * Start the launcher now (where it would be used) and wait until it is ready: whether children
 * will go through it. A process that will start many children can call it ahead of the first.
 */
export function warmLauncher(): Promise<boolean> {
  if (!usable()) return Promise.resolve(false);
  const proc = startLauncher();
  if (proc === null) return Promise.resolve(false);
  if (ready) return Promise.resolve(true);
  busy(proc); // waited for: it keeps this process up until it is ready
  return new Promise((resolve) =>
    readyWaiters.push((ok) => {
      if (running.size === 0) idle(proc);
      resolve(ok);
    }),
  );
}

/** The launcher's pid while one runs (diagnostics and tests). */
export function launcherPid(): number | null {
  return launcher?.pid ?? null;
}

/**
 * Above this resident size a fork here costs more than the launcher's round trip (12 ms against 3
 * at 200 MB on the CI machine; the launcher's own start, ~50 ms once, is not worth it for a small
 * short-lived process such as a git hook's `consort`).
 */
const LAUNCH_ABOVE_BYTES = 150 * 2 ** 20;

/** CONSORT_LAUNCHER: `on` always, `off` never, else by this process's size. */
function usable(): boolean {
  if (process.versions.electron !== undefined) return false;
  const setting = process.env.CONSORT_LAUNCHER;
  if (setting === 'off') return false;
  return setting === 'on' || launcher !== null || process.memoryUsage.rss() >= LAUNCH_ABOVE_BYTES;
}

/** Start a child (detached into its own process group; stdout and stderr piped). */
export function startChild(request: SpawnRequest): Started {
  const proc = usable() ? startLauncher() : null;
  if (proc === null || !ready || !proc.connected) return direct(request);
  const id = nextId++;
  const child = new Launched(() => {
    if (proc.connected) proc.send({ op: 'destroy', id });
  }, proc);
  try {
    proc.send({
      op: 'spawn',
      id,
      file: request.file,
      args: [...request.args],
      cwd: request.cwd,
      // A plain copy: `process.env` itself cannot be cloned onto the channel.
      env: Object.fromEntries(Object.entries(request.env).filter(([, v]) => v !== undefined)),
      ...(request.input !== undefined ? { input: request.input } : {}),
    });
  } catch {
    return direct(request); // a request the channel cannot carry: nothing was sent
  }
  running.set(id, child);
  busy(proc);
  return child;
}

/** The same, spawned by this process. */
function direct(request: SpawnRequest): Started {
  const out = new Launched(() => {
    proc.stdout?.destroy();
    proc.stderr?.destroy();
  });
  const proc = spawn(request.file, [...request.args], {
    cwd: request.cwd,
    env: request.env,
    detached: true,
    // No stdin unless there is input: a suite that waits for input would otherwise hang until the timeout.
    stdio: [request.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  proc.on('error', (e) => out.emit('error', e));
  if (proc.stdout === null || proc.stderr === null) {
    // Out of descriptors (EMFILE, ENFILE): Node gives no pipes, and its 'error' follows.
    proc.once('error', () => out.emit('close'));
    return out;
  }
  out.pid = proc.pid;
  if (request.input !== undefined) {
    proc.stdin!.on('error', () => undefined); // a child that exits without reading its input
    proc.stdin!.end(request.input);
  }
  proc.stdout!.on('data', (c: Buffer) => out.emit('data', 'stdout', c));
  proc.stderr!.on('data', (c: Buffer) => out.emit('data', 'stderr', c));
  proc.on('exit', (code, signal) => out.emit('exit', code, signal));
  proc.on('close', () => out.emit('close'));
  return out;
}
