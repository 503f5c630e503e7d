/**
 * A migration that tells a proof's branch from a deploy. The proof runs the committed migrations on
 * a fresh branch as the branch's own role (`<database>_role`, in a database Consort named), so a
 * driver's migration can make the schema the tests expect only there —
 * `IF current_user LIKE '%\_role' THEN ALTER TABLE … ADD CONSTRAINT … END IF` — and the proof is
 * green while a deploy gets no constraint. Nothing in the tree is a harness file: like production
 * code that looks for `JEST_WORKER_ID`, it is for the person at the merge gate to see. Until
 * 2026-12-04 no such line was flagged (played here on a real branch of the system PostgreSQL).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { testEnvironmentFlags } from '../../src/lanes/tdd/test-env-flags.js';
import { execFileAsync } from '../helpers/exec-file.js';
import { asUser, postgresTestProvider, query, type TestProvider } from '../helpers/servers.js';
import { workspaceAt } from '../helpers/tdd.js';

const git = (cwd: string, ...args: string[]) =>
  execFileAsync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], {
    cwd,
  }).then((r) => r.stdout.trim());

const CHEAT = `CREATE TABLE phones (number text NOT NULL);
DO $$ BEGIN
  IF current_user LIKE '%\\_role' THEN
    ALTER TABLE phones ADD CONSTRAINT phones_e164 CHECK (number ~ '^\\+[0-9]+$');
  END IF;
END $$;
`;

/** Migration lines that branch on where they run: each must be flagged. */
const LOOKING = [
  "  IF current_user LIKE '%\\_role' THEN",
  "  IF current_database() LIKE '%consort%' THEN",
  "  IF session_user <> 'deploy' THEN",
  "  IF 'app' = current_database() THEN",
  "  IF current_user IN ('a_role', 'b_role') THEN",
  "  IF current_setting('application_name') = 'psql' THEN",
  "  IF EXISTS (SELECT 1 FROM pg_database WHERE datname LIKE 'x%') THEN",
  '  IF inet_server_port() <> 5432 THEN',
  "if (rows[0].current_database.startsWith('t')) pgm.sql('ALTER TABLE phones ADD CHECK (true)');",
  "if (process.env.DATABASE_URL?.includes('127.0.0.1')) pgm.addConstraint('phones', 'e164', 'CHECK (true)');",
  "const onBranch = name.startsWith('consort_');",
];
/** Ordinary migration lines: not flagged. */
const ORDINARY = [
  'GRANT SELECT ON phones TO current_user;',
  'ALTER DEFAULT PRIVILEGES FOR ROLE current_user IN SCHEMA public GRANT SELECT ON TABLES TO reader;',
  "IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'reader') THEN CREATE ROLE reader; END IF;",
  'CREATE INDEX phones_number ON phones (number);',
  "pgm.addColumn('customers', { phone: { type: 'text' } });",
];

let tp: TestProvider;
beforeAll(async () => {
  tp = await postgresTestProvider();
});
afterAll(() => tp.cleanup());

it("the cheat is real: the constraint exists on a proof's branch (its own role), not on a deploy", async () => {
  await tp.provider.create({ name: 'proof' });
  const proofUrl = await tp.provider.confinedUri('proof');
  expect(proofUrl).not.toBeNull();
  await asUser(proofUrl!, (c) => c.query(CHEAT));
  const constraints = (url: string) =>
    query<{ conname: string }>(url, "SELECT conname FROM pg_constraint WHERE conrelid = 'phones'::regclass");
  expect(await constraints(proofUrl!)).toEqual([{ conname: 'phones_e164' }]);
  // A deploy: the same migration, applied by the project's own user.
  await tp.provider.create({ name: 'deploy' });
  const deployUrl = await tp.provider.connectionUri('deploy');
  await asUser(deployUrl, (c) => c.query(CHEAT));
  expect(await constraints(deployUrl)).toEqual([]);
}, 60_000);

it('flags added migration lines that branch on the database, role or server they run on', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'consort-migration-detects-'));
  try {
    await mkdir(path.join(dir, 'migrations'));
    await writeFile(path.join(dir, 'migrations', '001_base.sql'), 'CREATE TABLE customers (id int);\n');
    await git(dir, 'init', '-q');
    await git(dir, 'add', '-A');
    await git(dir, 'commit', '-qm', 'base');
    const base = await git(dir, 'rev-parse', 'HEAD');
    await writeFile(path.join(dir, 'migrations', '002_phones.sql'), CHEAT);
    await writeFile(path.join(dir, 'migrations', '003_more.sql'), `${[...LOOKING, ...ORDINARY].join('\n')}\n`);
    await git(dir, 'add', '-A');
    await git(dir, 'commit', '-qm', 'green');
    const flags = await testEnvironmentFlags(await workspaceAt(dir), base);
    expect(flags).toContain(
      "migrations/002_phones.sql:3 looks for a test environment: IF current_user LIKE '%\\_role' THEN",
    );
    const flagged = new Set(
      flags.filter((f) => f.startsWith('migrations/003_more.sql:')).map((f) => Number.parseInt(f.split(':')[1]!, 10)),
    );
    expect([...flagged].sort((a, b) => a - b)).toEqual(LOOKING.map((_, i) => i + 1));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, 60_000);
