/**
 * Ctrl-C during `consort demo branching`: the tour stops at its next step, removes the branches
 * it made, says so and exits 130 (before, Node's default SIGINT exit left `demo-*` branches on the
 * server until their TTL ran out). The signal arrives as the tour prints its second step (emitted
 * in-process, so it lands exactly there).
 */
import { rm } from 'node:fs/promises';
import { EmbeddedServer } from '../../src/branches/local/server.js';
import { runCli } from '../../src/cli/main.js';
import { ownDataDir, query } from '../helpers/servers.js';

let dataDir: string;
beforeAll(async () => {
  dataDir = await ownDataDir();
});
afterAll(async () => {
  await new EmbeddedServer(dataDir).stop();
  await rm(dataDir, { recursive: true, force: true });
});

const env = () => ({ PATH: process.env.PATH, HOME: process.env.HOME, CONSORT_DATA_DIR: dataDir, NO_COLOR: '1' });

async function tour(stopAt: RegExp | null): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(
    ['demo', 'branching'],
    {
      out: (s) => {
        out += `${s}\n`;
        if (stopAt?.test(s)) process.emit('SIGINT', 'SIGINT');
      },
      err: (s) => void (err += `${s}\n`),
    },
    env(),
  );
  return { code, out, err };
}

const demoBranches = async (): Promise<string[]> => {
  const { url } = await new EmbeddedServer(dataDir).start();
  const rows = await query<{ datname: string }>(url, 'SELECT datname FROM pg_database ORDER BY 1');
  return rows.map((r) => r.datname).filter((n) => /demo/.test(n));
};

it('SIGINT after the parent branch is filled: no fork, no branch left, exit 130', async () => {
  const listening = process.listenerCount('SIGINT');
  const { code, out, err } = await tour(/^2\. Branch /);
  expect(err).toContain('SIGINT: stopping the tour');
  expect(err).toContain('Tour cancelled (SIGINT): its branches were removed.');
  expect(out).not.toContain('3. Forked');
  expect(code).toBe(130);
  expect(await demoBranches()).toEqual([]);
  // The signal handlers are gone with the tour: a whole tour afterwards ends as it always did.
  expect(process.listenerCount('SIGINT')).toBe(listening);
  const whole = await tour(null);
  expect(whole.code).toBe(0);
  expect(whole.out).toContain('6. Deleted');
  expect(await demoBranches()).toEqual([]);
});
