/**
 * One run, one engine: runEngine resolves the project's node-pg-migrate once however many applies
 * ask, adds the TypeScript loader the first time a TypeScript migration appears (refusing with the
 * fix when there is none, and asking again next time), and loads the project's packages from a
 * pristine copy of node_modules when the lane has one (out of the agents' reach).
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
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
