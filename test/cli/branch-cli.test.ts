/** The CLI contract other issues and users script against: JSON shapes, exit codes, one-line errors. */
import { chmod, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EmbeddedServer } from '../../src/branches/local/server.js';
import { withDatabase } from '../../src/db/sql.js';
import { ownDataDir, SYSTEM_PG_URL, query } from '../helpers/servers.js';
import { execFileAsync } from '../helpers/exec-file.js';
import { captureCli } from '../helpers/cli.js';

const run = execFileAsync;

const cli = captureCli;

/** The branch's TTL ran out: its expiry, as stored in the catalog, moved an hour back (time passing without a sleep). */
async function expire(url: string, name: string): Promise<void> {
  await query(
    withDatabase(url, 'consort_catalog'),
    "UPDATE consort.branches SET expires_at = expires_at - interval '1 hour' WHERE namespace = 'local' AND name = $1",
    [name],
  );
}

describe('consort CLI on the local provider', () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'consort-cli-'));
    await chmod(dataDir, 0o755);
    env = { ...process.env, CONSORT_DATA_DIR: dataDir };
  });
  afterAll(async () => {
    await new EmbeddedServer(dataDir).stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('db start/status report the server, with the password masked', async () => {
    const started = await cli(['db', 'start', '--json'], env);
    expect(started.code).toBe(0);
    const info = JSON.parse(started.stdout);
    expect(info).toMatchObject({ running: true, dataDir });
    expect(info.url).toMatch(/^postgresql:\/\/postgres:\*\*\*\*@127\.0\.0\.1:\d+\/postgres$/);
    const status = JSON.parse((await cli(['db', 'status', '--json'], env)).stdout);
    expect(status).toMatchObject({ running: true, initialised: true, version: '18', port: info.port });
  });

  it('branch create --json prints the documented record', async () => {
    const r = await cli(['branch', 'create', 'pr-7', '--ttl', '2h', '--git-branch', 'feature/seven', '--json'], env);
    expect(r.code).toBe(0);
    const rec = JSON.parse(r.stdout);
    expect(Object.keys(rec)).toEqual(
      expect.arrayContaining(['name', 'parent', 'createdAt', 'expiresAt', 'url', 'mode']),
    );
    expect(rec).toMatchObject({
      name: 'pr-7',
      parent: 'main',
      gitBranch: 'feature/seven',
      mode: expect.stringMatching(/^(clone|copy)$/),
    });
    const ttl = Date.parse(rec.expiresAt) - Date.parse(rec.createdAt);
    expect(ttl).toBeGreaterThan(7_100_000);
    expect(ttl).toBeLessThan(7_300_000);
    expect(rec.url).toContain(':****@');
  });

  it('branch create main and branch reset main name the root and a next step that works', async () => {
    const exists = await cli(['branch', 'create', 'main', '--json'], env);
    expect(exists.code).toBe(1);
    const e = JSON.parse(exists.stdout).error;
    expect(e.code).toBe('branch-exists');
    expect(e.message).not.toContain('null');
    expect(e.message).toMatch(/root/);
    expect(e.hint).not.toMatch(/branch reset main/); // main has no parent: that reset fails
    const dup = JSON.parse((await cli(['branch', 'create', 'pr-7', '--json'], env)).stdout).error;
    expect(dup.message).toBe('Branch "pr-7" already exists (from "main").');
    expect(dup.hint).toMatch(/consort branch reset pr-7/);
    const reset = await cli(['branch', 'reset', 'main'], env);
    expect(reset.code).toBe(1);
    expect(reset.stderr).toMatch(/has no parent to reset to\.\n.*consort branch delete main --recursive/);
  });

  it('a reserved branch name is a usage error (exit 2) like any other invalid name', async () => {
    for (const name of ['postgres', 'template1']) {
      const r = await cli(['branch', 'create', name, '--json'], env);
      expect({ name, code: r.code }).toEqual({ name, code: 2 });
      expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'invalid-input', exitCode: 2 });
      expect(r.stderr).toMatch(/is reserved by PostgreSQL/);
    }
  });

  it('branch release of a name that is no lease is a usage error (exit 2) whose hint leads to the lease', async () => {
    const r = await cli(['branch', 'release', 'pr-7', '--json'], env);
    expect(r.code).toBe(2);
    const e = JSON.parse(r.stdout).error;
    expect(e).toMatchObject({ code: 'invalid-input', exitCode: 2 });
    expect(e.hint).toMatch(/consort branch lease/);
    // pr-7 is untouched.
    expect((await cli(['branch', 'url', 'pr-7'], env)).code).toBe(0);
  });

  it('branch url prints a working URL; list --json masks it unless asked', async () => {
    const url = (await cli(['branch', 'url', 'pr-7'], env)).stdout.trim();
    expect(await query(url, 'SELECT current_database() AS db')).toEqual([{ db: 'pr-7' }]);
    const list = JSON.parse((await cli(['branch', 'list', '--json'], env)).stdout);
    expect(list.map((b: { name: string }) => b.name)).toEqual(['main', 'pr-7']);
    expect(JSON.stringify(list)).not.toContain(new URL(url).password);
    const secret = JSON.parse((await cli(['branch', 'list', '--json', '--show-secrets'], env)).stdout);
    expect(secret[1].url).toBe(url);
  });

  it("branch list tells each branch's size: its own database, not its parent's", async () => {
    const url = (await cli(['branch', 'url', 'pr-7'], env)).stdout.trim();
    // ~5 MB of rows that do not compress, in pr-7 only.
    await query(
      url,
      "CREATE TABLE filler AS SELECT string_agg(md5(random()::text || g::text || i::text), '') AS t FROM generate_series(1, 5000) g, generate_series(1, 30) i GROUP BY g",
    );
    const sizes = Object.fromEntries(
      JSON.parse((await cli(['branch', 'list', '--json'], env)).stdout).map(
        (b: { name: string; sizeBytes: number }) => [b.name, b.sizeBytes],
      ),
    );
    expect(sizes.main).toBeGreaterThan(1_000_000);
    expect(sizes['pr-7'] - sizes.main).toBeGreaterThan(4_000_000);
    const text = (await cli(['branch', 'list'], env)).stdout;
    expect(text.split('\n')[0]).toMatch(/GIT BRANCH\s+SIZE$/);
    expect(text).toMatch(/^pr-7 .* \d+\.\d MB$/m);
    await query(url, 'DROP TABLE filler');
  });

  it('errors say what happened, then the fix on a line of its own, with a non-zero exit', async () => {
    const bad = await cli(['branch', 'create', 'Feature/X'], env);
    expect(bad.code).toBe(2); // a name the command cannot accept: a usage error
    const lines = bad.stderr.trim().split('\n');
    expect(lines.length).toBeLessThanOrEqual(2);
    expect(lines[0]).toMatch(/^consort: /);
    expect(bad.stderr).toContain('Use "feature-x" instead');
    const main = await cli(['branch', 'delete', 'main'], env);
    expect(main.code).toBe(1);
    expect(main.stderr).toContain('cannot be deleted');
    const usage = await cli(['branch', 'create'], env);
    expect(usage.code).toBe(2);
  });

  it('with --json, an error is one JSON object on stdout too, with the same exit code', async () => {
    for (const args of [
      ['branch', 'url', 'no-such-branch'],
      ['branch', 'delete', 'no-such-branch'],
      ['branch', 'create', 'x', '--from', 'no-such-branch'],
    ]) {
      const r = await cli([...args, '--json'], env);
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stdout)).toEqual({
        error: {
          code: 'branch-not-found',
          message: expect.stringContaining('"no-such-branch"'),
          hint: expect.any(String),
          exitCode: 1,
        },
      });
      expect(r.stderr).toMatch(/^consort: .*no-such-branch/m);
    }
    const renamed = JSON.parse((await cli(['branch', 'create', 'Feature/X', '--json'], env)).stdout);
    expect(renamed.error.message + renamed.error.hint).toContain('Use "feature-x" instead');
    expect(renamed.error.exitCode).toBe(2);
  });

  it('refuses an invalid branch name before it starts anything: no server, no data directory', async () => {
    const unused = path.join(dataDir, 'never-made');
    const own = { ...env, CONSORT_DATA_DIR: unused };
    for (const args of [
      ['branch', 'create', 'Feature/X'],
      ['branch', 'create', 'ok', '--from', 'Main'],
      ['branch', 'lease', 'tmpl_1'],
      ['branch', 'pool', 'Tmpl', '--size', '1'],
      ['branch', 'delete', 'Feature/X'],
      ['branch', 'reset', 'Feature/X'],
      ['branch', 'url', 'Feature/X'],
    ]) {
      const r = await cli(args, own);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toMatch(/^consort: Invalid branch name/m);
    }
    await expect(stat(unused)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('says so when a branch is forked from a main that has no tables yet', async () => {
    const empty = await cli(['branch', 'create', 'from-empty'], env);
    expect(empty.code).toBe(0);
    expect(empty.stderr).toContain('main has no tables yet, so from-empty starts empty');
    const url = (await cli(['branch', 'url', 'main'], env)).stdout.trim();
    await query(url, 'CREATE TABLE t (id int)');
    const full = await cli(['branch', 'create', 'from-full'], env);
    expect(full.code).toBe(0);
    expect(full.stderr).not.toContain('no tables yet');
    await query(url, 'DROP TABLE t');
    expect((await cli(['branch', 'delete', 'from-empty'], env)).code).toBe(0);
    expect((await cli(['branch', 'delete', 'from-full'], env)).code).toBe(0);
  });

  it('reset, delete and gc work from the command line', async () => {
    const before = Date.now();
    const tmp = JSON.parse(
      (await cli(['branch', 'create', 'tmp', '--from', 'pr-7', '--ttl', '1s', '--json'], env)).stdout,
    );
    expect(Date.parse(tmp.expiresAt)).toBeGreaterThanOrEqual(before + 1000);
    expect(Date.parse(tmp.expiresAt)).toBeLessThanOrEqual(Date.now() + 1000);
    expect((await cli(['branch', 'reset', 'tmp'], env)).code).toBe(0);
    // A reset keeps the branch's expiry; then an hour passes (its expiry moved back an hour, no sleep).
    const listed = JSON.parse((await cli(['branch', 'list', '--json'], env)).stdout);
    expect(listed.find((b: { name: string }) => b.name === 'tmp')).toMatchObject({ expiresAt: tmp.expiresAt });
    await expire((await cli(['branch', 'url', 'tmp'], env)).stdout.trim(), 'tmp');
    const gc = JSON.parse((await cli(['branch', 'gc', '--json'], env)).stdout);
    expect(gc.deleted).toEqual(['tmp']);
    const del = JSON.parse((await cli(['branch', 'delete', 'pr-7', '--json'], env)).stdout);
    expect(del).toEqual({ deleted: ['pr-7'] });
  });

  it('a lease taken with `branch lease` and never released is kept until it expires, then dropped by `branch gc` (in `deleted`)', async () => {
    expect((await cli(['branch', 'create', 'lease-src'], env)).code).toBe(0);
    const lease = JSON.parse((await cli(['branch', 'lease', 'lease-src', '--json'], env)).stdout);
    expect(lease).toMatchObject({ name: expect.stringMatching(/^lease-/), expiresAt: expect.any(String) });
    const names = async () =>
      JSON.parse((await cli(['branch', 'list', '--json'], env)).stdout).map((b: { name: string }) => b.name);
    // Its holder may still be using it: gc leaves it alone until its TTL is up.
    expect(JSON.parse((await cli(['branch', 'gc', '--json'], env)).stdout).deleted).toEqual([]);
    expect(await names()).toContain(lease.name);
    // An hour later (its expiry moved into the past here), gc drops it and says so.
    await query(
      withDatabase(lease.url, 'consort_catalog'),
      "UPDATE consort.branches SET expires_at = now() - interval '1 second' WHERE namespace = 'local' AND name = $1",
      [lease.name],
    );
    const gc = JSON.parse((await cli(['branch', 'gc', '--json'], env)).stdout);
    expect(gc).toEqual({ deleted: [lease.name], repaired: [], kept: [] });
    expect(await names()).not.toContain(lease.name);
    const database = new URL(lease.url).pathname.slice(1);
    expect(
      await query(withDatabase(lease.url, 'postgres'), 'SELECT 1 FROM pg_database WHERE datname = $1', [database]),
    ).toEqual([]);
    expect((await cli(['branch', 'delete', 'lease-src'], env)).code).toBe(0);
  });

  it('branch pool keeps ready copies; create --json says it came from the pool; db stop drops the copies and expired leases', async () => {
    expect((await cli(['branch', 'create', 'tmpl'], env)).code).toBe(0);
    const filled = await cli(['branch', 'pool', 'tmpl', '--size', '2', '--json'], env);
    expect(filled.code).toBe(0);
    expect(JSON.parse(filled.stdout)).toMatchObject({
      template: 'tmpl',
      size: 2,
      ready: 2,
      durationMs: expect.any(Number),
    });
    const made = JSON.parse((await cli(['branch', 'create', 'from-pool', '--from', 'tmpl', '--json'], env)).stdout);
    expect(made).toMatchObject({ name: 'from-pool', parent: 'tmpl', pooled: true, durationMs: expect.any(Number) });
    // The CLI waited for the refill before it exited: the pool is full again.
    expect(JSON.parse((await cli(['branch', 'pool', '--json'], env)).stdout)).toEqual([
      { template: 'tmpl', size: 2, ready: 2 },
    ]);
    // A template changed since its copies were made is copied, and the create says why.
    const tmplUrl = (await cli(['branch', 'url', 'tmpl'], env)).stdout.trim();
    await query(tmplUrl, 'CREATE TABLE changed (id int)');
    const copied = await cli(['branch', 'create', 'not-pooled', '--from', 'tmpl'], env);
    expect(copied.stdout).toMatch(/\((copy|clone): its warm pool's copies were of an older state of it/);
    expect((await cli(['branch', 'delete', 'not-pooled'], env)).code).toBe(0);
    expect(await cli(['branch', 'pool', 'tmpl', '--size', 'lots'], env)).toMatchObject({ code: 2 });
    expect(await cli(['branch', 'pool', '--size', '1'], env)).toMatchObject({ code: 2 });

    // A lease its holder never returned expires; db stop drops it with the pool's copies.
    const leasedAt = Date.now();
    const lease = JSON.parse((await cli(['branch', 'lease', 'tmpl', '--ttl', '1s', '--json'], env)).stdout);
    expect(lease).toMatchObject({ template: 'tmpl', pooled: true, name: expect.stringMatching(/^lease-/) });
    expect(Date.parse(lease.expiresAt)).toBeGreaterThanOrEqual(leasedAt + 1000);
    expect(Date.parse(lease.expiresAt)).toBeLessThanOrEqual(Date.now() + 1000);
    await expire(lease.url, lease.name); // its second went by (no sleep)
    const stopped = JSON.parse((await cli(['db', 'stop', '--json'], env)).stdout);
    expect(stopped).toEqual({ stopped: true, poolCopiesDropped: 2, expiredLeasesDropped: 1 });
    expect(JSON.parse((await cli(['branch', 'pool', '--json'], env)).stdout)).toEqual([
      { template: 'tmpl', size: 2, ready: 0 },
    ]);
    expect((await cli(['branch', 'pool', 'tmpl', '--size', '0'], env)).code).toBe(0);
    expect((await cli(['branch', 'delete', 'from-pool'], env)).code).toBe(0);
    expect((await cli(['branch', 'delete', 'tmpl'], env)).code).toBe(0);
  });

  it('two projects on one machine do not see each other', async () => {
    const other = await ownDataDir();
    try {
      const env2 = { ...process.env, CONSORT_DATA_DIR: other };
      await cli(['branch', 'create', 'only-here'], env2);
      const mine = JSON.parse((await cli(['branch', 'list', '--json'], env)).stdout).map(
        (b: { name: string }) => b.name,
      );
      expect(mine).not.toContain('only-here');
    } finally {
      await new EmbeddedServer(other).stop();
      await rm(other, { recursive: true, force: true });
    }
  });
});

describe('consort CLI on the postgres provider', () => {
  it('refuses a missing CONSORT_POSTGRES_URL with the fix, and works with one', async () => {
    const env = { ...process.env, CONSORT_POSTGRES_URL: undefined };
    const missing = await cli(['--provider', 'postgres', 'branch', 'list'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('CONSORT_POSTGRES_URL');
    const ns = `cli${Date.now().toString(36)}`;
    const env2 = { ...process.env, CONSORT_POSTGRES_URL: SYSTEM_PG_URL };
    const created = await cli(['--provider', 'postgres', '--namespace', ns, 'branch', 'create', 'one', '--json'], env2);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout).database).toBe(`${ns}_one`);
    expect((await cli(['--provider', 'postgres', '--namespace', ns, 'branch', 'delete', 'one'], env2)).code).toBe(0);
    await query(SYSTEM_PG_URL, `DROP DATABASE IF EXISTS "${ns}_main"`);
    await query(
      SYSTEM_PG_URL.replace(/\/postgres$/, '/consort_catalog'),
      'DELETE FROM consort.branches WHERE namespace = $1',
      [ns],
    );
  });

  it("follows the project's configuration: database.provider, namespace and ttl, unless --provider is given", async () => {
    const ns = `cfg${Date.now().toString(36)}`;
    const project = await mkdtemp(path.join(os.tmpdir(), 'consort-cli-config-'));
    try {
      await mkdir(path.join(project, '.github'));
      await writeFile(
        path.join(project, '.github', 'consort.yml'),
        `database:\n  provider: postgres\n  namespace: ${ns}\n  ttl: 2h\n`,
      );
      // Where an embedded server would go if the configuration were ignored (stopped below if so).
      const dataDir = path.join(project, 'data');
      const env = { ...process.env, CONSORT_POSTGRES_URL: SYSTEM_PG_URL, CONSORT_DATA_DIR: dataDir };
      // The configured provider, not the embedded one: without its URL it says what is missing.
      const missing = await cli(['-C', project, 'branch', 'list'], { ...env, CONSORT_POSTGRES_URL: undefined });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('CONSORT_POSTGRES_URL');
      const created = await cli(['-C', project, 'branch', 'create', 'one', '--json'], env);
      expect(created.code).toBe(0);
      const rec = JSON.parse(created.stdout);
      expect(rec.database).toBe(`${ns}_one`);
      const ttl = Date.parse(rec.expiresAt) - Date.parse(rec.createdAt);
      expect(ttl).toBeGreaterThan(7_100_000);
      expect(ttl).toBeLessThan(7_300_000);
      // --ttl still wins over the configuration.
      const short = JSON.parse(
        (await cli(['-C', project, 'branch', 'create', 'two', '--ttl', '1h', '--json'], env)).stdout,
      );
      expect(Date.parse(short.expiresAt) - Date.parse(short.createdAt)).toBeLessThan(3_700_000);
      const listed = JSON.parse((await cli(['-C', project, 'branch', 'list', '--json'], env)).stdout);
      expect(listed.map((b: { name: string }) => b.name)).toEqual(expect.arrayContaining(['one', 'two']));
      // --provider (or CONSORT_PROVIDER) replaces the provider only: the configured namespace still applies.
      for (const given of [['--provider', 'postgres'], []]) {
        const e = given.length ? env : { ...env, CONSORT_PROVIDER: 'postgres' };
        const same = JSON.parse((await cli([...given, '-C', project, 'branch', 'list', '--json'], e)).stdout);
        expect(same.map((b: { name: string }) => b.name)).toEqual(expect.arrayContaining(['one', 'two']));
      }
      for (const name of ['one', 'two'])
        expect((await cli(['-C', project, 'branch', 'delete', name], env)).code).toBe(0);
      // A broken configuration is reported, not silently replaced by the embedded server.
      await writeFile(path.join(project, '.github', 'consort.yml'), 'database:\n  provider: nope\n');
      const broken = await cli(['-C', project, 'branch', 'list'], env);
      expect(broken.code).not.toBe(0);
      expect(broken.stderr).toContain('database.provider');
    } finally {
      await new EmbeddedServer(path.join(project, 'data')).stop().catch(() => undefined);
      await rm(project, { recursive: true, force: true });
      await query(SYSTEM_PG_URL, `DROP DATABASE IF EXISTS "${ns}_main"`);
      await query(
        SYSTEM_PG_URL.replace(/\/postgres$/, '/consort_catalog'),
        'DELETE FROM consort.branches WHERE namespace = $1',
        [ns],
      );
    }
  });

  it('refuses the local-only db command for another provider, as a usage error', async () => {
    const r = await cli(['--provider', 'postgres', 'db', 'status'], process.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('local provider');
  });
});

describe('the installed bin', () => {
  it('prints help for every command and exits 0', async () => {
    for (const args of [['--help'], ['branch', '--help'], ['db', '--help'], ['branch', 'create', '--help']]) {
      const { stdout } = await run(process.execPath, [path.resolve('bin/consort.js'), ...args]);
      expect(stdout).toContain('Usage: consort');
    }
  });
});
