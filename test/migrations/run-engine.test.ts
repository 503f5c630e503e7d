/**
 * One run, one engine: runEngine resolves the project's node-pg-migrate once however many applies
 * ask, adds the TypeScript loader the first time a TypeScript migration appears (refusing with the
 * fix when there is none, and asking again next time), and loads the project's packages from a
 * pristine copy of node_modules when the lane has one (out of the agents' reach).
 */
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { nodePgMigrate } from '../../src/migrations/runner.js';
import { describeUsed, runEngine } from '../../src/migrations/run-engine.js';
import type { MigrationRunner } from '../../src/ports/migration-runner.js';
import { fakeProjectEngine } from '../helpers/fake-engine.js';

let project: string;
let pristine: string;
beforeAll(async () => {
  project = await mkdtemp(path.join(os.tmpdir(), 'consort-run-engine-'));
  await mkdir(path.join(project, '.git'));
  await mkdir(path.join(project, 'migrations'));
  await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'shop', private: true }));
  await fakeProjectEngine(project, '7.9.1-project');
  pristine = path.join(await mkdtemp(path.join(os.tmpdir(), 'consort-pristine-')), 'node_modules');
  await cp(path.join(project, 'node_modules'), pristine, { recursive: true });
});
afterAll(async () => {
  await rm(project, { recursive: true, force: true });
  await rm(path.dirname(pristine), { recursive: true, force: true });
});

const counting = () => {
  const calls: string[] = [];
  const runner: Pick<MigrationRunner, 'resolveEngine'> = {
    resolveEngine: async (workspace, options) => {
      calls.push(workspace);
      return nodePgMigrate.resolveEngine(workspace, options);
    },
  };
  return { runner, calls };
};

it("resolves the project's engine once for the run's every apply, and says which it is", async () => {
  const { runner, calls } = counting();
  const lines: string[] = [];
  const run = runEngine(runner, project, { migrationsDir: 'migrations', log: (l) => lines.push(l) });
  expect(run.used()).toBeNull();
  const [a, b] = await Promise.all([run.forFiles(['001_a.sql']), run.forDir(path.join(project, 'migrations'))]);
  expect(a).toBe(b);
  expect(a).toMatchObject({
    source: 'project',
    version: '7.9.1-project',
    dir: path.join(project, 'node_modules/node-pg-migrate'),
  });
  expect(calls).toHaveLength(1);
  expect(run.used()).toEqual({ version: '7.9.1-project', source: 'project' });
  expect(lines).toEqual(["migrations are applied with node-pg-migrate 7.9.1-project (the project's)"]);
});

it("names a project's node-pg-migrate that npm hoisted into one copy with Consort's the project's, as the check does", async () => {
  // `npm i -D consort-db node-pg-migrate`: one node_modules/node-pg-migrate serves both. `consort
  // check` calls it the project's; `consort pair` (and the hooks' log) said "bundled with Consort".
  const shared = await mkdtemp(path.join(os.tmpdir(), 'consort-run-engine-hoisted-'));
  try {
    await mkdir(path.join(shared, '.git'));
    await mkdir(path.join(shared, 'node_modules'));
    await symlink(
      path.join(process.cwd(), 'node_modules/node-pg-migrate'),
      path.join(shared, 'node_modules/node-pg-migrate'),
    );
    const run = runEngine(nodePgMigrate, shared, { migrationsDir: 'migrations' });
    await run.forFiles(['001_a.sql']);
    expect(run.used()).toMatchObject({ source: 'bundled', sharedWithProject: true });
    expect(describeUsed(run.used()!)).toBe("node-pg-migrate 9.0.0 (the project's, the same copy Consort uses)");
  } finally {
    await rm(shared, { recursive: true, force: true });
  }
});

it('loads the engine from the pristine copy of node_modules when the lane has one', async () => {
  const run = runEngine(counting().runner, project, { migrationsDir: 'migrations', pristineModules: pristine });
  const engine = await run.forFiles(['001_a.sql']);
  expect(engine).toMatchObject({
    source: 'project',
    dir: path.join(pristine, 'node-pg-migrate'),
    entry: path.join(pristine, 'node-pg-migrate', 'index.js'),
  });
});

it('refuses TypeScript a 7.x engine cannot load with the fix, asks again next time, then adds the loader once installed', async () => {
  const { runner, calls } = counting();
  const run = runEngine(runner, project, { migrationsDir: 'migrations', pristineModules: pristine });
  await expect(run.forFiles(['002_b.ts'])).rejects.toThrow(/loads TypeScript only through a loader/);
  await expect(run.forFiles(['002_b.ts'])).rejects.toThrow(/loads TypeScript only through a loader/);
  for (const modules of [path.join(project, 'node_modules'), pristine]) {
    await mkdir(path.join(modules, 'tsx'), { recursive: true });
    await writeFile(path.join(modules, 'tsx', 'package.json'), JSON.stringify({ name: 'tsx', version: '4.19.0' }));
  }
  const engine = await run.forFiles(['001_a.sql', '002_b.ts']);
  expect(engine.tsLoader).toMatchObject({ name: 'tsx', workspace: project, from: path.dirname(pristine) });
  expect(await run.forFiles(['001_a.sql'])).toBe(engine); // kept for the rest of the run
  expect(calls).toHaveLength(1);
  expect(describeUsed(run.used()!)).toBe(
    "node-pg-migrate 7.9.1-project (the project's), TypeScript through the project's tsx 4.19.0",
  );
});

describe('a monorepo package owning the migrations (packages/db/migrations)', () => {
  let repo: string;
  let copy: string;
  const db = () => path.join(repo, 'packages/db');
  beforeEach(async () => {
    repo = await mkdtemp(path.join(os.tmpdir(), 'consort-run-engine-mono-'));
    await mkdir(path.join(repo, '.git'));
    await mkdir(path.join(db(), 'migrations'), { recursive: true });
    await writeFile(path.join(repo, 'package.json'), JSON.stringify({ name: 'mono', workspaces: ['packages/*'] }));
    await writeFile(path.join(db(), 'package.json'), JSON.stringify({ name: 'db' }));
    await fakeProjectEngine(repo, '7.9.1-hoisted'); // hoisted to the root
    copy = path.join(await mkdtemp(path.join(os.tmpdir(), 'consort-pristine-mono-')), 'node_modules');
    await cp(path.join(repo, 'node_modules'), copy, { recursive: true });
  });
  afterEach(async () => {
    await rm(repo, { recursive: true, force: true });
    await rm(path.dirname(copy), { recursive: true, force: true });
  });
  const run = () =>
    runEngine(counting().runner, repo, { migrationsDir: 'packages/db/migrations', pristineModules: copy });

  it("loads the root's hoisted engine from the pristine copy, not the work tree", async () => {
    expect(await run().forFiles(['001_a.sql'])).toMatchObject({
      source: 'project',
      version: '7.9.1-hoisted',
      dir: path.join(copy, 'node-pg-migrate'),
      entry: path.join(copy, 'node-pg-migrate', 'index.js'),
    });
  });

  it("refuses an engine in the package's own node_modules (no pristine copy of it), saying to hoist it", async () => {
    await fakeProjectEngine(db(), '7.8.0-own');
    const refused = run().forFiles(['001_a.sql']);
    await expect(refused).rejects.toThrow(
      'node-pg-migrate is installed in packages/db/node_modules/node-pg-migrate, inside the work tree, where an agent can change it unseen',
    );
    await expect(refused).rejects.toMatchObject({ code: 'config', hint: /at the repository root/ });
  });

  it('refuses an engine an agent added to the work tree after the copy was taken', async () => {
    await rm(path.join(copy, 'node-pg-migrate'), { recursive: true });
    await expect(run().forFiles(['001_a.sql'])).rejects.toThrow(
      /node-pg-migrate \(node_modules\/node-pg-migrate\) is not in the run's pristine copy of node_modules/,
    );
  });

  it("refuses a TypeScript loader in the package's own node_modules; takes the root's from the copy", async () => {
    const tsx = async (modules: string) => {
      await mkdir(path.join(modules, 'tsx'), { recursive: true });
      await writeFile(path.join(modules, 'tsx', 'package.json'), JSON.stringify({ name: 'tsx', version: '4.19.0' }));
    };
    await tsx(path.join(db(), 'node_modules'));
    await expect(run().forFiles(['001_a.ts'])).rejects.toThrow(
      'tsx is installed in packages/db/node_modules/tsx, inside the work tree',
    );
    await rm(path.join(db(), 'node_modules'), { recursive: true });
    await tsx(path.join(repo, 'node_modules'));
    await tsx(copy);
    expect((await run().forFiles(['001_a.ts'])).tsLoader).toMatchObject({
      name: 'tsx',
      workspace: db(),
      from: path.dirname(copy),
    });
  });
});
