/**
 * A PR branch that is slow to make (a full copy of a large baseline whose pool had no copy ready)
 * is named as such: the stage's summary says how long the branch took, so a newcomer does not read
 * nine seconds of copying as nine seconds of one trivial migration.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SLOW_FORK_MS } from '../../src/lanes/check/run.js';
import type { BranchProvider } from '../../src/ports/branch-provider.js';
import { checkAgainstMain, isolatedGit } from '../helpers/check-repo.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';

const git = isolatedGit;
let t: TestProvider;
let dir: string;
beforeAll(async () => {
  t = await localTestProvider();
  dir = await mkdtemp(path.join(tmpdir(), 'consort-slow-fork-'));
  await mkdir(path.join(dir, 'migrations'));
  await writeFile(path.join(dir, 'consort.config.json'), JSON.stringify({ suite: { command: 'true' } }));
  await writeFile(
    path.join(dir, 'migrations', '1700000000000_items.sql'),
    '-- Up Migration\nCREATE TABLE items (id int);\n-- Down Migration\nDROP TABLE items;\n',
  );
  await git(dir, 'init', '-q', '-b', 'main');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'base');
  await git(dir, 'checkout', '-qb', 'feature');
  await writeFile(
    path.join(dir, 'migrations', '1700000000001_label.sql'),
    '-- Up Migration\nALTER TABLE items ADD COLUMN label text;\n-- Down Migration\nALTER TABLE items DROP COLUMN label;\n',
  );
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'the pull request');
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await t?.cleanup();
});

/** The provider, with the PR branch's making held back `ms` (as a large copy would take). */
function slowFor(provider: BranchProvider, branch: string, ms: number): BranchProvider {
  const hold = () => new Promise((resolve) => setTimeout(resolve, ms));
  return new Proxy(provider, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if ((prop === 'create' || prop === 'reset') && typeof value === 'function')
        return async (...args: unknown[]) => {
          const name = typeof args[0] === 'string' ? args[0] : (args[0] as { name: string }).name;
          if (name === branch) await hold();
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

it("names a slow PR branch's time in the migrations stage, and only a slow one's", async () => {
  const fast = await checkAgainstMain(dir, 31, t.provider);
  expect(fast.stages.migrations.status).toBe('passed');
  expect(fast.stages.migrations.summary).not.toContain('from the baseline took');

  const slow = await checkAgainstMain(dir, 31, slowFor(t.provider, 'pr-31', SLOW_FORK_MS + 200));
  expect(slow.stages.migrations.status).toBe('passed');
  expect(slow.stages.migrations.summary).toMatch(
    /; making pr-31 from the baseline took \d+\.\d s \((copy|clone) mode\)$/,
  );

  // A migration that fails after a slow fork is not blamed for the fork's time either.
  await git(dir, 'checkout', '-qb', 'broken', 'main');
  await writeFile(
    path.join(dir, 'migrations', '1700000000002_broken.sql'),
    '-- Up Migration\nALTER TABLE no_such_table ADD COLUMN x int;\n-- Down Migration\nSELECT 1;\n',
  );
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'a migration that fails');
  const failed = await checkAgainstMain(dir, 32, slowFor(t.provider, 'pr-32', SLOW_FORK_MS + 200));
  expect(failed.stages.migrations.status).toBe('failed');
  expect(failed.stages.migrations.summary).toMatch(/; making pr-32 from the baseline took \d+\.\d s/);
}, 90_000);
