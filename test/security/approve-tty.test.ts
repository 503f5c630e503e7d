/**
 * A local approval is a person at a terminal: a process started the way a turn starts its
 * command (its own session, no stdin) has no controlling terminal, so `consort approve`'s
 * confirmation cannot be given by it — not during the turn, and not by a daemon it left behind.
 * Played through the built CLI (`bin/consort.js`) on a feature waiting at its merge gate: the
 * cheat knows the gate's hash and offers it on stdin, and nothing is recorded; a person at a
 * (pseudo-)terminal who types it approves.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConductorState } from '../../src/conductor/state.js';
import { readGate } from '../../src/lanes/tdd/gate-check.js';
import { FeatureStore } from '../../src/lanes/tdd/store.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { addGatedFeature } from '../dashboard/fixture.js';
import { git } from '../helpers/sum-repo.js';
import { workspaceAt } from '../helpers/tdd.js';

const CONFIRM = fileURLToPath(new URL('../../lib/src/cli/confirm.js', import.meta.url));
const CLI = fileURLToPath(new URL('../../bin/consort.js', import.meta.url));
const REFUSED = 'Approving a gate needs a person at an interactive terminal to confirm the approval.';
const BASICS = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.homedir(), LANG: 'C.UTF-8' };
const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

it("a process in a turn's session cannot confirm an approval", async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'consort-tty-'));
  try {
    const out = path.join(dir, 'out.txt');
    const script = `import { terminalConfirm } from ${JSON.stringify(CONFIRM)};
import { writeFileSync } from 'node:fs';
terminalConfirm('approve? ', 'yes').then((ok) => writeFileSync(${JSON.stringify(out)}, 'confirmed: ' + ok), (e) => writeFileSync(${JSON.stringify(out)}, 'refused: ' + e.message));`;
    // As src/process/runner.ts starts a turn: detached (a new session), stdin closed.
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      detached: true,
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    await new Promise((resolve) => child.on('exit', resolve));
    expect(await readFile(out, 'utf8')).toBe(`refused: ${REFUSED}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, 30_000);

describe('consort approve … merge --as <person>, through the built CLI', () => {
  let root: string;
  let feature: string;
  let store: FeatureStore;
  let prefix: string;
  const approve = ['approve', '', 'merge', '--as', 'Grace Hopper'];

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'consort-approve-cli-'));
    await git(root, 'init', '-q');
    await writeFile(path.join(root, 'README.md'), 'shop\n');
    await git(root, 'add', '-A');
    await git(root, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'init');
    feature = await addGatedFeature(root);
    approve[1] = feature;
    store = new FeatureStore(root, feature);
    // Built and reviewed: the feature waits for a person at its merge gate.
    const saved = await store.load();
    await store.save({
      ...saved,
      state: ConductorState.parse({
        ...saved.state,
        phase: 'merge',
        step: 'awaiting-approval',
        gate: 'merge',
        items: saved.state.items.map((i) => ({ ...i, status: 'refactored' })),
      }),
    });
    const { check } = await readGate(await workspaceAt(root), store, 'merge', false);
    expect(check).toMatchObject({ valid: true, approval: null });
    // The cheat's best case: it knows the answer the prompt asks for.
    prefix = check.hash.replace(/^sha256:/, '').slice(0, 8);
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  async function recorded(): Promise<{ approval: unknown; events: string }> {
    const gates = await store.gates();
    const events = (await readFile(store.file('events.jsonl'), 'utf8').catch(() => '')) as string;
    return { approval: gates.gates.merge?.approval ?? null, events };
  }

  it("refuses a turn's command (its own session, in the turn's isolation) that offers the hash on stdin", async () => {
    const command = `printf '%s\\n' ${prefix} | ${sh(process.execPath)} ${sh(CLI)} -C ${sh(root)} ${approve.map(sh).join(' ')}`;
    const r = await localProcessRunner.run({
      command,
      cwd: root,
      env: BASICS,
      isolate: true,
      timeoutMs: 60_000,
      maxOutputBytes: 1_000_000,
    });
    expect(r.exitCode).toBe(1);
    expect(r.output).toContain(REFUSED);
    expect(await recorded()).toEqual({ approval: null, events: expect.not.stringContaining('gate.approved') });
  }, 60_000);

  it('refuses a process that outlived its turn (setsid, no terminal), stdin piped', async () => {
    const child = spawn(process.execPath, [CLI, '-C', root, ...approve], {
      cwd: root,
      env: BASICS,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    child.stdin.end(`${prefix}\n`);
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(output).toContain(REFUSED);
    expect(await recorded()).toEqual({ approval: null, events: expect.not.stringContaining('gate.approved') });
  }, 60_000);

  /** `consort approve` under `script` (util-linux): a pseudo-terminal whose keyboard is `answer`. */
  async function atTerminal(answer: (prompt: string) => string): Promise<{ code: unknown; output: string }> {
    const command = `${sh(process.execPath)} ${sh(CLI)} -C ${sh(root)} ${approve.map(sh).join(' ')}`;
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd: root,
      env: { ...BASICS, TERM: 'dumb' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    let answered = false;
    const onData = (b: Buffer) => {
      output += b.toString();
      if (!answered && output.includes('to approve: ')) {
        answered = true;
        child.stdin.write(`${answer(output)}\n`);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const code = await new Promise((resolve) => child.on('exit', resolve));
    return { code, output };
  }

  it('approves for a person at a terminal who types the start of the hash, and not for a wrong answer', async () => {
    const wrong = await atTerminal(() => '00000000');
    expect(wrong.output).toContain('was not approved: it was not confirmed');
    expect(wrong.code).not.toBe(0);
    expect((await recorded()).approval).toBeNull();

    const honest = await atTerminal((prompt) => /\(([0-9a-f]{8})…\)/.exec(prompt)![1]!);
    expect(honest.output).toContain(`Approved the merge gate of ${feature} as Grace Hopper`);
    expect(honest.code).toBe(0);
    const after = await recorded();
    expect(after.approval).toMatchObject({ approver: 'Grace Hopper', proxy: false });
    expect(after.events).toContain('gate.approved');
  }, 60_000);
});
