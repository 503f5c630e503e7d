import { readFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isConsortError } from '../../src/core/errors.js';
import { runnerIn } from '../helpers/run-process.js';

let cwd: string;
beforeAll(async () => {
  cwd = await realpath(await mkdtemp(path.join(tmpdir(), 'consort-process-')));
});
afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

const run = runnerIn(() => cwd);

/**
 * `process.kill(pid, 0)` also succeeds for a zombie, and an orphan's zombie lingers until init
 * reaps it (slowly in some containers); a zombie has already been killed, so it counts as gone.
 */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function expectGone(pids: number[]): Promise<void> {
  expect(pids.length).toBeGreaterThan(0);
  // A signalled process is gone within moments; allow for scheduling, not for a missing kill.
  const deadline = Date.now() + 1000;
  while (pids.some(isAlive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(pids.filter(isAlive)).toEqual([]);
}

function pidsIn(text: string): number[] {
  return [...text.matchAll(/pid (\d+)/g)].map((m) => Number(m[1]));
}

// Every promise holds whoever forks: the launcher (src/process/launcher.ts) or this process.
describe.each(['on', 'off'])('the local ProcessRunner (CONSORT_LAUNCHER=%s)', (launcher) => {
  beforeAll(() => {
    process.env.CONSORT_LAUNCHER = launcher;
  });
  afterAll(() => {
    delete process.env.CONSORT_LAUNCHER;
  });

  it('reports the exit code and combined output', async () => {
    const ok = await run('echo out; echo err >&2');
    expect(ok).toMatchObject({
      exitCode: 0,
      signal: null,
      timedOut: false,
      aborted: false,
      notFound: false,
      droppedBytes: 0,
    });
    expect(ok.output.split('\n').sort()).toEqual(['', 'err', 'out']);
    expect(ok.durationMs).toBeGreaterThanOrEqual(0);

    const failed = await run('echo failing; exit 3');
    expect(failed).toMatchObject({ exitCode: 3, output: 'failing\n', notFound: false });
  });

  it('runs in cwd with exactly the environment it is given, nothing of its own process', async () => {
    process.env.CONSORT_TEST_INHERITED = 'stale';
    process.env.LANG ??= 'C';
    try {
      const result = await run(
        'pwd; echo "url=$DATABASE_URL"; echo "inherited=${CONSORT_TEST_INHERITED-unset}"; echo "lang=${LANG-unset}"; echo "path=${PATH:+set}"',
        { env: { DATABASE_URL: 'postgres://u@127.0.0.1/branch', PATH: process.env.PATH } },
      );
      expect(result.output).toBe(`${cwd}\nurl=postgres://u@127.0.0.1/branch\ninherited=unset\nlang=unset\npath=set\n`);
    } finally {
      delete process.env.CONSORT_TEST_INHERITED;
    }
  });

  it('runs an argv without a shell, with input on stdin and stdout kept apart', async () => {
    const result = await run(['/bin/sh', '-c', 'cat; echo oops >&2', 'ignored $HOME'], {
      input: 'a $HOME b\n',
      captureStdout: true,
    });
    expect(result).toMatchObject({ exitCode: 0, output: 'oops\n', notFound: false });
    expect(result.stdout?.toString('utf8')).toBe('a $HOME b\n');
  });

  it("says when an argv's program does not exist", async () => {
    const result = await run(['consort-no-such-program', '--version']);
    expect(result).toMatchObject({ exitCode: null, notFound: true, timedOut: false });
  });

  it('does not wait for stdin', async () => {
    const result = await run('cat; echo done', { timeoutMs: 3000 });
    expect(result).toMatchObject({ exitCode: 0, timedOut: false, output: 'done\n' });
  });

  it('says when the command does not exist', async () => {
    const result = await run('consort-no-such-command --version');
    expect(result).toMatchObject({ exitCode: 127, notFound: true, timedOut: false });
    expect(result.output).toMatch(/consort-no-such-command: .*not found/);
    expect((await run('exit 126')).notFound).toBe(false);
  });

  it('rejects a working directory that does not exist with a typed error', async () => {
    const missing = path.join(cwd, 'nope');
    await expect(run('true', { cwd: missing })).rejects.toThrow(`working directory ${missing} does not exist`);
    const error = await run('true', { cwd: missing }).catch((e: unknown) => e);
    expect(isConsortError(error, 'invalid-input')).toBe(true);
  });

  it('kills the whole process group on timeout, grandchildren included', async () => {
    let seen = '';
    const command = `echo "pid $$"; sh -c 'sleep 100 & echo "pid $!"; sleep 100 & echo "pid $!"; echo "pid $$"; wait'; echo unreachable`;
    // A grace far past the bound: SIGTERM alone ended the group (SIGKILL would come at 5.4 s).
    const result = await run(command, { timeoutMs: 400, killGraceMs: 5000, onOutput: (chunk) => (seen += chunk) });
    expect(result).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGTERM', notFound: false });
    expect(result.durationMs).toBeLessThan(4000);
    expect(result.output).not.toContain('unreachable');
    const pids = pidsIn(seen);
    expect(pids).toHaveLength(4);
    await expectGone(pids);
  });

  it('escalates to SIGKILL when the command ignores SIGTERM', async () => {
    const result = await run(`trap '' TERM; echo "pid $$"; sleep 100; echo unreachable`, {
      timeoutMs: 200,
      killGraceMs: 300,
    });
    expect(result).toMatchObject({ timedOut: true, signal: 'SIGKILL' });
    expect(result.durationMs).toBeGreaterThanOrEqual(450);
    expect(result.durationMs).toBeLessThan(10_000); // not the 100 s sleep
    await expectGone(pidsIn(result.output));
  });

  it('stops background processes the command leaves behind', async () => {
    // Stopped with the shell's exit, not after the grace and the pipes' drain (5.5 s).
    const result = await run('sleep 100 & echo "pid $!"; exit 0', { killGraceMs: 5000 });
    expect(result).toMatchObject({ exitCode: 0, timedOut: false });
    expect(result.durationMs).toBeLessThan(4000);
    await expectGone(pidsIn(result.output));
  });

  it('returns even when an escaped process keeps the output pipes open', async () => {
    const result = await run(`setsid sh -c 'echo "pid $$"; exec sleep 100' & sleep 0.2; exit 0`, { killGraceMs: 200 });
    const [escaped] = pidsIn(result.output);
    try {
      expect(result).toMatchObject({ exitCode: 0, timedOut: false });
      expect(result.durationMs).toBeLessThan(10_000); // not the escaped 100 s sleep
      expect(escaped !== undefined && isAlive(escaped)).toBe(true);
    } finally {
      if (escaped !== undefined) process.kill(escaped, 'SIGKILL');
    }
  });

  it('stops on abort', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const result = await run(`echo "pid $$"; sleep 100`, { signal: controller.signal });
    expect(result).toMatchObject({ aborted: true, timedOut: false, exitCode: null, signal: 'SIGTERM' });
    expect(result.durationMs).toBeLessThan(10_000); // not the 100 s sleep
    await expectGone(pidsIn(result.output));

    const never = await run('echo should-not-run', { signal: AbortSignal.abort() });
    expect(never).toMatchObject({ aborted: true, exitCode: null, output: '' });
  });

  it('keeps the head and tail of megabytes of output and counts what it dropped', async () => {
    let streamed = 0;
    const result = await run(`echo START; head -c 5000000 /dev/zero | tr '\\0' x; echo; echo END`, {
      maxOutputBytes: 10_000,
      onOutput: (chunk) => (streamed += chunk.length),
    });
    const total = 'START\n'.length + 5_000_000 + '\nEND\n'.length;
    expect(result.exitCode).toBe(0);
    expect(streamed).toBe(total);
    expect(result.droppedBytes).toBe(total - 10_000);
    expect(result.output.startsWith('START\nxxx')).toBe(true);
    expect(result.output.endsWith('xxx\nEND\n')).toBe(true);
    expect(result.output).toContain(`[... ${total - 10_000} bytes of output dropped ...]`);
    expect(Buffer.byteLength(result.output)).toBeLessThan(10_100);
  });

  it('rejects nonsense options', async () => {
    await expect(run('   ')).rejects.toThrow('empty command');
    await expect(run('true', { timeoutMs: 0 })).rejects.toThrow('timeoutMs must be positive');
  });
});
