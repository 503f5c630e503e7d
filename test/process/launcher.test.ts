/**
 * The helper process that starts Consort's own short commands (src/process/launcher.ts): once it is
 * ready, an argv command without a sandbox, time limit or output stream is its child, with exactly
 * the request's environment, input, output and exit as when this process starts it; it never keeps
 * its parent alive, leaves when its parent dies, and a command in flight when it dies fails rather
 * than being run twice. A shell command (a suite, an agent) is never its.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { childEnv } from '../../src/core/child-env.js';
import { isConsortError } from '../../src/core/errors.js';
import type { ProcessRequest } from '../../src/ports/process.js';
import { createProcessRunner, localProcessRunner } from '../../src/process/runner.js';

const exec = promisify(execFile);
const LIB_RUNNER = path.resolve('lib/src/process/runner.js');
let cwd: string;

beforeAll(async () => {
  cwd = await realpath(await mkdtemp(path.join(tmpdir(), 'consort-launcher-')));
});
afterAll(() => rm(cwd, { recursive: true, force: true }));

function run(command: ProcessRequest['command'], options: Partial<ProcessRequest> = {}) {
  return localProcessRunner.run({ command, cwd, env: childEnv(), maxOutputBytes: 64 * 1024, ...options });
}

/** The parent of an argv command: the helper's pid once it is ready (it starts on first use). */
async function helperPid(): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const r = await run(['/bin/sh', '-c', 'echo $PPID']);
    const parent = Number(r.output.trim());
    if (parent !== process.pid) return parent;
    if (Date.now() > deadline) throw new Error('the helper never took a command');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

it("runs Consort's argv commands once ready, exactly as this process would: environment, cwd, input, output, exit", async () => {
  const helper = await helperPid();
  expect(helper).not.toBe(process.pid);
  const env = await run(['/usr/bin/env'], { env: { ONLY: 'this' } });
  expect(env.output).toBe('ONLY=this\n');

  const r = await run(['/bin/sh', '-c', 'pwd; cat; echo err >&2; exit 3'], { input: 'in\n', captureStdout: true });
  expect(r).toMatchObject({ exitCode: 3, signal: null, output: 'err\n', notFound: false, timedOut: false });
  expect(Buffer.isBuffer(r.stdout)).toBe(true);
  expect(r.stdout!.toString()).toBe(`${cwd}\nin\n`);

  const bounded = await run(['/bin/sh', '-c', 'head -c 5000 /dev/zero | tr "\\0" x'], { maxOutputBytes: 100 });
  expect(bounded.droppedBytes).toBe(4900);

  expect((await run(['consort-no-such-program'])).notFound).toBe(true);
  const missing = await run(['/bin/true'], { cwd: path.join(cwd, 'gone') }).catch((e: unknown) => e);
  expect(isConsortError(missing) && missing.code).toBe('invalid-input');
  // Still the helper's: nothing above fell back to this process.
  expect(await helperPid()).toBe(helper);
});

it('never starts a shell command, a sandboxed one, or one with a time limit or an output stream', async () => {
  await helperPid();
  const ours = async (request: Partial<ProcessRequest> & { command: ProcessRequest['command'] }) =>
    Number((await run(request.command, request)).output.trim());
  expect(await ours({ command: 'echo $PPID' })).toBe(process.pid);
  expect(await ours({ command: ['/bin/sh', '-c', 'echo $PPID'], timeoutMs: 5000 })).toBe(process.pid);
  expect(await ours({ command: ['/bin/sh', '-c', 'echo $PPID'], onOutput: () => undefined })).toBe(process.pid);
  expect(await ours({ command: ['/bin/sh', '-c', 'echo $PPID'], signal: new AbortController().signal })).toBe(
    process.pid,
  );
  const direct = createProcessRunner({ launcher: false });
  const r = await direct.run({ command: ['/bin/sh', '-c', 'echo $PPID'], cwd, env: {}, maxOutputBytes: 1024 });
  expect(Number(r.output.trim())).toBe(process.pid);
});

/** A Node process that uses the built runner: `body` runs with `run` in scope, then the script ends. */
async function script(body: string): Promise<string> {
  const file = path.join(cwd, `script-${Math.random().toString(16).slice(2)}.mjs`);
  await writeFile(
    file,
    `import { localProcessRunner } from ${JSON.stringify(LIB_RUNNER)};
const run = (command) => localProcessRunner.run({ command, cwd: '/', env: {}, maxOutputBytes: 4096 });
const helper = async () => { for (;;) { const p = Number((await run(['/bin/sh', '-c', 'echo $PPID'])).output); if (p !== process.pid) return p; await new Promise((r) => setTimeout(r, 20)); } };
${body}
`,
  );
  return file;
}

it('does not keep its parent alive, and leaves when the parent dies', async () => {
  // Ends on its own once its work is done, the helper still running.
  const ends = await script(`console.log(await helper());`);
  const { stdout } = await exec(process.execPath, [ends], { timeout: 15_000 });
  const first = Number(stdout.trim());
  expect(first).toBeGreaterThan(0);

  // Killed outright: its helper goes too.
  const waits = await script(`console.log(await helper()); setInterval(() => undefined, 1000);`);
  const parent = spawn(process.execPath, [waits], { stdio: ['ignore', 'pipe', 'inherit'] });
  const pid = await new Promise<number>((resolve) => parent.stdout.once('data', (d: Buffer) => resolve(Number(d))));
  expect(alive(pid)).toBe(true);
  parent.kill('SIGKILL');
  const deadline = Date.now() + 5000;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(alive(pid)).toBe(false);
  expect(alive(first)).toBe(false);
}, 30_000);

it('a command in flight when the helper dies fails, and is not run again; later commands run here', async () => {
  const marker = path.join(cwd, 'runs');
  const file = await script(`
const pid = await helper();
const flight = run(['/bin/sh', '-c', 'echo once >> ${marker}; sleep 0.5']).then(() => 'finished', (e) => 'failed: ' + e.message);
await new Promise((r) => setTimeout(r, 200));
process.kill(pid, 'SIGKILL');
console.log(await flight);
const after = await run(['/bin/sh', '-c', 'echo $PPID']);
console.log(Number(after.output) === process.pid ? 'here' : 'elsewhere');
`);
  const { stdout } = await exec(process.execPath, [file], { timeout: 15_000 });
  const [flight, after] = stdout.trim().split('\n');
  expect(flight).toMatch(/^failed: The helper process that starts Consort's git commands stopped/);
  expect(after).toBe('here');
  await new Promise((r) => setTimeout(r, 600)); // the orphaned command finishes on its own
  expect((await exec('cat', [marker])).stdout).toBe('once\n');
}, 30_000);

it('CONSORT_LAUNCHER=off: every command is started by this process', async () => {
  const file = await script(`
for (let i = 0; i < 20; i++) {
  const p = Number((await run(['/bin/sh', '-c', 'echo $PPID'])).output);
  if (p !== process.pid) { console.log('helper'); process.exit(0); }
  await new Promise((r) => setTimeout(r, 20));
}
console.log('here');
`);
  const { stdout } = await exec(process.execPath, [file], {
    timeout: 15_000,
    env: { PATH: process.env.PATH, CONSORT_LAUNCHER: 'off' },
  });
  expect(stdout.trim()).toBe('here');
}, 30_000);
