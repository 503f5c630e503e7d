/** `consort dashboard` as a person starts it: prints where it listens (--json), serves, stops on SIGTERM. */
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { makeFixture, type Fixture } from './fixture.js';

const BIN = fileURLToPath(new URL('../../bin/consort.js', import.meta.url));
let fx: Fixture;
beforeAll(async () => {
  fx = await makeFixture('consort-dashboard-cli-');
});
afterAll(async () => {
  await rm(fx.root, { recursive: true, force: true });
});

it('serves the repository on 127.0.0.1 and stops cleanly', async () => {
  const child = spawn(
    process.execPath,
    [BIN, '-C', fx.root, 'dashboard', '--port', '0', '--no-open', '--no-branches', '--as', 'Ada', '--json'],
    {
      env: { PATH: process.env.PATH ?? '', HOME: fx.root },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  const info = await new Promise<{
    url: string;
    port: number;
    repository: string;
    readOnly: boolean;
    signInUrl: string;
  }>((resolve, reject) => {
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      try {
        resolve(JSON.parse(out));
      } catch {
        /* not complete yet */
      }
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
  expect(info).toMatchObject({ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/), readOnly: false });
  expect(info.signInUrl).toMatch(new RegExp(`^${info.url}/sign-in\\?key=[\\w-]{32,}$`));
  // The printed link signs a browser in, once.
  const signIn = await fetch(info.signInUrl, { redirect: 'manual' });
  expect(signIn.status).toBe(303);
  expect(signIn.headers.get('set-cookie')).toMatch(/^consort_local_\d+=/);
  const api = (await (await fetch(`${info.url}/api`)).json()) as { features: { feature: string }[] };
  expect(api.features.map((f) => f.feature)).toEqual([fx.gated, fx.building]);
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
});

it('explains its options with --help', async () => {
  const child = spawn(process.execPath, [BIN, 'dashboard', '--help'], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (b: Buffer) => {
    out += b.toString();
  });
  expect(await new Promise((resolve) => child.on('exit', resolve))).toBe(0);
  for (const flag of ['--port', '--no-open', '--json', '--read-only', '--as']) expect(out).toContain(flag);
});
