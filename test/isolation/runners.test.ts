/**
 * A database per test file in the user's own runner: a small real project (test/fixtures/isolation-project:
 * one migration, a seed, code that commits) runs its own jest and vitest suites with consort-db's
 * wiring, installed as a package (node_modules/consort-db), against the run's shared embedded server.
 * Every file commits rows and must see only the seed and its own rows; afterwards no lease is live.
 * The CLI's `branch lease` / `branch release` work on the same template, and its sweep drops what
 * the runs left expired.
 */
import { cp, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isLeaseName } from '../../src/isolation/lease.js';
import { localTestProvider, query, type TestProvider } from '../helpers/servers.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE = path.join(REPO, 'test/fixtures/isolation-project');

let t: TestProvider;
let project: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  t = await localTestProvider();
  const { adminUrl, known } = await t.provider.snapshot();
  project = await mkdtemp(path.join(os.tmpdir(), 'consort-runners-'));
  await cp(FIXTURE, project, { recursive: true });
  // As npm installs them: consort-db itself (this repository, built) and the project's own tools.
  await mkdir(path.join(project, 'node_modules/@jest'), { recursive: true });
  await symlink(REPO, path.join(project, 'node_modules/consort-db'));
  for (const dep of ['pg', 'jest', 'vitest', 'vite', '@jest/globals'])
    await symlink(path.join(REPO, 'node_modules', dep), path.join(project, 'node_modules', dep));
  // The postgres provider on the shared server, in this file's namespace (no server of its own to boot).
  env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TMPDIR: os.tmpdir(),
    NO_COLOR: '1',
    CI: 'true',
    CONSORT_PROVIDER: 'postgres',
    CONSORT_POSTGRES_URL: adminUrl,
    CONSORT_NAMESPACE: t.namespace,
    CONSORT_POSTGRES_CLONE: known.mode === 'clone' ? '1' : '0',
  };
});
afterAll(async () => {
  await t?.cleanup();
  if (project) await rm(project, { recursive: true, force: true });
});

async function leasesLeft(): Promise<string[]> {
  return (await t.provider.list()).map((b) => b.name).filter(isLeaseName);
}

/** After a run, no lease is live: each was dropped, or expired for the next sweep to drop. */
async function noLiveLease(): Promise<void> {
  const now = Date.now();
  for (const b of (await t.provider.list()).filter((x) => isLeaseName(x.name)))
    expect(b.expiresAt!.getTime()).toBeLessThanOrEqual(now);
}

async function runIn(args: string[]): Promise<string> {
  const { stdout, stderr } = await exec(process.execPath, args, {
    cwd: project,
    env,
    timeout: 120_000,
    maxBuffer: 8 << 20,
  }).catch((e: { stdout?: string; stderr?: string; message: string }) => {
    throw new Error(`${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  });
  return `${stdout}\n${stderr}`;
}

it('jest: each test file gets its own branch of the migrated, seeded template, returned afterwards', async () => {
  const out = await runIn([
    '--experimental-vm-modules',
    path.join(REPO, 'node_modules/jest/bin/jest.js'),
    '--ci',
    '--maxWorkers=2',
  ]);
  expect(out).toMatch(/Tests:\s+3 passed, 3 total/);
  expect(out).toMatch(/Preparing the test template tests-[0-9a-f]{12}/);
  await noLiveLease();
  const template = (await t.provider.list()).find((b) => /^tests-/.test(b.name))!;
  expect(await t.provider.poolStatus(template.name)).toEqual([{ template: template.name, size: 2, ready: 2 }]);
  // The template itself is as the seed left it: the files' rows went with their leases.
  expect(await query(await t.provider.connectionUri(template.name), 'SELECT count(*)::int AS n FROM notes')).toEqual([
    { n: 2 },
  ]);
});

it('vitest: the file-scoped database fixture, on the template the jest run left warm', async () => {
  const out = await runIn([path.join(REPO, 'node_modules/vitest/vitest.mjs'), 'run', '--maxWorkers=2']);
  expect(out).toMatch(/Tests\s+6 passed \(6\)/);
  expect(out).not.toMatch(/Preparing the test template/); // unchanged migrations: the template is reused
  await noLiveLease();
});

it('the CLI leases a branch of the template for any language and takes it back by its URL; nothing of the runs is left', async () => {
  const template = (await t.provider.list()).find((b) => /^tests-/.test(b.name))!.name;
  // The vitest run's leases went back a moment ago and the pool refills in the background: the
  // handout below is to come from the pool, so wait (bounded) until it holds a ready copy again.
  for (let i = 0; i < 200 && !((await t.provider.poolStatus(template))[0]?.ready ?? 0); i++)
    await new Promise((r) => setTimeout(r, 50));
  const cli = path.join(REPO, 'bin/consort.js');
  type Leased = { name: string; url: string; pooled: boolean; poolMiss?: string; expiresAt: string };
  const leaseOnce = async (): Promise<Leased> =>
    JSON.parse(
      await exec(process.execPath, [cli, 'branch', 'lease', template, '--ttl', '10m', '--json'], {
        cwd: project,
        env,
      }).then((r) => r.stdout),
    ) as Leased;
  let lease = await leaseOnce();
  if (!lease.pooled) {
    // Copies are judged by the template's statistics counters, which the earlier cases' sessions on
    // it move (as test/isolation/lease.test.ts says): stale copies are replaced, then handed out.
    expect(lease.poolMiss).toBe('stale');
    await exec(process.execPath, [cli, 'branch', 'release', lease.name], { cwd: project, env });
    for (let i = 0; i < 200 && ((await t.provider.poolStatus(template))[0]?.ready ?? 0) < 2; i++)
      await new Promise((r) => setTimeout(r, 50));
    lease = await leaseOnce();
  }
  expect(lease).toMatchObject({ pooled: true, url: expect.stringContaining(lease.name) });
  expect(Date.parse(lease.expiresAt) - Date.now()).toBeLessThanOrEqual(10 * 60_000);
  expect(await query(lease.url, 'SELECT count(*)::int AS n FROM notes')).toEqual([{ n: 2 }]);
  const released = await exec(process.execPath, [cli, 'branch', 'release', lease.url], { cwd: project, env });
  expect(released.stdout.trim()).toBe(`Released ${lease.name}`);
  expect(await leasesLeft()).toEqual([]);
});
