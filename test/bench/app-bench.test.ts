/**
 * `npm run bench:app` stopped half-way (SIGTERM, as CI cancelling a job does) leaves nothing behind:
 * the App it started is stopped, the App's embedded PostgreSQL stopped and its data directory
 * removed, with the example repository it made (bench/lib/cleanup.js).
 */
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EmbeddedServer } from '../../src/branches/local/server.js';

let tmp: string;
afterAll(async () => {
  // Whatever a failing run left: its servers stopped, its files removed.
  for (const dir of await readdir(tmp).catch(() => [] as string[]))
    await new EmbeddedServer(path.join(tmp, dir, 'postgres')).stop().catch(() => undefined);
  await rm(tmp, { recursive: true, force: true });
});

it('SIGTERM mid-run: the App, its embedded server and every file the bench made are gone', async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'consort-bench-test-'));
  await chmod(tmp, 0o755); // as root, the App's embedded server runs as the postgres OS user, which must reach it
  const bench = spawn(process.execPath, ['bench/app.mjs'], {
    // Its temporary files go to a directory of this test's own; many webhooks: it is mid-run when stopped.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TMPDIR: tmp, BENCH_LATENCY_WEBHOOKS: '100000' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => bench.once('exit', (code) => resolve(code)));
  let err = '';
  await new Promise<void>((resolve, reject) => {
    bench.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      // The App took a webhook and acted on it: the bench is mid-run, past its setup.
      if (err.includes('first webhook: check run created')) resolve();
    });
    bench.once('exit', (code) =>
      reject(new Error(`the bench exited (${code}) before its first webhook was acted on:\n${err}`)),
    );
  });
  const [dataDir] = (await readdir(tmp)).filter((d) => d.startsWith('consort-bench-app-'));
  expect(dataDir).toBeDefined();
  const server = new EmbeddedServer(path.join(tmp, dataDir!, 'postgres'));
  const before = await server.status();
  expect(before.running).toBe(true);

  bench.kill('SIGTERM');
  expect(await exited).toBe(143);
  expect(err).toContain('SIGTERM: cleaning up');
  // The server process is gone (a zombie at most, until its parent reaps it) …
  const stat = await readFile(`/proc/${before.pid}/stat`, 'utf8').catch(() => null);
  expect(stat === null || /\) Z/.test(stat)).toBe(true);
  // … and so is everything the bench put in its temporary directory: the App's data, the repository.
  expect(await readdir(tmp)).toEqual([]);
}, 180_000);
