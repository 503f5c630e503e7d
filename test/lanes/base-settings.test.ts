/**
 * What a pull request may not grant itself is read from the base's committed configuration
 * (src/lanes/check/base-settings.ts): from a commit with git (the CLI, the Action) or from a
 * checked-out tree (the App). The working tree's copy is never read for it; a base whose file is
 * invalid, doubled or outside the repository gives the default, the confined role, and says why.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { localGitRepo } from '../../src/git/repo.js';
import { settingsAtCommit, settingsInDir, verdictSettings } from '../../src/lanes/check/base-settings.js';
import { commitSide } from '../../src/lanes/check/sides.js';
import { defaultConfig } from '../../src/config/schema.js';
import { checkRepo, git } from '../helpers/check-repo.js';

const ADMIN = 'check:\n  migrationsRole: admin\n';
/** The verdict's settings of a base that sets none of them. */
const DEFAULTS = verdictSettings(defaultConfig());
let dir: string;
const head = async () => (await git(dir, 'rev-parse', 'HEAD')).stdout.trim();

beforeEach(async () => {
  dir = await checkRepo('base-settings', { '.github/consort.yml': 'suite:\n  command: npm test\n' });
});
afterEach(() => rm(dir, { recursive: true, force: true }));

it('reads the committed file, not the working tree', async () => {
  const base = await head();
  await writeFile(path.join(dir, '.github/consort.yml'), ADMIN);
  expect(await settingsAtCommit(localGitRepo, dir, base)).toEqual({
    migrationsRole: 'branch',
    verdict: DEFAULTS,
    migrationsTimeout: '30m',
    migrationsDir: 'migrations',
    source: '.github/consort.yml',
  });
  expect((await commitSide(localGitRepo, dir, 'main', base, defaultConfig())).settings).toEqual({
    migrationsRole: 'branch',
    verdict: DEFAULTS,
    migrationsTimeout: '30m',
    migrationsDir: 'migrations',
    source: '.github/consort.yml',
  });
  await git(dir, 'commit', '-qam', 'opt out');
  expect(await settingsAtCommit(localGitRepo, dir, await head())).toEqual({
    migrationsRole: 'admin',
    verdict: DEFAULTS,
    migrationsTimeout: '30m',
    migrationsDir: 'migrations',
    source: '.github/consort.yml',
  });
  expect(await settingsInDir(dir)).toEqual({
    migrationsRole: 'admin',
    verdict: DEFAULTS,
    migrationsTimeout: '30m',
    migrationsDir: 'migrations',
    source: '.github/consort.yml',
  });
});

it('reads the file named with --config at the commit', async () => {
  await mkdir(path.join(dir, 'ci'));
  await writeFile(path.join(dir, 'ci', 'consort.json'), JSON.stringify({ check: { migrationsRole: 'admin' } }));
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'ci config');
  expect(await settingsAtCommit(localGitRepo, dir, await head(), 'ci/consort.json')).toEqual({
    migrationsRole: 'admin',
    verdict: DEFAULTS,
    migrationsTimeout: '30m',
    migrationsDir: 'migrations',
    source: 'ci/consort.json',
  });
  expect(await settingsAtCommit(localGitRepo, dir, await head(), path.join(dir, 'ci', 'consort.json'))).toMatchObject({
    migrationsRole: 'admin',
    verdict: DEFAULTS,
    migrationsTimeout: '30m',
    migrationsDir: 'migrations',
  });
  expect(await settingsAtCommit(localGitRepo, dir, await head(), 'ci/missing.yml')).toEqual({
    migrationsRole: 'branch',
    verdict: DEFAULTS,
    migrationsTimeout: '30m',
    source: null,
  });
  expect(await settingsAtCommit(localGitRepo, dir, await head(), '/etc/consort.yml')).toEqual({
    migrationsRole: 'branch',
    source: null,
    problem: '/etc/consort.yml is outside the repository, so the base has no copy of it',
  });
});

it('an invalid or doubled base configuration gives the confined role, and says why', async () => {
  await writeFile(path.join(dir, '.github/consort.yml'), 'check:\n  migrationsRole: root\n');
  await git(dir, 'commit', '-qam', 'invalid');
  expect(await settingsAtCommit(localGitRepo, dir, await head())).toEqual({
    migrationsRole: 'branch',
    verdict: DEFAULTS,
    migrationsTimeout: '30m',
    source: '.github/consort.yml',
    problem: expect.stringMatching(
      /^the base's \.github\/consort\.yml is invalid \(.*check\.migrationsRole: expected one of branch\|admin/,
    ),
  });
  await writeFile(path.join(dir, '.github/consort.yml'), ADMIN);
  await writeFile(path.join(dir, 'consort.config.json'), '{}');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'two files');
  expect(await settingsAtCommit(localGitRepo, dir, await head())).toEqual({
    migrationsRole: 'branch',
    verdict: DEFAULTS,
    migrationsTimeout: '30m',
    source: null,
    problem: 'the base has 2 configuration files (.github/consort.yml, consort.config.json)',
  });
});

it("reads migrations.timeout from the committed file: the limit on base's own migrations", async () => {
  await writeFile(path.join(dir, '.github/consort.yml'), 'migrations:\n  timeout: 90s\n');
  await git(dir, 'commit', '-qam', 'a limit');
  const base = await head();
  await writeFile(path.join(dir, '.github/consort.yml'), 'migrations:\n  timeout: 5h\n');
  expect((await settingsAtCommit(localGitRepo, dir, base)).migrationsTimeout).toBe('90s');
});

it("reads the verdict's settings from the committed file, never the working tree's", async () => {
  await writeFile(
    path.join(dir, '.github/consort.yml'),
    'check:\n  blocking: [suite]\nlint:\n  failOn: none\nreversibility:\n  enabled: false\ndatabase:\n  parent: staging\n',
  );
  expect((await settingsAtCommit(localGitRepo, dir, await head())).verdict).toEqual(DEFAULTS);
  await git(dir, 'commit', '-qam', 'relax');
  const relaxed = {
    ...DEFAULTS,
    blocking: ['suite'],
    lint: { ...DEFAULTS.lint, failOn: 'none' },
    reversibility: { ...DEFAULTS.reversibility, enabled: false },
    parent: 'staging',
  };
  expect((await settingsAtCommit(localGitRepo, dir, await head())).verdict).toEqual(relaxed);
  expect((await settingsInDir(dir)).verdict).toEqual(relaxed);
  // A file outside the repository is no pull request's to change: the file as given counts.
  expect((await settingsAtCommit(localGitRepo, dir, await head(), '/etc/consort.yml')).verdict).toBeUndefined();
});
