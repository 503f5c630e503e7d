/** The `consort pair` CLI contract: JSON shape, --export, status, diff, errors that say what to do. */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { postgresTestProvider, type TestProvider } from '../helpers/servers.js';
import { captureCli } from '../helpers/cli.js';
import { withClient } from '../../src/db/sql.js';

let t: TestProvider;
let root: string;
let env: NodeJS.ProcessEnv;

const cli = (...args: string[]) => captureCli(['-C', root, ...args], env);

beforeAll(async () => {
  t = await postgresTestProvider();
  root = await mkdtemp(path.join(os.tmpdir(), 'consort-pair-cli-'));
  const g = (...a: string[]) =>
    execFileSync('git', a, {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: root,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@e',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@e',
      },
    });
  g('init', '-q', '-b', 'main');
  await mkdir(path.join(root, 'migrations'));
  await writeFile(
    path.join(root, 'migrations', '001_items.sql'),
    '-- Up Migration\nCREATE TABLE items (id int);\n-- Down Migration\nDROP TABLE items;\n',
  );
  g('add', '.');
  g('commit', '-qm', 'init');
  g('checkout', '-q', '-b', 'feature/cli');
  env = {
    PATH: process.env.PATH ?? '',
    CONSORT_PROVIDER: 'postgres',
    CONSORT_POSTGRES_URL: t.adminUrl,
    CONSORT_NAMESPACE: t.namespace,
  };
});
afterAll(async () => {
  await t?.cleanup();
  await rm(root, { recursive: true, force: true });
});

it('pair --json: the pairing, migrations and the .env write, with a warning when .env is not git-ignored', async () => {
  const r = await cli('pair', '--json');
  expect(r.code).toBe(0);
  const out = JSON.parse(r.stdout);
  expect(out).toMatchObject({
    gitBranch: 'feature/cli',
    branch: 'feature-cli',
    parent: 'main',
    outcome: 'created',
    mode: 'copy',
    migrations: { applied: ['001_items'], failed: null },
    seeded: false,
    env: {
      file: '.env',
      key: 'DATABASE_URL',
      status: 'written',
      ignored: false,
      warning: expect.stringMatching(/not git-ignored/),
    },
  });
  expect(r.stderr).toMatch(/warning: \.env is not git-ignored/);
  expect(await readFile(path.join(root, '.env'), 'utf8')).toBe(
    `DATABASE_URL=${await t.provider.connectionUri('feature-cli')}\n`,
  );
});

it("pair --git-branch of a git branch that is not checked out leaves .env with the checked-out branch's URL", async () => {
  const before = await readFile(path.join(root, '.env'), 'utf8');
  const r = await cli('pair', '--git-branch', 'other/work', '--json');
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({
    gitBranch: 'other/work',
    branch: 'other-work',
    env: { status: 'skipped' },
    // The working tree's migrations are feature/cli's: other/work's database does not get them.
    migrations: {
      applied: [],
      skipped: "other/work is not the checked-out git branch: the working tree holds feature/cli's migrations",
    },
  });
  expect(
    await withClient(
      await t.provider.connectionUri('other-work'),
      async (db) => (await db.query<{ t: string | null }>(`SELECT to_regclass('public.items')::text AS t`)).rows[0]!.t,
    ),
  ).toBeNull();
  expect(r.stderr).toMatch(/note: \.env not written: other\/work is not the checked-out git branch/);
  expect((await cli('pair', '--git-branch', 'other/work')).stdout).toContain(
    "migrations not applied (other/work is not the checked-out git branch: the working tree holds feature/cli's migrations)",
  );
  expect(await readFile(path.join(root, '.env'), 'utf8')).toBe(before);
  // --from a git branch with no database branch of its own forks from the root, and says so.
  const from = await cli('pair', '--git-branch', 'other/two', '--from', 'no/such-branch');
  expect(from.code).toBe(0);
  expect(from.stderr).toContain(
    'note: git branch no/such-branch (--from) has no paired database branch, so other-two was forked from main',
  );
  expect((await cli('pair', '--git-branch', 'other/three', '--from', 'feature/cli')).stderr).not.toContain('(--from)');
});

it('pair --export prints a shell line with the URL and keeps the summary on stderr', async () => {
  await writeFile(path.join(root, '.gitignore'), '.env\n');
  const r = await cli('pair', '--export', '--no-env');
  expect(r.code).toBe(0);
  expect(r.stdout).toBe(`export DATABASE_URL='${await t.provider.connectionUri('feature-cli')}'\n`);
  expect(r.stderr).toMatch(/feature\/cli → feature-cli \(reused/);
});

it('pair status and pair diff describe the pairing', async () => {
  const s = JSON.parse((await cli('pair', 'status', '--json')).stdout);
  expect(s).toMatchObject({
    gitBranch: 'feature/cli',
    paired: { branch: 'feature-cli', parent: 'main' },
    env: { upToDate: true, ignored: true, warning: null },
    hooks: { manager: 'git', installed: false },
  });
  const d = JSON.parse((await cli('pair', 'diff', '--json')).stdout);
  expect(d).toMatchObject({ branch: 'feature-cli', parent: 'main', empty: false });
  expect((await cli('pair', 'diff')).stdout).toMatch(/\+ table public\.items/);
  const other = await cli('pair', 'status', '--git-branch', 'never/paired');
  // The suggestion carries the -C the command was given.
  expect(other.stdout).toMatch(/not paired yet \(run consort -C \S+ pair\)/);
  // A root git branch is paired with the root itself, which has no parent ("main (from -)" before).
  expect((await cli('pair', 'status', '--git-branch', 'main')).stdout).toMatch(
    /^database branch: main \(the root branch\)$/m,
  );
});

it('a detached HEAD is an error that says what to do', async () => {
  execFileSync('git', ['checkout', '-q', '--detach'], { cwd: root });
  try {
    const r = await cli('pair');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/HEAD is detached[^]*\nCheck out a branch, or pass --git-branch <name>\./);
  } finally {
    execFileSync('git', ['checkout', '-q', 'feature/cli'], { cwd: root });
  }
});
