/**
 * The ProcessRunner's children are started by the launcher (src/process/launcher.ts), a small
 * helper process, so that fork() does not copy a large caller's page tables. What the runner
 * promises holds through it (test/process/runner.test.ts runs through it too); here, what is the
 * launcher's own: it is really the parent, it leaks no descriptor of its own, it neither keeps its
 * parent alive nor outlives it, and a launcher that dies takes no command's result silently.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { launcherPid, setLauncherIdleMs, warmLauncher } from '../../src/process/launcher.js';
import { runnerIn } from '../helpers/run-process.js';

const execFileAsync = promisify(execFile);
let cwd: string;
beforeAll(async () => {
  process.env.CONSORT_LAUNCHER = 'on'; // whatever this worker's size
  cwd = await realpath(await mkdtemp(path.join(tmpdir(), 'consort-launcher-')));
});
afterAll(async () => {
  delete process.env.CONSORT_LAUNCHER;
  await rm(cwd, { recursive: true, force: true });
});

const run = runnerIn(() => cwd);

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(check: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return check();
}

it('starts children from the launcher, not from this process (CONSORT_LAUNCHER=on); =off starts them here', async () => {
  expect(await warmLauncher()).toBe(true);
  const r = await run('echo $PPID');
  expect(launcherPid()).not.toBeNull();
  expect(Number(r.output.trim())).toBe(launcherPid());
  expect(launcherPid()).not.toBe(process.pid);
  process.env.CONSORT_LAUNCHER = 'off';
  try {
    expect(Number((await run('echo $PPID')).output.trim())).toBe(process.pid);
  } finally {
    process.env.CONSORT_LAUNCHER = 'on';
  }
});

it('gives a child no descriptor beyond what a child of this process gets (its channel stays its own)', async () => {
  expect(await warmLauncher()).toBe(true);
  const list = 'for f in /proc/self/fd/*; do readlink $f; done | grep -v "^/proc" | sed "s/:\\[.*//" | sort | uniq -c';
  const launched = (await run(list)).output;
  process.env.CONSORT_LAUNCHER = 'off';
  let direct: string;
  try {
    direct = (await run(list)).output;
  } finally {
    process.env.CONSORT_LAUNCHER = 'on';
  }
  const sockets = (text: string) => Number(/(\d+) socket/.exec(text)?.[1] ?? 0);
  expect(sockets(launched)).toBeLessThanOrEqual(sockets(direct));
  expect(launched).toMatch(/pipe/);
});

it('neither keeps its parent alive nor outlives it', async () => {
  // A parent that runs one command and prints the launcher's pid: it must exit on its own. The
  // built modules (npm test builds lib/ first): a plain node process, as the CLI is.
  const script = `
    import { localProcessRunner } from ${JSON.stringify(path.resolve('lib/src/process/runner.js'))};
    import { launcherPid } from ${JSON.stringify(path.resolve('lib/src/process/launcher.js'))};
    const { warmLauncher } = await import(${JSON.stringify(path.resolve('lib/src/process/launcher.js'))});
    await warmLauncher();
    const r = await localProcessRunner.run({ command: ['true'], cwd: '/', env: { PATH: process.env.PATH }, maxOutputBytes: 1024 });
    console.log(JSON.stringify({ code: r.exitCode, launcher: launcherPid() }));`;
  const started = Date.now();
  const { stdout } = await execFileAsync(process.execPath, ['--input-type=module', '-e', script], {
    timeout: 20_000,
    env: { PATH: process.env.PATH, CONSORT_LAUNCHER: 'on' },
  });
  expect(Date.now() - started).toBeLessThan(15_000);
  const { code, launcher } = JSON.parse(stdout.trim()) as { code: number; launcher: number };
  expect(code).toBe(0);
  expect(launcher).toBeGreaterThan(0);
  expect(await until(() => !alive(launcher))).toBe(true);
});

it('fails a command whose launcher died, stops its group, and starts a new launcher for the next', async () => {
  const marker = path.join(cwd, 'still-running');
  expect(await warmLauncher()).toBe(true);
  const first = launcherPid()!;
  const pending = run(`sleep 3 && touch ${marker}`);
  await new Promise((r) => setTimeout(r, 300));
  process.kill(first, 'SIGKILL');
  await expect(pending).rejects.toThrow(/launcher exited/);
  expect(await warmLauncher()).toBe(true);
  const next = await run('echo $PPID');
  expect(next.exitCode).toBe(0);
  expect(Number(next.output.trim())).toBe(launcherPid());
  expect(launcherPid()).not.toBe(first);
  await new Promise((r) => setTimeout(r, 3500));
  const { access } = await import('node:fs/promises');
  await expect(access(marker)).rejects.toThrow();
});

it('spawns here while the launcher starts, and an idle launcher leaves only when nothing is in flight', async () => {
  setLauncherIdleMs(300);
  try {
    // The current launcher (idle time of its own) is told to go: kill it, so a short-lived one starts.
    const before = launcherPid();
    if (before !== null) process.kill(before, 'SIGKILL');
    await until(() => launcherPid() === null);
    // Not ready yet: this child is this process's own, and the launcher starts behind it.
    expect(Number((await run('echo $PPID')).output.trim())).toBe(process.pid);
    expect(await warmLauncher()).toBe(true);
    const short = launcherPid()!;
    // A command longer than the idle time keeps it; so does a request sent as it offers to go.
    expect((await run('sleep 0.6; echo $PPID')).output.trim()).toBe(String(short));
    const racing = await Promise.all(
      Array.from({ length: 20 }, (_, i) => new Promise((r) => setTimeout(r, 15 * i)).then(() => run('true'))),
    );
    expect(racing.every((r) => r.exitCode === 0)).toBe(true);
    // Then, idle, it goes; the next command is spawned here again and a new launcher starts.
    expect(await until(() => !alive(short), 5000)).toBe(true);
    expect(launcherPid()).toBeNull();
    expect((await run('true')).exitCode).toBe(0);
  } finally {
    setLauncherIdleMs(20_000);
  }
});

it('holds a flood in the child’s pipe, not in the launcher, while this process is busy', async () => {
  expect(await warmLauncher()).toBe(true);
  const pid = launcherPid()!;
  const rss = (): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
  const flood = run('head -c 200000000 /dev/zero', { maxOutputBytes: 1024 * 1024, timeoutMs: 60_000 });
  // This process's thread busy for 1.5 s, as a conductor's or a jest worker's can be: without flow
  // control the launcher queued everything the child wrote meanwhile (hundreds of MB).
  await new Promise((r) => setTimeout(r, 50));
  const end = Date.now() + 1500;
  while (Date.now() < end) Math.sqrt(Math.random());
  expect(rss()).toBeLessThan(150);
  const r = await flood;
  expect(r.exitCode).toBe(0);
  expect(r.droppedBytes).toBe(200000000 - 1024 * 1024);
});

it('fails only the commands it could not start when the launcher runs out of descriptors', async () => {
  expect(await warmLauncher()).toBe(true);
  const pid = launcherPid()!;
  // Long enough to hold its descriptors through the prlimit and the burst on a loaded box (at load
  // 15 the prlimit alone took most of a second, the command ended, and every burst command fit).
  const long = run('sleep 4; echo long-ok');
  await new Promise((r) => setTimeout(r, 200));
  const open = readdirSync(`/proc/${pid}/fd`).length;
  await execFileAsync('prlimit', ['--pid', String(pid), `--nofile=${open + 4}:`]);
  // Each holds its descriptors for a while too: a quick one could end (and free them) before the
  // next starts, and on a loaded box all six then fit one after the other.
  const burst = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => run(`sleep 2; echo ${i}`)));
  // Some may start with what is left; the rest fail with the reason, none hangs or takes the launcher down.
  for (const b of burst) if (b.status === 'rejected') expect(String(b.reason)).toMatch(/EMFILE|ENFILE/);
  expect(burst.some((b) => b.status === 'rejected')).toBe(true);
  expect((await long).output.trim()).toBe('long-ok');
  expect(launcherPid()).toBe(pid);
  // Give it its descriptors back, and it goes on.
  await execFileAsync('prlimit', ['--pid', String(pid), '--nofile=1024:']);
  expect((await run('echo after')).output.trim()).toBe('after');
});

it('is out of its parent’s process group: Ctrl-C there cancels the command, it does not kill the launcher', async () => {
  // A parent in a group of its own that runs a long command through the launcher and cancels it on SIGINT.
  const script = `
    import { localProcessRunner } from ${JSON.stringify(path.resolve('lib/src/process/runner.js'))};
    import { warmLauncher } from ${JSON.stringify(path.resolve('lib/src/process/launcher.js'))};
    await warmLauncher();
    const stop = new AbortController();
    process.on('SIGINT', () => stop.abort());
    const pending = localProcessRunner.run({ command: 'sleep 20', cwd: '/', env: { PATH: process.env.PATH }, maxOutputBytes: 1024, signal: stop.signal });
    console.log('started');
    const r = await pending.then((x) => ({ aborted: x.aborted }), (e) => ({ error: String(e) }));
    console.log(JSON.stringify(r));`;
  const { spawn } = await import('node:child_process');
  const parent = spawn(process.execPath, ['--input-type=module', '-e', script], {
    detached: true,
    env: { PATH: process.env.PATH, CONSORT_LAUNCHER: 'on' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  parent.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  expect(await until(() => out.includes('started'), 10_000)).toBe(true);
  await new Promise((r) => setTimeout(r, 200));
  process.kill(-parent.pid!, 'SIGINT'); // the whole group, as a terminal does
  await new Promise((r) => parent.on('close', r));
  expect(JSON.parse(out.split('\n')[1]!)).toEqual({ aborted: true });
});
