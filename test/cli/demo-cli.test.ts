/**
 * `consort demo` run inside a user's project: it works beside their branches, in a namespace of its
 * own, and leaves their branch list as it was; a command that started the embedded server says so
 * once — with the command that stops it and the disk the data directory uses — and `consort db
 * stop` stops it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { EmbeddedServer } from '../../src/branches/local/server.js';
import { diskUse } from '../../src/cli/commands/server-notice.js';
import { ownDataDir } from '../helpers/servers.js';
import { execFileAsync } from '../helpers/exec-file.js';
import { captureCli } from '../helpers/cli.js';

const exec = execFileAsync;
let dataDir: string;
let project: string;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  dataDir = await ownDataDir();
  project = await mkdtemp(path.join(os.tmpdir(), 'consort-users-project-'));
  await exec('git', ['init', '-q', project]);
  env = { PATH: process.env.PATH ?? '', HOME: project, CONSORT_DATA_DIR: dataDir, NO_COLOR: '1' };
});
afterAll(async () => {
  await new EmbeddedServer(dataDir).stop();
  await rm(dataDir, { recursive: true, force: true });
  await rm(project, { recursive: true, force: true });
});

const cli = (...args: string[]) => captureCli(['-C', project, ...args], env);

const branchNames = async (): Promise<string[]> =>
  (JSON.parse((await cli('branch', 'list', '--json')).stdout) as { name: string }[]).map((b) => b.name).sort();

const NOTICE =
  /The embedded PostgreSQL server keeps running for the next command \(pid (\d+), data in (.+), (\d+) (KB|MB|GB) on disk\)\. Stop it with: consort -C \S+ db stop/;

it("leaves the user's branch list as it was, and says nothing about a server it did not start", async () => {
  expect((await cli('branch', 'create', 'feature-x')).code).toBe(0);
  const before = await branchNames();
  expect(before).toEqual(['feature-x', 'main']);
  // The project's own migrations are on its main: the example's base knows none of them. Before,
  // the demo forked that main and failed every scenario with "Parent ahead".
  const mainUrl = (await cli('branch', 'url', 'main')).stdout.trim();
  const db = new pg.Client({ connectionString: mainUrl });
  await db.connect();
  try {
    await db.query(
      "CREATE TABLE pgmigrations (id serial PRIMARY KEY, name varchar(255) NOT NULL, run_on timestamp NOT NULL DEFAULT now()); INSERT INTO pgmigrations (name) VALUES ('1700000000000_users-own')",
    );
  } finally {
    await db.end();
  }
  const demo = await cli('demo', '--scenario', 'not-null');
  expect(demo.code).toBe(0);
  expect(demo.stdout).toMatch(/not-null\s+failure \(migrations\)\s+failure \(migrations\)/);
  // It ends with what to do next, in the user's own project.
  expect(demo.stdout.trimEnd()).toMatch(
    /npm i -D consort-db\n[^\n]*npm pack` in [^\n]*consort-db-[\d.]+\.tgz\)\n\s+npx consort -C \S+ check[^\n]*\n[\s\S]*README[^\n]*$/,
  );
  expect(await branchNames()).toEqual(before);
  expect(demo.stderr).not.toMatch(NOTICE);
  // Removing the check's own temporary branches is routine: not a line a new user has to read.
  expect(demo.stderr).toContain('━━ scenario not-null');
  expect(demo.stderr).not.toMatch(/temporary branch/i);
});

it('a demo that started the server says so once, with `consort db stop` and the disk used; db stop stops it', async () => {
  expect((await cli('db', 'stop')).stdout).toMatch(/^Stopped/);
  const demo = await cli('demo', '--scenario', 'out-of-order');
  expect(demo.code).toBe(0);
  const notice = NOTICE.exec(demo.stderr);
  expect(notice).not.toBeNull();
  expect(demo.stderr.match(new RegExp(NOTICE.source, 'g'))).toHaveLength(1);
  const [, pid, dir, amount, unit] = notice!;
  expect(path.resolve(dir!)).toContain(path.resolve(dataDir));
  const status = await new EmbeddedServer(dataDir).status();
  expect(status).toMatchObject({ running: true, pid: Number(pid) });
  // The figure is the data directory's allocated size, in the unit it reads best in.
  const bytes = await diskUse(dir!);
  const shown = Number(amount) * { KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 }[unit as 'KB' | 'MB' | 'GB'];
  expect(Math.abs(shown - bytes) / bytes).toBeLessThan(0.25);

  expect((await cli('db', 'stop')).stdout).toMatch(/^Stopped/);
  expect((await new EmbeddedServer(dataDir).status()).running).toBe(false);
  // Machine-readable output stays clean: no notice with --json.
  const quiet = await cli('demo', '--scenario', 'out-of-order', '--json');
  expect(JSON.parse(quiet.stdout)).toMatchObject({ ok: true });
  expect(quiet.stderr).not.toMatch(NOTICE);
});

it('a branch command that started the server says so too (the README: "it says so, with the disk it uses"), once', async () => {
  // Before, only `check` and `demo` did: a user whose first command was `branch create` got
  // "Starting embedded PostgreSQL …" and no word that it keeps running, nor how to stop it.
  expect((await cli('db', 'stop')).stdout).toMatch(/^Stopped/);
  const first = await cli('branch', 'create', 'feature-y');
  expect(first.code).toBe(0);
  expect(first.stderr.match(new RegExp(NOTICE.source, 'g'))).toHaveLength(1);
  const next = await cli('branch', 'list');
  expect(next.stderr).not.toMatch(NOTICE);
  // The tour opens the provider and says it at the end itself: still once.
  expect((await cli('db', 'stop')).stdout).toMatch(/^Stopped/);
  const tour = await cli('demo', 'branching');
  expect(tour.code).toBe(0);
  expect(tour.stderr.match(new RegExp(NOTICE.source, 'g'))).toHaveLength(1);
  expect((await cli('branch', 'delete', 'feature-y')).code).toBe(0);
});
