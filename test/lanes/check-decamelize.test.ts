/**
 * `migrations.decamelize` (node-pg-migrate's --decamelize) through the PR lane on the embedded
 * PostgreSQL 18: a project whose migrations name tables and columns in camelCase for the builder
 * and deploys with --decamelize gets them in snake_case on every branch, as in production; the
 * baseline built with it is another one than without.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { CheckReport } from '../../src/report/check-report.js';
import { checkAgainstMain, isolatedGit } from '../helpers/check-repo.js';
import { localTestProvider, query, type TestProvider } from '../helpers/servers.js';

const git = isolatedGit;

const BASE = `exports.up = (pgm) => {
  pgm.createTable('userAccounts', { id: 'id', firstName: { type: 'text', notNull: true } });
};
exports.down = (pgm) => pgm.dropTable('userAccounts');
`;
const PR = `exports.up = (pgm) => {
  pgm.addColumn('userAccounts', { lastName: { type: 'text' } });
};
exports.down = (pgm) => {
  pgm.dropColumn('userAccounts', 'lastName');
};
`;

let t: TestProvider;
const dirs: string[] = [];
beforeAll(async () => {
  t = await localTestProvider();
});
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  await t?.cleanup();
});

/** A repository whose base (its configuration included: the check's placement is the base's) holds the first migration. */
async function repository(decamelize: boolean): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'consort-decamelize-'));
  dirs.push(dir);
  await mkdir(path.join(dir, 'migrations'));
  await writeFile(
    path.join(dir, 'consort.config.json'),
    JSON.stringify({ migrations: { decamelize }, suite: { command: 'true' } }),
  );
  await writeFile(path.join(dir, 'migrations', '1700000000000_user-accounts.js'), BASE);
  await git(dir, 'init', '-q', '-b', 'main');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'base');
  await git(dir, 'checkout', '-qb', 'feature');
  await writeFile(path.join(dir, 'migrations', '1700000000001_last-name.js'), PR);
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'the pull request');
  return dir;
}

/** The PR branch is kept, to read its columns. */
const check = async (decamelize: boolean): Promise<CheckReport> =>
  checkAgainstMain(await repository(decamelize), decamelize ? 1 : 2, t.provider, false);

const columns = async (branch: string) =>
  (
    await query<{ c: string }>(
      await t.provider.connectionUri(branch),
      `SELECT table_name || '.' || column_name AS c FROM information_schema.columns
        WHERE table_schema = 'public' AND table_name <> 'pgmigrations' ORDER BY 1`,
    )
  ).map((r) => r.c);

it('applies, proves and diffs the migrations with snake_case names, as the deploy does', async () => {
  const report = await check(true);
  expect(report.error).toBeUndefined();
  expect(Object.entries(report.stages).filter(([, s]) => s.status === 'failed')).toEqual([]);
  expect(report.conclusion).toBe('success');
  expect(report.stages.reversibility.migrations.map((m) => m.verdict)).toEqual(['reversible']);
  expect(report.stages.schemaDiff.text).toContain('+ column public.user_accounts.last_name text');
  expect(await columns(report.branch!)).toEqual([
    'user_accounts.first_name',
    'user_accounts.id',
    'user_accounts.last_name',
  ]);
  // Without it, the names as written: another baseline, not the one above.
  const plain = await check(false);
  expect(plain.stages.baseline.name).not.toBe(report.stages.baseline.name);
  expect(await columns(plain.branch!)).toEqual(['userAccounts.firstName', 'userAccounts.id', 'userAccounts.lastName']);
  for (const r of [report, plain]) await t.provider.delete(r.branch!, { recursive: true, terminateConnections: true });
}, 120_000);
