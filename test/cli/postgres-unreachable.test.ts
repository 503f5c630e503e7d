/**
 * The postgres provider pointed at a server that does not let us in: the first thing a new user
 * with a typo in CONSORT_POSTGRES_URL (or a stopped server) meets. The CLI says where it tried and
 * what to fix, not "unexpected error: connect ECONNREFUSED".
 */
import net from 'node:net';
import os from 'node:os';
import { captureCli } from '../helpers/cli.js';
import { SYSTEM_PG_URL } from '../helpers/servers.js';

/** A port on 127.0.0.1 that nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const baseEnv = { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), NO_COLOR: '1' };

it('a server that refuses the connection: where, why, and to start it or fix CONSORT_POSTGRES_URL', async () => {
  const port = await closedPort();
  const env = { ...baseEnv, CONSORT_POSTGRES_URL: `postgresql://admin:s3cret-pw@127.0.0.1:${port}/postgres` };
  for (const args of [
    ['branch', 'list'],
    ['branch', 'create', 'x'],
  ]) {
    const r = await captureCli(['--provider', 'postgres', '--namespace', 'unreachable', ...args], env);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toContain('unexpected error');
    expect(r.stderr).toMatch(
      new RegExp(`Cannot connect to PostgreSQL at 127\\.0\\.0\\.1:${port} \\(postgres provider\\): .*ECONNREFUSED`),
    );
    expect(r.stderr.trim().split('\n').at(-1)).toMatch(/^Start the server, or point CONSORT_POSTGRES_URL at one/);
    expect(r.stdout + r.stderr).not.toContain('s3cret-pw');
  }
  const json = await captureCli(['--provider', 'postgres', 'branch', 'list', '--json'], env);
  expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: 'server-unavailable', exitCode: 1 } });
});

it('a role the server does not know: an auth error that says to fix the user or password', async () => {
  const url = new URL(SYSTEM_PG_URL);
  url.username = 'consort_no_such_role';
  url.password = 'n0pe-pw';
  const r = await captureCli(['--provider', 'postgres', '--namespace', 'unreachable', 'branch', 'list', '--json'], {
    ...baseEnv,
    CONSORT_POSTGRES_URL: url.toString(),
  });
  expect(r.code).toBe(1);
  const { error } = JSON.parse(r.stdout) as { error: { code: string; message: string; hint: string } };
  expect(error.code).toBe('auth');
  expect(error.message).toMatch(/^Cannot connect to PostgreSQL at .* \(postgres provider\): .*consort_no_such_role/);
  expect(error.hint).toBe('Fix the user or password in CONSORT_POSTGRES_URL (a role that may CREATEDB).');
  expect(r.stdout + r.stderr).not.toContain('n0pe-pw');
});
