/**
 * The baseline is built by the admin from the base's committed migrations, so everything that runs
 * in its migration child must be the base's, not the pull request's. Which node-pg-migrate applies
 * them is read from the workspace's `node_modules` — the pull request's tree: in the App (which
 * unpacks the head's tarball and installs nothing) a `node_modules/` the pull request commits is
 * the whole of it. A pull request that commits a `node_modules/node-pg-migrate` of its own (here: one
 * that notes who it runs as, opens `main` with the connection it was handed and then applies as the
 * real one does) had that package loaded in the baseline's child with the admin's connection — the
 * admin's password, every branch's data, `main` written — until 2026-12-05. Its engine still
 * applies its own migrations on the PR branch, as the role confined to it.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { refuseChangedModules } from '../../src/lanes/check/changed-modules.js';
import { resolveEngine } from '../../src/migrations/engine.js';
import { checkBranch, checkRepo, commitBranch, git, PG } from '../helpers/check-repo.js';
import { postgresTestProvider, query, type TestProvider } from '../helpers/servers.js';

const REAL = pathToFileURL(createRequire(import.meta.url).resolve('node-pg-migrate')).href;

/** A node-pg-migrate that notes who it runs as, tries `main` with its client's credentials, then applies as the real one. */
const engine = (out: string, main: string) => `const { appendFileSync } = require('node:fs');
const pg = require(${JSON.stringify(PG)});
exports.runner = async (options) => {
  const c = options.dbClient;
  const me = (await c.query('SELECT current_user AS u, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS s')).rows[0];
  const p = c.connectionParameters;
  let main = 'refused';
  const o = new pg.Client({ host: p.host, port: p.port, user: p.user, password: p.password, database: ${JSON.stringify(main)} });
  try { await o.connect(); await o.query('CREATE TABLE IF NOT EXISTS pwned_by_engine (x int)'); main = 'written'; }
  catch (e) { main = 'refused: ' + e.message; }
  finally { await o.end().catch(() => undefined); }
  appendFileSync(${JSON.stringify(out)}, JSON.stringify({ user: me.u, superuser: me.s, main }) + '\\n');
  return (await import(${JSON.stringify(REAL)})).runner(options);
};
`;

describe("a pull request's own node-pg-migrate", () => {
  let t: TestProvider;
  let dir: string;
  let out: string;

  beforeAll(async () => {
    t = await postgresTestProvider();
    dir = await checkRepo('check-pr-engine', {
      'migrations/1700000000000_base.sql':
        '-- Up Migration\nCREATE TABLE customers (id int);\n-- Down Migration\nDROP TABLE customers;\n',
      '.github/consort.yml': ['migrations:', '  dir: migrations', 'suite:', '  command: node -e 0', ''].join('\n'),
    });
    out = path.join(os.tmpdir(), `consort-pr-engine-${process.pid}.jsonl`);
  }, 60_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await rm(out, { force: true });
    await t.cleanup();
  });

  it('never runs in the baseline, where the admin applies the base', async () => {
    const main = (await t.provider.get('main'))!.database;
    await commitBranch(dir, 'engine', {
      'node_modules/node-pg-migrate/package.json': JSON.stringify({
        name: 'node-pg-migrate',
        version: '9.0.0-pr',
        main: 'index.js',
      }),
      'node_modules/node-pg-migrate/index.js': engine(out, main),
      'migrations/1700000000001_orders.sql':
        '-- Up Migration\nCREATE TABLE orders (id int);\n-- Down Migration\nDROP TABLE orders;\n',
    });
    const report = await checkBranch(dir, 'engine', 31, t.provider);

    const seen = (await readFile(out, 'utf8').catch(() => ''))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { user: string; superuser: boolean; main: string });
    // Never as the admin (it does not run at all: the check stops before any migration).
    for (const s of seen)
      expect(s).toEqual({
        user: expect.stringMatching(/_role$/),
        superuser: false,
        main: expect.stringMatching(/^refused/),
      });
    const mainUrl = t.adminUrl.replace(/\/[^/?]*(\?|$)/, `/${main}$1`);
    expect(await query(mainUrl, "SELECT to_regclass('pwned_by_engine') AS t")).toEqual([{ t: null }]);
    expect(report.conclusion).not.toBe('success');
    expect(JSON.stringify(report)).toMatch(
      /commits packages the baseline would load as the admin \(node_modules\/node-pg-migrate/,
    );
  }, 120_000);

  it('a vendored one the base already has, unchanged, still applies the base and the change', async () => {
    await git(dir, 'checkout', '-q', 'main');
    await rm(out, { force: true });
    await commitBranch(dir, 'vendored', {
      'node_modules/node-pg-migrate/package.json': JSON.stringify({
        name: 'node-pg-migrate',
        version: '9.0.0-v',
        main: 'index.js',
      }),
      'node_modules/node-pg-migrate/index.js': `exports.runner = async (o) => (await import(${JSON.stringify(REAL)})).runner(o);\n`,
    });
    await git(dir, 'checkout', '-q', 'main');
    await git(dir, 'merge', '-q', '--ff-only', 'vendored');
    await commitBranch(dir, 'plain', {
      'migrations/1700000000002_items.sql':
        '-- Up Migration\nCREATE TABLE items (id int);\n-- Down Migration\nDROP TABLE items;\n',
    });
    const report = await checkBranch(dir, 'plain', 32, t.provider);
    expect([report.conclusion, report.stages.baseline.status, report.stages.migrations.status]).toEqual([
      'success',
      'passed',
      'passed',
    ]);
  }, 120_000);
});

describe('in two unpacked trees (the App: every file of the head is committed)', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'consort-pr-engine-app-'));
    for (const side of ['base', 'head']) {
      await mkdir(path.join(root, side, 'packages', 'db', 'migrations'), { recursive: true });
      await writeFile(path.join(root, side, 'packages', 'db', 'package.json'), '{"name":"db"}');
    }
    await vendoredEngine('head', 0);
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  /** A node-pg-migrate committed in `side`'s package, its runner returning `answer` (its bytes differ by it). */
  async function vendoredEngine(side: 'base' | 'head', answer: number): Promise<void> {
    const dir = path.join(root, side, 'packages', 'db', 'node_modules', 'node-pg-migrate');
    await mkdir(dir, { recursive: true });
    await writeFile(
      path.join(dir, 'package.json'),
      JSON.stringify({ name: 'node-pg-migrate', version: '9.0.0-pr', main: 'index.js' }),
    );
    await writeFile(path.join(dir, 'index.js'), `exports.runner = () => ${answer};\n`);
  }

  const sides = () => ({
    workspace: path.join(root, 'head'),
    base: { sha: 'b', tree: { kind: 'dir' as const, dir: path.join(root, 'base') } },
    head: { sha: 'h', tree: { kind: 'dir' as const, dir: path.join(root, 'head') } },
  });

  it("refuses a package's node-pg-migrate the head brings, and one it changed", async () => {
    const engine = await resolveEngine(path.join(root, 'head'), { migrationsDir: 'packages/db/migrations' });
    expect(engine.source).toBe('project');
    await expect(refuseChangedModules(sides(), engine, [])).rejects.toThrow(/packages\/db\/node_modules/);
    // The base has it too, but not the same bytes.
    await vendoredEngine('base', 1);
    await expect(refuseChangedModules(sides(), engine, [])).rejects.toThrow(/the admin/);
    // The same bytes on both sides: the base's own.
    await vendoredEngine('base', 0);
    await expect(refuseChangedModules(sides(), engine, [])).resolves.toBeUndefined();
  });
});
