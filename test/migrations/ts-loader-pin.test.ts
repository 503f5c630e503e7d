/**
 * A project whose lockfile pins ts-node but that has not installed it (the App's checkout, an
 * Action step before `npm ci`): ts-node is installed into the cache with the TypeScript the
 * lockfile pins beside it, else a major ts-node runs on, never left to npm (which resolves the
 * peer to the latest TypeScript: 7 has no compiler API for ts-node, and every migration then
 * fails with "Cannot read properties of undefined (reading 'fileExists')"). npm is a stand-in
 * first on PATH that records its arguments and writes each asked-for package's manifest: nothing
 * is downloaded. A tsconfig-paths the deploy script registers is installed the same way.
 */
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { MigrationEngine } from '../../src/migrations/engine.js';
import { packageCacheDir } from '../../src/migrations/engine-pin.js';
import { prepareTypeScript } from '../../src/migrations/ts-loader.js';

let scratch: string;
let env: NodeJS.ProcessEnv;
let npmLog: string;
beforeEach(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'consort-ts-node-pin-'));
  npmLog = path.join(scratch, 'npm.log');
  await mkdir(path.join(scratch, 'bin'));
  await writeFile(
    path.join(scratch, 'bin/npm'),
    `#!${process.execPath}
const fs = require('fs'), path = require('path');
const args = process.argv.slice(2);
fs.appendFileSync(${JSON.stringify(npmLog)}, JSON.stringify(args) + '\\n');
const at = args.indexOf('--prefix');
const prefix = args[at + 1];
for (const spec of args.slice(at + 2)) {
  const name = spec.replace(/@[^@]*$/, '');
  const asked = spec.slice(name.length + 1);
  const version = /^\\d+$/.test(asked) ? asked + '.9.3' : asked; // a major: its newest, as npm would
  fs.mkdirSync(path.join(prefix, 'node_modules', name), { recursive: true });
  fs.writeFileSync(path.join(prefix, 'node_modules', name, 'package.json'), JSON.stringify({ name, version }));
}
`,
  );
  await chmod(path.join(scratch, 'bin/npm'), 0o755);
  env = {
    PATH: `${path.join(scratch, 'bin')}${path.delimiter}${process.env.PATH}`,
    HOME: process.env.HOME,
    CONSORT_TOOLS_DIR: path.join(scratch, 'tools'),
  };
});
afterEach(async () => rm(scratch, { recursive: true, force: true }));

/** node-pg-migrate 7 as a project has it: no TypeScript loader of its own. */
const engine7 = (): MigrationEngine =>
  ({
    version: '7.9.1',
    source: 'project',
    dir: path.join(process.cwd(), 'node_modules/node-pg-migrate-7'),
  }) as MigrationEngine;

async function project(locked: Record<string, string>): Promise<string> {
  const dir = path.join(scratch, 'project');
  await mkdir(path.join(dir, 'migrations'), { recursive: true });
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'p', private: true }));
  await writeFile(
    path.join(dir, 'package-lock.json'),
    JSON.stringify({
      lockfileVersion: 3,
      packages: {
        '': { name: 'p' },
        ...Object.fromEntries(Object.entries(locked).map(([n, version]) => [`node_modules/${n}`, { version }])),
      },
    }),
  );
  return dir;
}

const npmCalls = async () =>
  (await readFile(npmLog, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as string[]);

it('installs the TypeScript the lockfile pins beside ts-node, once', async () => {
  const dir = await project({ 'ts-node': '10.9.1', typescript: '4.7.4' });
  const log: string[] = [];
  const handle = await prepareTypeScript(engine7(), dir, ['migrations/1_a.ts'], { env, log: (l) => log.push(l) });
  expect(handle.loader).toEqual({ name: 'ts-node', version: '10.9.1', source: 'lockfile' });
  const cache = packageCacheDir('ts-node', '10.9.1+typescript@4.7.4', env);
  expect(handle.engine.tsLoader).toEqual({ name: 'ts-node', workspace: dir, from: cache });
  expect((await npmCalls()).map((c) => c.slice(-3))).toEqual([[cache, 'ts-node@10.9.1', 'typescript@4.7.4']]);
  expect(log).toEqual([expect.stringContaining('Installing ts-node@10.9.1 (with typescript@4.7.4), the version')]);
  await prepareTypeScript(engine7(), dir, ['migrations/1_a.ts'], { env });
  expect(await npmCalls()).toHaveLength(1);
});

it('installs TypeScript 5 beside ts-node when the lockfile pins no TypeScript (not the latest, 7)', async () => {
  const dir = await project({ 'ts-node': '10.9.1' });
  const handle = await prepareTypeScript(engine7(), dir, ['migrations/1_a.ts'], { env });
  expect(handle.loader).toEqual({ name: 'ts-node', version: '10.9.1', source: 'lockfile' });
  expect((await npmCalls()).map((c) => c.slice(-2))).toEqual([['ts-node@10.9.1', 'typescript@5']]);
});

it('installs tsx alone: it brings its own compiler', async () => {
  const dir = await project({ tsx: '4.19.0', typescript: '4.7.4' });
  const handle = await prepareTypeScript(engine7(), dir, ['migrations/1_a.ts'], { env });
  expect(handle.loader).toEqual({ name: 'tsx', version: '4.19.0', source: 'lockfile' });
  expect((await npmCalls()).map((c) => c.at(-1))).toEqual(['tsx@4.19.0']);
});

it('installs the tsconfig-paths the lockfile pins when the deploy script registers it and it is not installed', async () => {
  const dir = await project({ tsx: '4.19.0', 'tsconfig-paths': '4.2.0' });
  await writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({
      name: 'p',
      private: true,
      scripts: { migrate: 'node -r tsconfig-paths/register node_modules/.bin/node-pg-migrate up --tsx' },
    }),
  );
  const handle = await prepareTypeScript(engine7(), dir, ['migrations/1_a.ts'], { migrationsDir: 'migrations', env });
  expect(handle.paths).toEqual({
    name: 'tsconfig-paths',
    version: '4.2.0',
    source: 'lockfile',
    how: `-r tsconfig-paths/register in package.json's script "migrate"`,
  });
  expect(handle.engine.tsconfigPaths).toEqual({
    via: 'register',
    workspace: dir,
    from: packageCacheDir('tsconfig-paths', '4.2.0', env),
  });
  expect(handle.engine.tsLoader).toMatchObject({ name: 'tsx' });
  expect((await npmCalls()).map((c) => c.at(-1)).sort()).toEqual(['tsconfig-paths@4.2.0', 'tsx@4.19.0']);
});
