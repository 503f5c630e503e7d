/**
 * Whether the project's deploy resolves TypeScript path aliases in its migrations, read from the
 * scripts that run node-pg-migrate on migrations.dir: tsconfig-paths registered before
 * node-pg-migrate (`-r`, `--require`, NODE_OPTIONS; TS_NODE_PROJECT names its tsconfig), or
 * node-pg-migrate 9's `--tsconfig-paths` — only where every command on the folder agrees. Then the
 * check resolves them with the same thing: the project's tsconfig-paths (refused with the fix when
 * it has none), loaded from the TDD lane's pristine copy, never one a pull request commits for the
 * baseline; or node-pg-migrate 9's runner option.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { refuseChangedModules } from '../../src/lanes/check/changed-modules.js';
import { deployPathAliases } from '../../src/migrations/deploy-paths.js';
import { bundledEngine, type MigrationEngine } from '../../src/migrations/engine.js';
import { nodePgMigrate } from '../../src/migrations/runner.js';
import { runEngine } from '../../src/migrations/run-engine.js';
import { prepareTypeScript } from '../../src/migrations/ts-loader.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'consort-deploy-paths-'));
  await mkdir(path.join(root, '.git'));
});
afterEach(() => rm(root, { recursive: true, force: true }));

const write = async (file: string, text: string) => {
  await mkdir(path.dirname(path.join(root, file)), { recursive: true });
  await writeFile(path.join(root, file), text);
};
const scripts = (s: Record<string, string>, at = '') =>
  write(path.join(at, 'package.json'), JSON.stringify({ name: 'chores', private: true, scripts: s }));
const found = (dir = 'migrations', engineVersion = '9.0.0') => deployPathAliases(root, dir, engineVersion);
/** A package installed in `modules` (a node_modules folder under the root, or absolute). */
const installed = (modules: string, name: string, version: string) =>
  write(
    path.join(path.relative(root, path.resolve(root, modules)), name, 'package.json'),
    JSON.stringify({ name, version }),
  );

describe('reading the deploy scripts', () => {
  it.each([
    ['ts-node -r tsconfig-paths/register node_modules/.bin/node-pg-migrate up', '-r tsconfig-paths/register'],
    [
      'node --require=tsconfig-paths/register ./node_modules/node-pg-migrate/bin/node-pg-migrate.js up',
      '--require=tsconfig-paths/register',
    ],
    ["NODE_OPTIONS='-r tsconfig-paths/register' node-pg-migrate up", "NODE_OPTIONS='-r tsconfig-paths/register'"],
    [
      'cross-env NODE_OPTIONS="--require tsconfig-paths/register" node-pg-migrate up',
      "NODE_OPTIONS='--require tsconfig-paths/register'",
    ],
  ])('%s registers tsconfig-paths', async (script, how) => {
    await scripts({ migrate: script, 'migrate:create': 'node-pg-migrate create -j ts' });
    expect(await found()).toEqual({ via: 'register', how: `${how} in package.json's script "migrate"` });
  });

  it('reads the tsconfig TS_NODE_PROJECT names, from where the command runs', async () => {
    await scripts({
      migrate:
        'cd db && TS_NODE_PROJECT=tsconfig.build.json ts-node -r tsconfig-paths/register ../node_modules/.bin/node-pg-migrate up',
    });
    expect(await found('db/migrations')).toEqual({
      via: 'register',
      tsconfig: 'db/tsconfig.build.json',
      how: `TS_NODE_PROJECT=tsconfig.build.json -r tsconfig-paths/register in package.json's script "migrate"`,
    });
    // One outside the repository cannot be the tree's: nothing known.
    await scripts({
      migrate:
        'TS_NODE_PROJECT=/etc/tsconfig.json node -r tsconfig-paths/register node_modules/.bin/node-pg-migrate up',
    });
    expect(await found()).toBeUndefined();
  });

  it('reads the command in a shell script file the script runs', async () => {
    await scripts({ migrate: 'sh scripts/migrate.sh up' });
    await write(
      'scripts/migrate.sh',
      '#!/bin/sh\nts-node -r tsconfig-paths/register node_modules/.bin/node-pg-migrate "$@"\n',
    );
    expect((await found())?.how).toBe(
      `-r tsconfig-paths/register in scripts/migrate.sh, run by package.json's script "migrate"`,
    );
  });

  it("reads node-pg-migrate 9's --tsconfig-paths as its CLI does, and not for 8", async () => {
    await scripts({ migrate: 'node-pg-migrate up --tsconfig-paths true' });
    expect(await found()).toEqual({ via: 'runner', how: `--tsconfig-paths true in package.json's script "migrate"` });
    expect(await found('migrations', '8.0.3')).toBeUndefined();
    await scripts({ migrate: 'node-pg-migrate up --tsconfig-paths=config/tsconfig.json' });
    expect(await found()).toMatchObject({ via: 'runner', tsconfig: 'config/tsconfig.json' });
    // Bare, the CLI's string option is '' and jiti reads no tsconfig; 'false' turns it off.
    await scripts({ migrate: 'node-pg-migrate up --tsconfig-paths' });
    expect(await found()).toBeUndefined();
    await scripts({ migrate: 'node-pg-migrate up --tsconfig-paths false' });
    expect(await found()).toBeUndefined();
    // A configuration file's key wins over the flag.
    await scripts({ migrate: 'node-pg-migrate up -f migrate.json --tsconfig-paths false' });
    await write('migrate.json', JSON.stringify({ db: { 'tsconfig-paths': true } }));
    expect(await found()).toEqual({
      via: 'runner',
      how: `tsconfig-paths: true in migrate.json in package.json's script "migrate"`,
    });
  });

  it('says nothing unless every command on the folder agrees', async () => {
    await scripts({
      migrate: 'ts-node -r tsconfig-paths/register node_modules/.bin/node-pg-migrate up',
      'migrate:test': 'node-pg-migrate up',
    });
    expect(await found()).toBeUndefined();
    await scripts({
      migrate: 'ts-node -r tsconfig-paths/register node_modules/.bin/node-pg-migrate up',
      // Another folder's command says nothing about this one.
      'migrate:seed': 'node-pg-migrate up -m seeds',
    });
    expect(await found()).toMatchObject({ via: 'register' });
    await scripts({ migrate: 'node-pg-migrate up', build: 'node -r tsconfig-paths/register dist/main.js' });
    expect(await found()).toBeUndefined();
  });
});

describe('what the check resolves them with', () => {
  const REGISTER = { migrate: 'ts-node -r tsconfig-paths/register node_modules/.bin/node-pg-migrate up' };
  const engine = async (): Promise<MigrationEngine> => bundledEngine();

  it("names the project's tsconfig-paths on the engine, and refuses with the fix when it has none", async () => {
    await scripts(REGISTER);
    await expect(prepareTypeScript(await engine(), root, ['1_a.ts'], { migrationsDir: 'migrations' })).rejects.toThrow(
      expect.objectContaining({
        message: expect.stringContaining(
          `The project's deploy registers tsconfig-paths before node-pg-migrate (-r tsconfig-paths/register in package.json's script "migrate")`,
        ),
        hint: expect.stringContaining('npm i -D tsconfig-paths'),
      }),
    );
    await installed('node_modules', 'tsconfig-paths', '4.2.0');
    const ts = await prepareTypeScript(await engine(), root, ['1_a.ts'], { migrationsDir: 'migrations' });
    expect(ts.paths).toEqual({
      name: 'tsconfig-paths',
      version: '4.2.0',
      source: 'project',
      how: `-r tsconfig-paths/register in package.json's script "migrate"`,
    });
    expect(ts.engine.tsconfigPaths).toEqual({ via: 'register', workspace: root });
    // SQL alone imports nothing: nothing to resolve.
    expect(
      (await prepareTypeScript(await engine(), root, ['1_a.sql'], { migrationsDir: 'migrations' })).paths,
    ).toBeUndefined();
  });

  it("loads it from the TDD lane's pristine copy, and refuses one that is not there", async () => {
    await scripts(REGISTER);
    await installed('node_modules', 'tsconfig-paths', '4.2.0');
    const copy = path.join(root, '.pristine', 'node_modules');
    const run = () => runEngine(nodePgMigrate, root, { migrationsDir: 'migrations', pristineModules: copy });
    await expect(run().forFiles(['1_a.ts'])).rejects.toThrow(
      /tsconfig-paths \(node_modules\/tsconfig-paths\) is not in the run's pristine copy/,
    );
    await installed(copy, 'tsconfig-paths', '4.2.0');
    expect((await run().forFiles(['1_a.ts'])).tsconfigPaths).toEqual({
      via: 'register',
      workspace: root,
      from: path.dirname(copy),
    });
  });

  it('refuses a pull request that commits the tsconfig-paths the baseline would load as the admin', async () => {
    // Base's migrations are SQL: only the packages the child loads count (the App's two unpacked trees).
    for (const side of ['base', 'head']) await mkdir(path.join(root, side, 'migrations'), { recursive: true });
    await write('head/node_modules/tsconfig-paths/package.json', '{"name":"tsconfig-paths","version":"4.2.0"}');
    await write('head/node_modules/tsconfig-paths/register.js', 'require("child_process");\n');
    const sides = {
      workspace: path.join(root, 'head'),
      base: { sha: 'b', tree: { kind: 'dir' as const, dir: path.join(root, 'base') } },
      head: { sha: 'h', tree: { kind: 'dir' as const, dir: path.join(root, 'head') } },
    };
    const e = { ...(await engine()), tsconfigPaths: { via: 'register' as const, workspace: path.join(root, 'head') } };
    await expect(refuseChangedModules(sides, e, [])).rejects.toThrow(/node_modules\/tsconfig-paths/);
  });
});
