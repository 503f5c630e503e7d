/**
 * Ctrl-C on `consort demo` (the README's first command, `npm run demo`): the scenario's check is
 * cancelled as `consort check` is (its suite killed, its temporary branches removed), then the demo
 * removes its own branches and the scenario's throwaway repository, says so and exits 130. Before,
 * Node's default SIGINT exit left `consort-demo-*`, `consort-check-*` and `consort-private-*`
 * folders in the temporary directory and the demo's databases on the server, and printed nothing.
 * The built CLI in a process of its own, on an embedded server of the test's own.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EmbeddedServer } from '../../src/branches/local/server.js';
import { ownDataDir, query } from '../helpers/servers.js';

const BIN = path.resolve('bin/consort.js');

let dataDir: string;
let tmp: string;
beforeAll(async () => {
  dataDir = await ownDataDir();
  tmp = await mkdtemp(path.join(os.tmpdir(), 'consort-demo-cancel-'));
});
afterAll(async () => {
  await new EmbeddedServer(dataDir).stop();
  await rm(dataDir, { recursive: true, force: true });
  await rm(tmp, { recursive: true, force: true });
});

it('SIGINT while a scenario runs: the demo removes its folders and branches, says so and exits 130', async () => {
  const child = spawn(process.execPath, [BIN, 'demo'], {
    // TMPDIR of the test's own: whatever the demo leaves in it is the demo's.
    env: { PATH: process.env.PATH, HOME: tmp, CONSORT_DATA_DIR: dataDir, TMPDIR: tmp, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let sent = false;
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    // The first scenario's suite has started: its check, its repository and its branches all exist.
    if (!sent && stderr.includes('▸ suite…')) {
      sent = true;
      child.kill('SIGINT');
    }
  });
  child.stdout.resume();
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  expect(sent).toBe(true);
  expect(stderr).toContain('SIGINT: stopping the demo');
  expect(stderr).toContain('Demo cancelled (SIGINT): its branches and temporary files were removed.');
  expect(code).toBe(130);
  expect((await readdir(tmp)).filter((f) => f.startsWith('consort-'))).toEqual([]);
  const { url } = await new EmbeddedServer(dataDir).start();
  const left = await query<{ datname: string }>(
    url,
    "SELECT datname FROM pg_database WHERE datname LIKE 'consort\\_demo\\_%' ORDER BY 1",
  );
  expect(left.map((r) => r.datname)).toEqual([]);
});
