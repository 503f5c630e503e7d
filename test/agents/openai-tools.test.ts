/**
 * The `openai` backend's tools on their own: query_sql on a real branch of the embedded
 * PostgreSQL 18 cannot write, run_suite hands the branch to the suite, and symlinks cannot lead
 * reads or writes out of the workspace.
 */
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  querySqlTool,
  readFileTool,
  runSuiteTool,
  type ToolContext,
  writeFileTool,
} from '../../src/agents/openai-tools.js';
import { nodePgMigrate } from '../../src/migrations/runner.js';
import { fakeProjectEngine } from '../helpers/fake-engine.js';
import { localTestProvider, query, type TestProvider } from '../helpers/servers.js';

let t: TestProvider;
let url: string;
let dir: string;
let outside: string;
let ctx: ToolContext;

beforeAll(async () => {
  t = await localTestProvider();
  await t.provider.create({ name: 'agent-tools' });
  url = await t.provider.connectionUri('agent-tools');
  await query(
    url,
    'CREATE TABLE customers (id int PRIMARY KEY, name text); INSERT INTO customers SELECT g, $$c$$ || g FROM generate_series(1, 250) g',
  );
}, 120_000);
afterAll(async () => {
  await t?.cleanup();
});
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'consort-tools-'));
  outside = await mkdtemp(path.join(os.tmpdir(), 'consort-outside-'));
  ctx = {
    workspace: dir,
    writes: ['src/**'],
    branchUrl: url,
    signal: new AbortController().signal,
    suite: {
      command:
        "node -e \"console.log(process.env.SHOP_URL === process.env.DATABASE_URL ? 'same' : 'other', process.env.PGDATABASE)\"; exit 3",
      env: 'SHOP_URL',
    },
  };
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

async function count(): Promise<number> {
  return Number((await query<{ n: string }>(url, 'SELECT count(*) AS n FROM customers'))[0]!.n);
}

describe('query_sql', () => {
  it('reads the branch, row-limited', async () => {
    const out = await querySqlTool(ctx, 'SELECT id, name FROM customers ORDER BY id');
    expect(out).toMatch(/^SELECT 250\n/);
    expect(out).toContain('"name": "c100"');
    expect(out).not.toContain('"name": "c101"');
    expect(out).toContain('150 more rows');
  });

  it.each([
    ['an insert', 'INSERT INTO customers VALUES (999, $$x$$)', /read-only transaction/],
    ['a DDL statement', 'DROP TABLE customers', /read-only transaction/],
    ['a commit before a write', 'COMMIT; DELETE FROM customers', /multiple commands/],
    ['making the transaction read-write', 'SET TRANSACTION READ WRITE', /before any query/],
    [
      'a write in a CTE',
      'WITH d AS (DELETE FROM customers RETURNING 1) SELECT count(*) FROM d',
      /read-only transaction/,
    ],
  ])('cannot write with %s', async (_name, sql, error) => {
    const out = await querySqlTool(ctx, sql);
    expect(out).toMatch(/^error: /);
    expect(out).toMatch(error);
    expect(await count()).toBe(250);
  });
});

describe('run_suite', () => {
  // What a case's migrations made goes with it, passed or failed: the next case starts from the
  // branch as beforeAll made it.
  afterEach(async () => {
    await query(
      url,
      'DROP TABLE IF EXISTS pgmigrations; ALTER TABLE customers DROP COLUMN IF EXISTS phone, DROP COLUMN IF EXISTS note',
    );
  });

  it('runs the suite in the workspace with the branch in the suite variable and reports the exit', async () => {
    const out = await runSuiteTool(ctx);
    expect(out).toMatch(/^suite failed \(exit 3\)\nsame /);
    expect(out).toContain(new URL(url).pathname.slice(1));
  });

  it('applies the migrations the agent wrote to its branch first, as the proof will', async () => {
    await mkdir(path.join(dir, 'migrations'));
    await writeFile(
      path.join(dir, 'migrations', '1730000400000_add_phone.sql'),
      '-- Up Migration\nALTER TABLE customers ADD COLUMN phone text;\n\n-- Down Migration\nALTER TABLE customers DROP COLUMN phone;\n',
    );
    const suite = {
      command: `psql -Atc "SELECT count(*) FROM information_schema.columns WHERE table_name = 'customers' AND column_name = 'phone'" "$DATABASE_URL"`,
      env: 'DATABASE_URL',
      migrations: { dir: 'migrations', placement: { migrationsTable: 'pgmigrations' } },
    };
    const out = await runSuiteTool({ ...ctx, suite });
    expect(out).toBe("migrations applied to this turn's branch: 1730000400000_add_phone\nsuite passed (exit 0)\n1\n");
    // Already applied: nothing to say the second time.
    expect(await runSuiteTool({ ...ctx, suite })).toBe('suite passed (exit 0)\n1\n');
  });

  it('does not run the suite when a migration fails, and says where', async () => {
    await mkdir(path.join(dir, 'migrations'));
    await writeFile(
      path.join(dir, 'migrations', '1730000400001_bad.sql'),
      '-- Up Migration\nALTER TABLE customerz ADD COLUMN phone text;\n',
    );
    const out = await runSuiteTool({
      ...ctx,
      suite: { ...ctx.suite!, migrations: { dir: 'migrations', placement: { migrationsTable: 'pgmigrations' } } },
    });
    expect(out).toMatch(
      /^suite not run: migrations failed at 1730000400001_bad \(migrations\/1730000400001_bad\.sql(:\d+)?\): relation "customerz" does not exist/,
    );
  });

  it("applies them with the engine the run applies the proofs' migrations with (the project's)", async () => {
    await mkdir(path.join(dir, 'migrations'));
    await writeFile(
      path.join(dir, 'migrations', '1730000400002_add_note.sql'),
      '-- Up Migration\nALTER TABLE customers ADD COLUMN note text;\n\n-- Down Migration\nALTER TABLE customers DROP COLUMN note;\n',
    );
    const engine = await fakeProjectEngine(dir, '7.9.1-project');
    const asked: string[] = [];
    const out = await runSuiteTool({
      ...ctx,
      suite: {
        command: 'true',
        env: 'DATABASE_URL',
        migrations: { dir: 'migrations', placement: { migrationsTable: 'pgmigrations' } },
      },
      migrationEngine: async (at) => {
        asked.push(at);
        return nodePgMigrate.resolveEngine(dir);
      },
    });
    expect(out).toBe("migrations applied to this turn's branch: 1730000400002_add_note\nsuite passed (exit 0)\n");
    expect(asked).toEqual([path.join(dir, 'migrations')]);
    expect(await engine.uses()).toEqual([`up ${path.join(dir, 'migrations')}`]);
  });

  it('does not run the suite when there is no engine to apply the migrations with, and says why', async () => {
    await mkdir(path.join(dir, 'migrations'));
    await writeFile(path.join(dir, 'migrations', '1730000400003_x.ts'), 'export const up = () => undefined;\n');
    const out = await runSuiteTool({
      ...ctx,
      suite: {
        command: 'true',
        env: 'DATABASE_URL',
        migrations: { dir: 'migrations', placement: { migrationsTable: 'pgmigrations' } },
      },
      migrationEngine: () => Promise.reject(new Error('no TypeScript loader')),
    });
    expect(out).toBe('suite not run: no node-pg-migrate to apply them with: no TypeScript loader');
  });

  it('says so when no suite is configured', async () => {
    const { suite: _suite, ...bare } = ctx;
    expect(await runSuiteTool(bare)).toMatch(/no suite is configured/);
  });
});

describe('the workspace boundary', () => {
  it("refuses writes into git's own files even when the scope allows everything", async () => {
    await mkdir(path.join(dir, '.git/hooks'), { recursive: true });
    const everything = { ...ctx, writes: ['**'] };
    expect(await writeFileTool(everything, '.git/hooks/pre-commit', 'rm -rf /')).toMatch(
      /^refused: .* inside git's own files/,
    );
    expect(await writeFileTool(everything, 'vendor/lib/.git/config', 'x')).toMatch(/^refused/);
    expect(await writeFileTool(everything, 'src/ok.js', 'x')).toBe('wrote src/ok.js (1 bytes)');
  });

  it('does not follow symlinks out of the workspace', async () => {
    await writeFile(path.join(outside, 'secret.txt'), 'do not read me');
    await symlink(outside, path.join(dir, 'src'));
    expect(await readFileTool(ctx, 'src/secret.txt')).toMatch(/^refused: .* outside the workspace/);
    expect(await writeFileTool(ctx, 'src/new.js', 'x')).toMatch(/^refused: .* outside the workspace/);
    await expect(readFile(path.join(outside, 'new.js'), 'utf8')).rejects.toThrow();
  });
});
