/**
 * The TDD lane's baseline is built as the admin from the base commit's migrations, and kept under a
 * name that hashes those migrations, the project files they import, the seed and the engine — not
 * the packages they import from `node_modules`. Those are the work tree's, ignored, and an agent's
 * turn writes them unseen; the proofs load packages only from the run's pristine install
 * (clean-tree.ts), kept in the git directory for an npm lockfile so that "a package an agent
 * patched in the workspace's node_modules during one run never reaches a later run's proofs".
 * Until 2026-12-05 the baseline's migrations were written to the work tree's
 * `node_modules/.cache/consort` and their imports resolved up from there: to a package an earlier
 * run's agent rewrote in the work tree's `node_modules` (or planted in `node_modules/.cache`), which
 * ran in the admin's migration process and filled the baseline every later proof forks.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { defaultConfig } from '../../src/config/schema.js';
import { snapshotDependencies, type Dependencies } from '../../src/lanes/tdd/clean-tree.js';
import { isolatedGit } from '../helpers/check-repo.js';
import { localTestProvider, query, type TestProvider } from '../helpers/servers.js';
import { laneBranches, tddAdapters, workspaceAt } from '../helpers/tdd.js';

const git = isolatedGit;
let t: TestProvider;
let dir: string;
let deps: Dependencies | undefined;
beforeAll(async () => {
  t = await localTestProvider();
});
afterAll(async () => {
  await t?.cleanup();
});
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'consort-baseline-modules-'));
});
afterEach(async () => {
  await deps?.dispose();
  deps = undefined;
  await rm(dir, { recursive: true, force: true });
});

const LABELS = 'module.exports = ["note", "call"];\n';

/** A repository whose base migration builds an enum from an installed package, with an npm lockfile for it. */
async function repoWithPackage(): Promise<string> {
  const lock = {
    name: 'crm',
    lockfileVersion: 3,
    packages: { '': { name: 'crm' }, 'node_modules/kinds-lib': { version: '1.0.0' } },
  };
  await mkdir(path.join(dir, 'migrations'));
  await mkdir(path.join(dir, 'node_modules', 'kinds-lib'), { recursive: true });
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'crm', private: true }));
  await writeFile(path.join(dir, 'package-lock.json'), JSON.stringify(lock));
  await writeFile(path.join(dir, 'node_modules', '.package-lock.json'), JSON.stringify(lock));
  await writeFile(
    path.join(dir, 'node_modules', 'kinds-lib', 'package.json'),
    JSON.stringify({ name: 'kinds-lib', version: '1.0.0', main: 'index.js' }),
  );
  await writeFile(path.join(dir, 'node_modules', 'kinds-lib', 'index.js'), LABELS);
  await writeFile(path.join(dir, '.gitignore'), 'node_modules\n');
  await writeFile(
    path.join(dir, 'migrations', '1700000000000_activity-kinds.js'),
    "const kinds = require('kinds-lib');\nexports.up = (pgm) => pgm.createType('activity_kind', kinds);\nexports.down = (pgm) => pgm.dropType('activity_kind');\n",
  );
  await git(dir, 'init', '-q', '-b', 'main');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'two kinds');
  return (await git(dir, 'rev-parse', 'HEAD')).stdout.trim();
}

/** The lane's baseline, built as a run builds it (with the run's pristine install), and its enum's labels. */
async function baselineLabels(baseCommit: string): Promise<string[]> {
  const config = { ...defaultConfig(), suite: { ...defaultConfig().suite, command: 'true' } };
  const branches = await laneBranches({
    provider: t.provider,
    dir,
    config,
    baseCommit,
    kit: { modules: deps!.links.get('node_modules')! },
  });
  try {
    const name = await branches.baseline();
    const rows = await query<{ label: string }>(
      await t.provider.connectionUri(name),
      'SELECT unnest(enum_range(NULL::activity_kind))::text AS label',
    );
    return rows.map((r) => r.label);
  } finally {
    await branches.settle();
  }
}

const PLANTED = 'module.exports = ["note", "call", "planted"];\n';

it("an earlier run's agent that rewrote a package in the work tree's node_modules does not fill the baseline", async () => {
  const base = await repoWithPackage();
  // An earlier run kept the install for this lockfile (in the git directory, out of agents' reach).
  deps = await snapshotDependencies(await workspaceAt(dir), tddAdapters.processes);
  // Its agent then rewrote the package in the work tree (ignored: no check sees it; npm's record untouched).
  await writeFile(path.join(dir, 'node_modules', 'kinds-lib', 'index.js'), PLANTED);
  // Until 2026-12-05: ['note', 'call', 'planted'], in the baseline every later proof forks.
  expect(await baselineLabels(base)).toEqual(['note', 'call']);
}, 90_000);

it("a package planted in the work tree's node_modules/.cache, above the scratch folder, is not loaded", async () => {
  const base = await repoWithPackage();
  deps = await snapshotDependencies(await workspaceAt(dir), tddAdapters.processes);
  // Node searches every node_modules above the migration first: the scratch folder's own parents.
  const planted = path.join(dir, 'node_modules', '.cache', 'consort', 'node_modules', 'kinds-lib');
  await mkdir(planted, { recursive: true });
  await writeFile(path.join(planted, 'package.json'), JSON.stringify({ name: 'kinds-lib', main: 'index.js' }));
  await writeFile(path.join(planted, 'index.js'), PLANTED);
  expect(await baselineLabels(base)).toEqual(['note', 'call']);
}, 90_000);
