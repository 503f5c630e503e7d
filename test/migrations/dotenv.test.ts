/**
 * projectDotenv (src/migrations/dotenv.ts): the `.env` node-pg-migrate's CLI loads for a project
 * that has dotenv, read as data from the tree being applied, without connection variables or
 * Consort's own; parseDotenv reads the file as dotenv does.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { dotenvHash, dotenvSource, parseDotenv, projectDotenv } from '../../src/migrations/dotenv.js';

it('reads a .env as dotenv does: export, quotes, comments, a value over several lines, the last one wins', () => {
  const text = [
    '# a comment',
    'PLAIN=one two  # said after',
    'export EXPORTED=yes',
    "SINGLE='a # kept'",
    'DOUBLE="line\\nbreak"',
    'MULTI="first',
    'second"',
    'COLON: value',
    'EMPTY=',
    'not a line',
    'PLAIN=again',
    '',
  ].join('\r\n');
  expect(Object.fromEntries(parseDotenv(text))).toEqual({
    PLAIN: 'again',
    EXPORTED: 'yes',
    SINGLE: 'a # kept',
    DOUBLE: 'line\nbreak',
    MULTI: 'first\nsecond',
    COLON: 'value',
    EMPTY: '',
  });
});

describe('the .env of the package that owns the migrations', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'consort-dotenv-'));
    await mkdir(path.join(root, 'packages/db/migrations'), { recursive: true });
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  const manifest = (dir: string, deps: Record<string, string>) =>
    writeFile(path.join(root, dir, 'package.json'), JSON.stringify({ name: 'p', devDependencies: deps }));
  const ENV = 'APP_ROLE=reader\nDATABASE_URL=postgres://dev@localhost/dev\nPGHOST=db\nCONSORT_TOKEN=x\nAPI_TOKEN=t\n';

  it('gives what it sets but connection variables and Consort’s own, only where the project has dotenv', async () => {
    await manifest('packages/db', { 'node-pg-migrate': '^9' });
    await writeFile(path.join(root, 'packages/db/.env'), ENV);
    // No dotenv: node-pg-migrate's CLI loads no .env.
    expect((await projectDotenv(root, 'packages/db/migrations')).vars).toEqual({});
    await manifest('packages/db', { 'node-pg-migrate': '^9', dotenv: '^16' });
    expect((await projectDotenv(root, 'packages/db/migrations')).vars).toEqual({ APP_ROLE: 'reader', API_TOKEN: 't' });
    // The root's dotenv counts too (a monorepo's hoisted install); the root's .env does not (the CLI runs in the package).
    await manifest('packages/db', { 'node-pg-migrate': '^9' });
    await manifest('.', { dotenv: '^16' });
    expect((await projectDotenv(root, path.join(root, 'packages/db/migrations'))).vars).toEqual({
      APP_ROLE: 'reader',
      API_TOKEN: 't',
    });
  });

  it('reads the file the scripts that apply the folder name with --envPath, unless they name different ones', async () => {
    const scripts = (s: Record<string, string>) =>
      writeFile(
        path.join(root, 'packages/db/package.json'),
        JSON.stringify({ name: 'db', devDependencies: { dotenv: '^16' }, scripts: s }),
      );
    await writeFile(path.join(root, 'package.json'), JSON.stringify({ private: true, workspaces: ['packages/*'] }));
    await writeFile(path.join(root, 'packages/db/.env'), 'APP_ROLE=default\n');
    await mkdir(path.join(root, 'packages/db/config'));
    await writeFile(path.join(root, 'packages/db/config/migrate.env'), 'APP_ROLE=named\n');
    await scripts({
      migrate: 'node-pg-migrate up --envPath config/migrate.env',
      'migrate:new': 'node-pg-migrate create',
    });
    expect((await projectDotenv(root, 'packages/db/migrations')).vars).toEqual({ APP_ROLE: 'named' });
    await scripts({ migrate: 'node-pg-migrate up --env-path=config/migrate.env' });
    expect((await projectDotenv(root, 'packages/db/migrations')).vars).toEqual({ APP_ROLE: 'named' });
    await scripts({
      migrate: 'node-pg-migrate up --envPath config/migrate.env',
      'migrate:local': 'node-pg-migrate up',
    });
    expect((await projectDotenv(root, 'packages/db/migrations')).vars).toEqual({});
    await scripts({ migrate: 'node-pg-migrate up' });
    expect((await projectDotenv(root, 'packages/db/migrations')).vars).toEqual({ APP_ROLE: 'default' });
  });

  it("expands where dotenv-expand 6 or later is installed or declared, by its version's rules", async () => {
    await writeFile(path.join(root, 'packages/db/.env'), 'APP_ROLE=${ROLE:-reader}\n');
    const expandsWith = async (deps: Record<string, string>) => {
      await manifest('packages/db', { dotenv: '^16', ...deps });
      return (await projectDotenv(root, 'packages/db/migrations')).expand;
    };
    expect(await expandsWith({})).toBeUndefined();
    // 5 exported a bare function: the CLI finds no `expand` and expands nothing.
    expect(await expandsWith({ 'dotenv-expand': '^5.1.0' })).toBeUndefined();
    expect(await expandsWith({ 'dotenv-expand': '^6.0.0' })).toBe('12');
    expect(await expandsWith({ 'dotenv-expand': '12.0.3' })).toBe('12');
    expect(await expandsWith({ 'dotenv-expand': '^1000.0.0' })).toBe('1000');
    expect(await expandsWith({ 'dotenv-expand': 'latest' })).toBe('1000');
    // The installed copy's version wins over the range declared.
    const installed = path.join(root, 'node_modules/dotenv-expand');
    await mkdir(installed, { recursive: true });
    await writeFile(path.join(installed, 'package.json'), JSON.stringify({ name: 'dotenv-expand', version: '5.1.0' }));
    expect(await expandsWith({ 'dotenv-expand': '^12' })).toBeUndefined();
    await writeFile(path.join(installed, 'package.json'), JSON.stringify({ name: 'dotenv-expand', version: '11.0.7' }));
    expect(await expandsWith({})).toBe('12');
    // The values stay as written: the migrations' child expands them against its own environment.
    expect((await projectDotenv(root, 'packages/db/migrations')).vars).toEqual({ APP_ROLE: '${ROLE:-reader}' });
  });

  it('reads the --envPath of a nested package that is not a workspace, relative to that package', async () => {
    // The root declares no workspaces: packages/db is a folder with a package.json of its own.
    await writeFile(path.join(root, 'package.json'), JSON.stringify({ private: true }));
    await writeFile(
      path.join(root, 'packages/db/package.json'),
      JSON.stringify({
        name: 'db',
        devDependencies: { dotenv: '^16' },
        scripts: { migrate: 'node-pg-migrate up --envPath config/migrate.env' },
      }),
    );
    await writeFile(path.join(root, 'packages/db/.env'), 'APP_ROLE=default\n');
    await mkdir(path.join(root, 'packages/db/config'));
    await writeFile(path.join(root, 'packages/db/config/migrate.env'), 'APP_ROLE=named\n');
    expect((await projectDotenv(root, 'packages/db/migrations')).vars).toEqual({ APP_ROLE: 'named' });
    expect(await dotenvSource(root, 'packages/db/migrations')).toEqual({ file: 'packages/db/config/migrate.env' });
  });

  it('resolves the file from the directory the script runs in, as dotenv does: a cd before node-pg-migrate', async () => {
    // The root's script enters the folder: dotenv reads .env (or --envPath) from there, not from the root.
    await writeFile(
      path.join(root, 'package.json'),
      JSON.stringify({
        private: true,
        devDependencies: { dotenv: '^16' },
        scripts: { migrate: 'cd db && node-pg-migrate up' },
      }),
    );
    await mkdir(path.join(root, 'db/migrations'), { recursive: true });
    await writeFile(path.join(root, '.env'), 'APP_ROLE=root\n');
    await writeFile(path.join(root, 'db/.env'), 'APP_ROLE=db\n');
    expect((await projectDotenv(root, 'db/migrations')).vars).toEqual({ APP_ROLE: 'db' });
    await writeFile(
      path.join(root, 'package.json'),
      JSON.stringify({
        private: true,
        devDependencies: { dotenv: '^16' },
        scripts: { migrate: 'cd db && node-pg-migrate up --envPath ../.env' },
      }),
    );
    expect((await projectDotenv(root, 'db/migrations')).vars).toEqual({ APP_ROLE: 'root' });
  });

  it('hashes what the file gives the migrations for a name, and nothing of a connection variable', async () => {
    await manifest('packages/db', { 'node-pg-migrate': '^9' });
    await writeFile(path.join(root, 'packages/db/.env'), ENV);
    // No dotenv: nothing is loaded, nothing to name.
    expect(await dotenvHash(root, 'packages/db/migrations')).toBeUndefined();
    await manifest('packages/db', { 'node-pg-migrate': '^9', dotenv: '^16' });
    const first = await dotenvHash(root, 'packages/db/migrations');
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    // The developer's database changed: the migrations are given the same.
    await writeFile(path.join(root, 'packages/db/.env'), ENV.replace('dev@localhost/dev', 'me@localhost/mine'));
    expect(await dotenvHash(root, 'packages/db/migrations')).toBe(first);
    await writeFile(path.join(root, 'packages/db/.env'), ENV.replace('APP_ROLE=reader', 'APP_ROLE=writer'));
    expect(await dotenvHash(root, 'packages/db/migrations')).not.toBe(first);
    // Read from another tree (base's commit) through `read`, located by the packages at the root.
    const read = async (file: string) => (file === 'packages/db/.env' ? ENV : undefined);
    expect(await dotenvHash(root, 'packages/db/migrations', read)).toBe(first);
    expect(await dotenvHash(root, 'packages/db/migrations', async () => undefined)).toBeUndefined();
  });

  it('reads no .env that is a link out of the tree, or that is missing', async () => {
    await manifest('packages/db', { dotenv: '^16' });
    expect((await projectDotenv(root, 'packages/db/migrations')).vars).toEqual({});
    const outside = await mkdtemp(path.join(os.tmpdir(), 'consort-dotenv-out-'));
    try {
      await writeFile(path.join(outside, 'secrets'), 'APP_ROLE=leaked\n');
      await symlink(path.join(outside, 'secrets'), path.join(root, 'packages/db/.env'));
      expect((await projectDotenv(root, 'packages/db/migrations')).vars).toEqual({});
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});
