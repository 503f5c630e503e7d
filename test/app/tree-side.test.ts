/**
 * The App reads both sides of a check from checked-out trees (treeSide). Which files are
 * migrations is the base's `migrations.ignorePattern`'s to say: a pull request that stretches its
 * own pattern over its new migration must not make it vanish before the plan (a review found the
 * App dropping it at read time, so lint and reversibility saw no new migration).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { treeSide } from '../../app/workspace.js';
import { ConsortConfigSchema } from '../../src/config/schema.js';
import { settingsInDir } from '../../src/lanes/check/base-settings.js';
import { decidePlan, migrationSets } from '../../src/lanes/check/plan.js';
import { withLeftBehind } from '../../src/lanes/check/sides.js';
import { trustedConfig } from '../../src/lanes/check/trusted-config.js';

/** The check's plan of a pull request whose sides were read from the App's two trees. */
function planOf(
  workspace: string,
  config: Parameters<typeof decidePlan>[0]['config'],
  base: Parameters<typeof decidePlan>[0]['base'],
  head: Parameters<typeof decidePlan>[0]['head'],
) {
  const request = { workspace, config, configSource: null, base, head, pr: 1, env: {}, toolVersion: 'test' };
  return decidePlan(request, migrationSets(request), { engine: { error: new Error('not read') }, baseSeed: undefined });
}

let base: string;
let head: string;
beforeAll(async () => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'consort-tree-side-'));
  base = path.join(root, 'base');
  head = path.join(root, 'head');
  for (const dir of [base, head]) {
    await mkdir(path.join(dir, 'migrations'), { recursive: true });
    await mkdir(path.join(dir, '.github'));
    await writeFile(path.join(dir, 'migrations', '0001_a.sql'), '-- Up Migration\nSELECT 1;\n');
    await writeFile(path.join(dir, 'migrations', '.gitkeep'), '');
  }
  await writeFile(path.join(base, '.github', 'consort.yml'), 'migrations:\n  dir: migrations\n');
  await writeFile(path.join(head, 'migrations', '0002_evil.sql'), '-- Up Migration\nDROP TABLE a;\n');
  await writeFile(
    path.join(head, '.github', 'consort.yml'),
    'migrations:\n  dir: migrations\n  ignorePattern: "\\\\..*|0002.*"\n',
  );
});
afterAll(async () => {
  await rm(path.dirname(base), { recursive: true, force: true });
});

it("keeps every file of a side, and the base's pattern decides the migrations", async () => {
  const config = ConsortConfigSchema.parse({ migrations: { dir: 'migrations', ignorePattern: '\\..*|0002.*' } });
  const headSide = await treeSide(head, config);
  expect(headSide.migrations.map((m) => m.file).sort()).toEqual([
    'migrations/.gitkeep',
    'migrations/0001_a.sql',
    'migrations/0002_evil.sql',
  ]);
  const baseSide = { ...(await treeSide(base, config)), settings: await settingsInDir(base) };
  const trusted = trustedConfig(config, baseSide);
  expect(trusted.ignored).toContain('migrations.ignorePattern');
  const side = { ref: 'x', sha: null };
  const sets = migrationSets({
    base: { ...side, ...baseSide },
    head: { ...side, ...headSide },
    config: trusted.config,
  });
  expect(sets.head.map((m) => m.name)).toEqual(['0001_a', '0002_evil']);
  expect(sets.base.map((m) => m.name)).toEqual(['0001_a']);
});

it("reads the head's files in the base's folder when the PR's migrations.dir names another, and the plan fails on one added there", async () => {
  const copies = path.join(path.dirname(base), 'copies-head');
  await mkdir(path.join(copies, 'db'), { recursive: true });
  await mkdir(path.join(copies, 'migrations'));
  await writeFile(path.join(copies, 'db', '0001_a.sql'), '-- Up Migration\nSELECT 1;\n');
  await writeFile(path.join(copies, 'migrations', '0001_a.sql'), '-- Up Migration\nSELECT 1;\n');
  await writeFile(path.join(copies, 'migrations', '0002_evil.sql'), '-- Up Migration\nDROP TABLE a;\n');
  const config = ConsortConfigSchema.parse({ migrations: { dir: 'db' } });
  const baseSide = {
    ref: 'main',
    sha: null,
    ...(await treeSide(base, { ...config, migrations: { ...config.migrations, dir: 'migrations' } })),
    settings: await settingsInDir(base),
  };
  const headSide = await withLeftBehind(
    undefined,
    baseSide,
    { ref: 'pr', sha: null, ...(await treeSide(copies, config)) },
    'db',
  );
  expect(headSide.leftBehind?.baseDir).toBe('migrations');
  const plan = await planOf(copies, config, baseSide, headSide);
  expect(plan.ok).toBe(false);
  expect(plan.migrations.ok ? [] : plan.migrations.problems).toEqual([
    {
      kind: 'outside-migrations-dir',
      file: 'migrations/0002_evil.sql',
      name: '0002_evil',
      dir: 'db',
      baseDir: 'migrations',
      change: 'added',
    },
  ]);
  // The same tree with the folder left as the base has it: nothing to say.
  await rm(path.join(copies, 'migrations', '0002_evil.sql'));
  const clean = await withLeftBehind(
    undefined,
    baseSide,
    { ref: 'pr', sha: null, ...(await treeSide(copies, config)) },
    'db',
  );
  expect((await planOf(copies, config, baseSide, clean)).ok).toBe(true);
});

it("a base without a configuration: the head's files in migrations/ are compared with the base's own there", async () => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'consort-tree-side-bare-'));
  try {
    const bare = path.join(root, 'base');
    const pr = path.join(root, 'head');
    await mkdir(path.join(bare, 'migrations'), { recursive: true });
    await writeFile(path.join(bare, 'migrations', '0001_a.sql'), '-- Up Migration\nSELECT 1;\n');
    await mkdir(path.join(pr, 'migrations'), { recursive: true });
    await mkdir(path.join(pr, 'db'));
    await writeFile(path.join(pr, 'migrations', '0001_a.sql'), '-- Up Migration\nSELECT 1;\n');
    await writeFile(path.join(pr, 'migrations', '0002_evil.sql'), '-- Up Migration\nDROP TABLE a;\n');
    await writeFile(path.join(pr, 'db', '0001_a.sql'), '-- Up Migration\nSELECT 1;\n');
    const config = ConsortConfigSchema.parse({ migrations: { dir: 'db' } });
    // As app/jobs/check.ts builds it: no configuration on the base, so its side reads the PR's folder.
    const settings = await settingsInDir(bare);
    expect(settings.migrationsDir).toBeUndefined();
    const baseSide = { ref: 'main', sha: null, ...(await treeSide(bare, config)), settings };
    const headSide = await withLeftBehind(
      undefined,
      baseSide,
      { ref: 'pr', sha: null, ...(await treeSide(pr, config)) },
      'db',
    );
    expect(headSide.leftBehind?.baseDir).toBe('migrations');
    expect(headSide.leftBehind?.baseMigrations?.map((m) => m.file)).toEqual(['migrations/0001_a.sql']);
    const plan = await planOf(pr, config, baseSide, headSide);
    expect(plan.migrations.ok ? [] : plan.migrations.problems).toEqual([
      {
        kind: 'outside-migrations-dir',
        file: 'migrations/0002_evil.sql',
        name: '0002_evil',
        dir: 'db',
        baseDir: 'migrations',
        change: 'added',
      },
    ]);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
