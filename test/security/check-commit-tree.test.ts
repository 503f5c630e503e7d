/**
 * The check runs exactly the migrations it planned from the commits' objects. A base migration
 * that is a link to a shared file (a monorepo's) is compared by the file it leads to: read as its
 * target's path it looked edited on every pull request, and an edit of the shared file itself
 * slipped past the "applied migration edited" problem. A pull request checked by commit
 * (`consort check --head <ref>`) cannot drop its migration from the run with `export-ignore`, nor
 * change what runs from what was linted with `export-subst`. On the `local` provider.
 */
import { rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { checkBranch, checkRepo, git } from '../helpers/check-repo.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';

const migration = (table: string, extra = '') =>
  `-- Up Migration\nCREATE TABLE ${table} (id int PRIMARY KEY);${extra}\n-- Down Migration\nDROP TABLE ${table};\n`;
const CONFIG = 'migrations:\n  dir: migrations\nsuite:\n  command: "true"\n';

let t: TestProvider;
let dir: string;
beforeAll(async () => {
  t = await localTestProvider();
});
afterAll(async () => t?.cleanup());
afterEach(() => rm(dir, { recursive: true, force: true }));

/** main: the configuration and `migrations/1700000000000_customers.sql`, a link to `shared/` when `linked`. */
async function repo(linked: boolean): Promise<void> {
  dir = await checkRepo('commit-tree', {
    '.github/consort.yml': CONFIG,
    [linked ? 'shared/customers.sql' : 'migrations/1700000000000_customers.sql']: migration('customers'),
  });
  if (!linked) return;
  await symlink('../shared/customers.sql', path.join(dir, 'migrations/1700000000000_customers.sql'));
  await git(dir, 'add', '-A');
  await git(dir, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'linked migration');
}

/** On branch `name`: `change` made and committed. */
async function branch(name: string, change: () => Promise<void>): Promise<void> {
  await git(dir, 'checkout', '-q', '-b', name, 'main');
  await change();
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', name);
}

/** `consort check --base main --head <name>`: both sides read from commits and written for the run. */
const checkCommit = (name: string, pr: number, log: string[] = []) =>
  checkBranch(dir, name, pr, t.provider, (l) => void log.push(l), {}, { asCommit: true });

it('a base migration linked to a shared file is unchanged when the change leaves that file alone', async () => {
  await repo(true);
  await branch('orders', () => writeFile(path.join(dir, 'migrations/1700000000001_orders.sql'), migration('orders')));
  const report = await checkBranch(dir, 'orders', 941, t.provider);
  expect(report.stages.plan).toMatchObject({ status: 'passed', newMigrations: ['1700000000001_orders'], problems: [] });
  expect(report.stages.migrations.applied.map((m) => m.name)).toEqual(['1700000000001_orders']);
  expect(report.conclusion).toBe('success');
}, 120_000);

it('editing the shared file a base migration links to is editing that migration', async () => {
  await repo(true);
  await branch('sneaky', () => writeFile(path.join(dir, 'shared/customers.sql'), migration('customers', ' SELECT 2;')));
  const report = await checkCommit('sneaky', 942);
  expect(report.stages.plan.status).toBe('failed');
  expect(JSON.stringify(report.stages.plan.problems)).toContain('1700000000000_customers');
}, 120_000);

it("a pull request's export-ignore and export-subst change neither which migrations run nor their text", async () => {
  await repo(false);
  await branch('attributes', async () => {
    await writeFile(path.join(dir, 'migrations/1700000000001_orders.sql'), migration('orders'));
    // $Format:$ expands to nothing in an archive: the linted statement would not be the one run.
    await writeFile(path.join(dir, 'migrations/1700000000002_notes.sql'), migration('notes', ' -- $Format:$'));
    await writeFile(
      path.join(dir, '.gitattributes'),
      'migrations/1700000000001_orders.sql export-ignore\nmigrations/*.sql export-subst\n',
    );
  });
  const report = await checkCommit('attributes', 943);
  expect(report.error).toBeUndefined();
  expect(report.stages.plan.newMigrations).toEqual(['1700000000001_orders', '1700000000002_notes']);
  expect(report.stages.migrations).toMatchObject({ status: 'passed' });
  expect(report.stages.migrations.applied.map((m) => m.name)).toEqual(['1700000000001_orders', '1700000000002_notes']);
  expect(report.conclusion).toBe('success');
}, 120_000);

it('a link in the change that leads outside the repository is named and not written for the run', async () => {
  await repo(false);
  await branch('outside', async () => {
    await writeFile(path.join(dir, 'migrations/1700000000001_orders.sql'), migration('orders'));
    await symlink('/proc/self/environ', path.join(dir, 'environ'));
  });
  const log: string[] = [];
  const report = await checkCommit('outside', 944, log);
  expect(report.conclusion).toBe('success');
  expect(log).toContain(
    'Not written for the run (head): environ is a link to "/proc/self/environ", which leads outside the repository (an absolute path).',
  );
}, 120_000);
