/**
 * The TDD lane's baseline is named by what decides it, as the check's is: base's JS/TS migrations
 * and the project files they import. A base that changed only such a file (the enum's values a
 * migration builds from the app's own list) is another baseline, not the one the old code made.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { defaultConfig } from '../../src/config/schema.js';
import { isolatedGit } from '../helpers/check-repo.js';
import { localTestProvider, query, type TestProvider } from '../helpers/servers.js';
import { laneBranches } from '../helpers/tdd.js';

const git = isolatedGit;
let t: TestProvider;
let dir: string;
beforeAll(async () => {
  t = await localTestProvider();
  dir = await mkdtemp(path.join(tmpdir(), 'consort-tdd-imports-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await t?.cleanup();
});

const head = async (): Promise<string> => (await git(dir, 'rev-parse', 'HEAD')).stdout.trim();

it("names the baseline by the project files base's migrations import, not only by the migrations", async () => {
  await mkdir(path.join(dir, 'migrations'));
  await mkdir(path.join(dir, 'src'));
  await writeFile(path.join(dir, 'src', 'kinds.js'), "module.exports = ['note', 'call'];\n");
  await writeFile(
    path.join(dir, 'migrations', '1700000000000_activity-kinds.js'),
    "const kinds = require('../src/kinds.js');\nexports.up = (pgm) => pgm.createType('activity_kind', kinds);\nexports.down = (pgm) => pgm.dropType('activity_kind');\n",
  );
  await git(dir, 'init', '-q', '-b', 'main');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'two kinds');
  const config = { ...defaultConfig(), suite: { ...defaultConfig().suite, command: 'true' } };
  const labels = async (baseCommit: string) => {
    const branches = await laneBranches({ provider: t.provider, dir, config, baseCommit });
    try {
      const name = await branches.baseline();
      const rows = await query<{ label: string }>(
        await t.provider.connectionUri(name),
        'SELECT unnest(enum_range(NULL::activity_kind))::text AS label',
      );
      return { name, labels: rows.map((r) => r.label) };
    } finally {
      await branches.settle();
    }
  };
  const first = await labels(await head());
  expect(first.labels).toEqual(['note', 'call']);

  // Only the imported file changes: the migration's own bytes are the same.
  await writeFile(path.join(dir, 'src', 'kinds.js'), "module.exports = ['note', 'call', 'email'];\n");
  await git(dir, 'commit', '-qam', 'a third kind');
  const second = await labels(await head());
  expect(second.name).not.toBe(first.name);
  expect(second.labels).toEqual(['note', 'call', 'email']);
}, 90_000);

/** The TDD lane's baseline of `repo` at its HEAD: its name and the labels of its `activity_kind` enum. */
async function kindsBaseline(repo: string): Promise<{ name: string; labels: string[] }> {
  const config = { ...defaultConfig(), suite: { ...defaultConfig().suite, command: 'true' } };
  const baseCommit = (await git(repo, 'rev-parse', 'HEAD')).stdout.trim();
  const branches = await laneBranches({ provider: t.provider, dir: repo, config, baseCommit });
  try {
    const name = await branches.baseline();
    const rows = await query<{ label: string }>(
      await t.provider.connectionUri(name),
      'SELECT unnest(enum_range(NULL::activity_kind))::text AS label',
    );
    return { name, labels: rows.map((r) => r.label) };
  } finally {
    await branches.settle();
  }
}

it("names the baseline by the workspace packages base's migrations import (`@acme/kinds`), as the check does", async () => {
  const repo = path.join(dir, 'monorepo');
  await mkdir(path.join(repo, 'migrations'), { recursive: true });
  await mkdir(path.join(repo, 'packages', 'kinds'), { recursive: true });
  await writeFile(path.join(repo, 'package.json'), JSON.stringify({ private: true, workspaces: ['packages/*'] }));
  await writeFile(
    path.join(repo, 'packages', 'kinds', 'package.json'),
    JSON.stringify({ name: '@acme/kinds', version: '1.0.0', main: 'index.js' }),
  );
  await writeFile(path.join(repo, 'packages', 'kinds', 'index.js'), "module.exports = ['note', 'call'];\n");
  await writeFile(
    path.join(repo, 'migrations', '1700000000000_activity-kinds.js'),
    "const kinds = require('@acme/kinds');\nexports.up = (pgm) => pgm.createType('activity_kind', kinds);\nexports.down = (pgm) => pgm.dropType('activity_kind');\n",
  );
  await writeFile(path.join(repo, '.gitignore'), 'node_modules\n');
  // As npm's install links a workspace package.
  await mkdir(path.join(repo, 'node_modules', '@acme'), { recursive: true });
  await symlink('../../packages/kinds', path.join(repo, 'node_modules', '@acme', 'kinds'));
  await git(repo, 'init', '-q', '-b', 'main');
  await git(repo, 'add', '-A');
  await git(repo, 'commit', '-qm', 'two kinds');
  const first = await kindsBaseline(repo);
  expect(first.labels).toEqual(['note', 'call']);

  // Only the package changes: the migration's own bytes are the same.
  await writeFile(path.join(repo, 'packages', 'kinds', 'index.js'), "module.exports = ['note', 'call', 'email'];\n");
  await git(repo, 'commit', '-qam', 'a third kind');
  const second = await kindsBaseline(repo);
  expect(second.name).not.toBe(first.name);
  expect(second.labels).toEqual(['note', 'call', 'email']);
}, 90_000);

it("names the baseline by what base's .env gives its migrations, as the check does", async () => {
  const repo = path.join(dir, 'with-dotenv');
  await mkdir(path.join(repo, 'migrations'), { recursive: true });
  // node-pg-migrate's CLI loads .env where the project has dotenv.
  await writeFile(
    path.join(repo, 'package.json'),
    JSON.stringify({ private: true, devDependencies: { dotenv: '^16' } }),
  );
  await writeFile(path.join(repo, '.env'), 'ACTIVITY_KINDS=note,call\n');
  await writeFile(
    path.join(repo, 'migrations', '1700000000000_activity-kinds.js'),
    "exports.up = (pgm) => pgm.createType('activity_kind', process.env.ACTIVITY_KINDS.split(','));\nexports.down = (pgm) => pgm.dropType('activity_kind');\n",
  );
  await git(repo, 'init', '-q', '-b', 'main');
  await git(repo, 'add', '-A');
  await git(repo, 'commit', '-qm', 'two kinds');
  const first = await kindsBaseline(repo);
  expect(first.labels).toEqual(['note', 'call']);

  // Only .env changes: the migration's own bytes are the same.
  await writeFile(path.join(repo, '.env'), 'ACTIVITY_KINDS=note,call,email\n');
  await git(repo, 'commit', '-qam', 'a third kind');
  const second = await kindsBaseline(repo);
  expect(second.name).not.toBe(first.name);
  expect(second.labels).toEqual(['note', 'call', 'email']);
}, 90_000);
