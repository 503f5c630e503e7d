/**
 * The audit's database cheat, played by a scripted `command` agent in the TDD lane: handed its
 * sandbox's URL, it "adds the column" straight into the baseline every proof forks from and into
 * the proof's branch, instead of writing a migration. The lane's branch kit (createBranches) gives
 * the agent the sandbox's own role, so both writes are refused, and the proof's fresh fork holds
 * only what committed migrations made. (Its own sandbox is its to change, and is thrown away.)
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { commandBackend } from '../../src/agents/command.js';
import { loadConfig } from '../../src/config/load.js';
import { createBranches, type Branches } from '../../src/lanes/tdd/database.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { localTestProvider, query, type TestProvider } from '../helpers/servers.js';
import { tddAdapters, workspaceAt } from '../helpers/tdd.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
const git = (cwd: string, ...args: string[]) =>
  exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd });
const PG = createRequire(import.meta.url).resolve('pg');

/** The cheating agent: ALTER TABLE wherever it can name a database; what happened goes to cheat.json. */
const AGENT = `import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
const pg = createRequire(import.meta.url)(${JSON.stringify(PG)});
const targets = JSON.parse(readFileSync('targets.json', 'utf8'));
const out = {};
for (const [what, db] of Object.entries(targets)) {
  const u = new URL(process.env.DATABASE_URL);
  if (db) u.pathname = '/' + db;
  const c = new pg.Client({ connectionString: u.toString() });
  try {
    await c.connect();
    await c.query('ALTER TABLE customers ADD COLUMN phone text');
    out[what] = 'altered';
  } catch (e) { out[what] = 'refused: ' + e.message; } finally { await c.end().catch(() => {}); }
}
writeFileSync('cheat.json', JSON.stringify(out));
`;

let t: TestProvider;
let dir: string;
let branches: Branches;

beforeAll(async () => {
  t = await localTestProvider();
  dir = await mkdtemp(path.join(os.tmpdir(), 'consort-agent-db-'));
  await mkdir(path.join(dir, 'migrations'));
  await mkdir(path.join(dir, '.github'));
  await writeFile(
    path.join(dir, 'migrations', '1700000000000_customers.sql'),
    '-- Up Migration\nCREATE TABLE customers (id int PRIMARY KEY);\n-- Down Migration\nDROP TABLE customers;\n',
  );
  await writeFile(
    path.join(dir, '.github', 'consort.yml'),
    'migrations:\n  dir: migrations\nsuite:\n  command: node -e 0\n',
  );
  await writeFile(path.join(dir, 'agent.mjs'), AGENT);
  await git(dir, 'init', '-q', '-b', 'main');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'base');
  const { config } = await loadConfig(dir);
  const baseCommit = (await git(dir, 'rev-parse', 'HEAD')).stdout.trim();
  branches = createBranches({
    provider: t.provider,
    config,
    ws: await workspaceAt(dir),
    git: tddAdapters.git,
    migrations: tddAdapters.migrations,
    schemas: tddAdapters.schemas,
    env: process.env,
    processes: localProcessRunner,
    baseCommit,
  });
}, 60_000);

afterAll(async () => {
  await branches?.settle();
  await rm(dir, { recursive: true, force: true });
  await t?.cleanup();
});

it('a command agent cannot put a schema change into the baseline or the proof branch; the proof sees none', async () => {
  const sandbox = await branches.sandbox('f001-sandbox');
  const proof = await branches.fresh('f001-proof');
  const dbOf = async (name: string) => (await t.provider.get(name))!.database;
  const baseline = await dbOf(await branches.baseline());
  await writeFile(
    path.join(dir, 'targets.json'),
    JSON.stringify({ own: null, baseline, proof: await dbOf(branches.providerName('f001-proof')) }),
  );

  const agentUrl = await branches.untrusted('f001-sandbox', sandbox.url);
  const result = await commandBackend({ command: 'node agent.mjs' }).runTurn({
    role: 'driver',
    step: 'green',
    feature: '001-x',
    item: 'T1',
    instructions: '',
    workspace: dir,
    writes: ['**'],
    contextPack: { pack: {} as never, json: '{}', markdown: '# driver: green' },
    branchUrl: agentUrl,
    model: null,
    budget: { timeoutMs: 30_000 },
  });
  expect(result.exit).toEqual({ kind: 'done' });
  const cheat = JSON.parse(await readFile(path.join(dir, 'cheat.json'), 'utf8')) as Record<string, string>;
  expect(cheat).toEqual({
    own: 'altered', // its sandbox is its own to try things in
    baseline: expect.stringMatching(/^refused: permission denied for database/),
    proof: expect.stringMatching(/^refused: permission denied for database/),
  });
  // The column exists only where the agent may write; the proof's fork does not have it.
  const columns = (url: string) =>
    query<{ column_name: string }>(
      url,
      "SELECT column_name FROM information_schema.columns WHERE table_name = 'customers' ORDER BY 1",
    );
  expect((await columns(sandbox.url)).map((r) => r.column_name)).toEqual(['id', 'phone']);
  expect((await columns(proof.url)).map((r) => r.column_name)).toEqual(['id']);
  expect((await columns(await t.provider.connectionUri(await branches.baseline()))).map((r) => r.column_name)).toEqual([
    'id',
  ]);
}, 60_000);

it("an agent's migration runs as the branch's role: it can change its branch's schema, not run programs on the server", async () => {
  const file = path.join(dir, 'migrations', '1700000000001_phone.sql');
  await writeFile(
    file,
    "-- Up Migration\nCOPY (SELECT 1) TO PROGRAM 'touch /tmp/consort-pwned-migration';\n-- Down Migration\n",
  );
  const hostile = await branches.fresh('f001-proof2');
  expect(hostile.migrations).toMatchObject({
    ok: false,
    failed: {
      kind: 'statement',
      error: { message: expect.stringMatching(/permission denied|must be superuser|pg_execute_server_program/) },
    },
  });
  await expect(readFile('/tmp/consort-pwned-migration')).rejects.toThrow();
  await writeFile(
    file,
    '-- Up Migration\nALTER TABLE customers ADD COLUMN phone text;\nCREATE INDEX customers_phone ON customers (phone);\n-- Down Migration\nDROP INDEX customers_phone;\nALTER TABLE customers DROP COLUMN phone;\n',
  );
  const fine = await branches.fresh('f001-proof3');
  expect(fine.migrations).toMatchObject({
    ok: true,
    applied: [expect.objectContaining({ name: '1700000000001_phone' })],
  });
  await rm(file);
}, 60_000);
