/**
 * The feature's records (src/lanes/tdd/store.ts) live in the workspace, which an agent's turn and
 * a proof's suite (bubblewrap's `--dev-bind / /`) can write. What either leaves where a record is
 * written — a link in place of a folder of the feature's records, a link, a hard link or a FIFO in
 * place of an appended journal — must not make the conductor write outside that folder, or block.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import {
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FeatureStore, readText } from '../../src/lanes/tdd/store.js';

let root: string;
let workspace: string;
let outside: string;
let feature: string;
const children: ChildProcess[] = [];

beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'consort-record-links-'));
  workspace = path.join(root, 'repo');
  outside = path.join(root, 'outside');
  feature = path.join(workspace, '.consort', 'features', '001-f');
  mkdirSync(feature, { recursive: true });
  mkdirSync(outside);
});

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.pid) process.kill(child.pid, 'SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

/** Opens `fifo` for reading after a while, so a write that blocks on it ends (and the test with it). */
function unblockLater(fifo: string): void {
  const child = spawn('sh', ['-c', 'sleep 3; exec cat "$0" > /dev/null', fifo], { stdio: 'ignore' });
  children.push(child);
}

const event = (id: string) => ({ id, type: 'note', at: '2026-12-03T00:00:00.000Z' });

it.each(['transcripts', 'cycles'])(
  'a link planted in place of the records folder %s is not written through: the record lands in the feature folder',
  async (folder) => {
    symlinkSync(outside, path.join(feature, folder));
    const store = new FeatureStore(workspace, '001-f');
    if (folder === 'transcripts') await store.writeTranscript('t1', 'the transcript\n');
    else await store.writeCycle({ cycle: 1 } as unknown as Parameters<FeatureStore['writeCycle']>[0]);
    expect(readdirSync(outside)).toEqual([]);
    expect(lstatSync(path.join(feature, folder)).isDirectory()).toBe(true);
    expect(readdirSync(path.join(feature, folder))).toHaveLength(1);
  },
);

it("a link planted in place of the feature's folder is not written through (state.json, an appended journal)", async () => {
  rmSync(feature, { recursive: true });
  symlinkSync(outside, feature);
  const store = new FeatureStore(workspace, '001-f');
  await store.save({ version: 1 } as unknown as Parameters<FeatureStore['save']>[0]);
  await store.append('events.jsonl', event('e1'));
  expect(readdirSync(outside)).toEqual([]);
  expect(lstatSync(feature).isDirectory()).toBe(true);
  expect(readFileSync(path.join(feature, 'events.jsonl'), 'utf8')).toContain('"e1"');
});

it('a link planted at an appended journal is not appended through', async () => {
  const store = new FeatureStore(workspace, '001-f');
  await store.append('turns.jsonl', event('t1'));
  const victim = path.join(outside, 'victim');
  writeFileSync(victim, 'precious\n');
  rmSync(path.join(feature, 'turns.jsonl'));
  symlinkSync(victim, path.join(feature, 'turns.jsonl'));
  await store.append('turns.jsonl', event('t2'));
  expect(readFileSync(victim, 'utf8')).toBe('precious\n');
  // The store knew the journal whole: it is written again as a file of its own, nothing lost.
  expect(lstatSync(path.join(feature, 'turns.jsonl')).isFile()).toBe(true);
  expect(readFileSync(path.join(feature, 'turns.jsonl'), 'utf8').split('\n').filter(Boolean)).toHaveLength(2);
});

it('a hard link planted at an appended journal the store does not know whole stops it, nothing written outside', async () => {
  // A journal committed earlier (the store knows only HEAD has it): appending would write the
  // file the link shares; rewriting it would lose the lines the store never read.
  const victim = path.join(outside, 'victim');
  writeFileSync(victim, 'precious\n');
  linkSync(victim, path.join(feature, 'events.jsonl'));
  const store = new FeatureStore(workspace, '001-f');
  await expect(store.append('events.jsonl', event('e1'))).rejects.toThrow(/events\.jsonl/);
  expect(readFileSync(victim, 'utf8')).toBe('precious\n');
});

it.each([true, false])(
  'a FIFO planted at an appended journal does not block the conductor (journal known whole to the store: %s)',
  async (known) => {
    const fifo = path.join(feature, 'events.jsonl');
    const store = new FeatureStore(workspace, '001-f');
    if (known) {
      await store.append('events.jsonl', event('e1'));
      rmSync(fifo);
    }
    execFileSync('mkfifo', [fifo]);
    unblockLater(fifo);
    const started = Date.now();
    const appended = store.append('events.jsonl', event('e2'));
    if (known) {
      await appended;
      expect(lstatSync(fifo).isFile()).toBe(true);
      expect(readFileSync(fifo, 'utf8').split('\n').filter(Boolean)).toHaveLength(2);
    } else {
      // What the FIFO took the place of (a journal HEAD holds) is not the store's to tell: the run stops.
      await expect(appended).rejects.toThrow(/events\.jsonl/);
    }
    expect(Date.now() - started).toBeLessThan(2000);
    expect(readdirSync(outside)).toEqual([]);
  },
);

it("an artifact or a record that is a link reads as missing: the conductor's environment is not read through it", async () => {
  process.env.CONSORT_TEST_CANARY = 'ghs_canary-that-must-not-leak';
  try {
    symlinkSync('/proc/self/environ', path.join(feature, 'feature-spec.md'));
    writeFileSync(path.join(outside, 'state.json'), '{"version":1}\n');
    symlinkSync(path.join(outside, 'state.json'), path.join(feature, 'state.json'));
    expect(await readText(path.join(feature, 'feature-spec.md'))).toBeNull();
    expect(await readText(path.join(feature, 'state.json'))).toBeNull();
    const store = new FeatureStore(workspace, '001-f');
    expect(await store.exists()).toBe(false);
    // What the store wrote and an agent swapped for a link to the same text is the agent's change.
    await store.writeTranscript('turn-0001', 'said\n');
    const transcript = path.join(feature, 'transcripts', 'turn-0001.txt');
    writeFileSync(path.join(outside, 'same.txt'), 'said\n');
    rmSync(transcript);
    symlinkSync(path.join(outside, 'same.txt'), transcript);
    const audit = await store.audit();
    expect(audit.changed).toContainEqual({
      path: '.consort/features/001-f/transcripts/turn-0001.txt',
      status: 'deleted',
    });
  } finally {
    delete process.env.CONSORT_TEST_CANARY;
  }
});
