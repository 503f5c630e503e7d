/**
 * A stand-in for the CLI an agent SDK starts (Claude Code, `codex exec`): it tries to write into
 * the turn's read-only folder, records what happened and its pid, then prints a recorded stream
 * (one JSON message per line) as the real CLI would. For the tests that prove the claude and codex
 * backends start their CLI inside the turn's isolation, with the read-only bind.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export interface FakeCli {
  dir: string;
  /** The folder the turn names read-only, holding dep.js ("original\n"). */
  locked: string;
  /** The CLI script (run with node). */
  script: string;
  /** What the CLI saw: its pid, and `written` or the error code of its write into `locked`. */
  seen: () => Promise<{ pid: number; write: string }>;
  dispose: () => Promise<void>;
}

export async function fakeCli(stream: readonly unknown[]): Promise<FakeCli> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'consort-fake-cli-'));
  const locked = path.join(dir, 'pristine');
  await mkdir(locked);
  await writeFile(path.join(locked, 'dep.js'), 'original\n');
  const out = path.join(dir, 'seen.json');
  const lines = path.join(dir, 'stream.jsonl');
  await writeFile(lines, stream.map((m) => `${JSON.stringify(m)}\n`).join(''));
  const script = path.join(dir, 'cli.mjs');
  await writeFile(
    script,
    `import { readFileSync, writeFileSync } from 'node:fs';
const seen = { pid: process.pid };
try { writeFileSync(${JSON.stringify(path.join(locked, 'dep.js'))}, 'patched\\n'); seen.write = 'written'; }
catch (e) { seen.write = e.code; }
writeFileSync(${JSON.stringify(out)}, JSON.stringify(seen));
process.stdout.write(readFileSync(${JSON.stringify(lines)}, 'utf8'));
`,
  );
  return {
    dir,
    locked,
    script,
    seen: async () => JSON.parse(await readFile(out, 'utf8')) as { pid: number; write: string },
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Runs `fn` with CONSORT_ISOLATION pinned to `kind`, as test/security/isolate.test.ts does. */
export async function withIsolation<T>(kind: string, fn: () => Promise<T>): Promise<T> {
  const pinned = process.env.CONSORT_ISOLATION;
  process.env.CONSORT_ISOLATION = kind;
  try {
    return await fn();
  } finally {
    if (pinned === undefined) delete process.env.CONSORT_ISOLATION;
    else process.env.CONSORT_ISOLATION = pinned;
  }
}
