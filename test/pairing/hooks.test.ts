/**
 * The pairing git hooks in real temporary repositories, with real git and the PostgreSQL server at
 * 127.0.0.1:5432: installed beside existing hooks (plain, core.hooksPath, husky), `git checkout -b`
 * pairs in the background, switching back updates .env from the cache at once, a failing pairing
 * never fails the checkout and is logged, and uninstall restores what was there byte for byte.
 * The hooks run the built lib/src/pairing/hook-main.js (npm run build first, as npm test does).
 */
import { access, chmod, lstat, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../../src/cli/main.js';
import { setEnvLine } from '../../src/pairing/env-file.js';
import { hooksStatus, installHooks, uninstallHooks, type HookRunner } from '../../src/pairing/hooks.js';
import { recordPairing } from '../../src/pairing/state.js';
import { EmbeddedServer } from '../../src/branches/local/server.js';
import { ownDataDir, postgresTestProvider, query, type TestProvider } from '../helpers/servers.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
const runner: HookRunner = { node: process.execPath, entry: path.resolve('lib/src/pairing/hook-main.js') };

let t: TestProvider;
let hookEnv: NodeJS.ProcessEnv;
beforeAll(async () => {
  await access(runner.entry).catch(() => {
    throw new Error(`${runner.entry} is missing: run npm run build first`);
  });
  t = await postgresTestProvider();
  await t.provider.list(); // creates the namespace's main branch before hooks race for it
  hookEnv = {
    PATH: process.env.PATH ?? '',
    HOME: os.tmpdir(),
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@example.com',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@example.com',
    CONSORT_PROVIDER: 'postgres',
    CONSORT_POSTGRES_URL: t.adminUrl,
    CONSORT_NAMESPACE: t.namespace,
  };
});
afterAll(async () => {
  await t?.cleanup();
});

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
});

async function git(root: string, ...args: string[]): Promise<string> {
  return (await exec('git', args, { cwd: root, env: hookEnv })).stdout.trim();
}

async function repo(): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'consort-hooks-'));
  roots.push(root);
  await git(root, 'init', '-q', '-b', 'main');
  await mkdir(path.join(root, 'migrations'));
  await writeFile(
    path.join(root, 'migrations', '001_items.sql'),
    '-- Up Migration\nCREATE TABLE items (id int);\n-- Down Migration\nDROP TABLE items;\n',
  );
  await writeFile(path.join(root, '.gitignore'), '.env\n');
  await git(root, 'add', '.');
  await git(root, 'commit', '-qm', 'init');
  return root;
}

interface LastRun {
  gitBranch: string;
  hook: string;
  ok: boolean;
  message: string;
  at: string;
}

/** Wait for the hook's background job to record a run for `gitBranch` newer than `after`. */
async function lastRun(root: string, gitBranch: string, after: string, hook = 'post-checkout'): Promise<LastRun> {
  const file = path.join(root, '.git', 'consort', 'last-run.json');
  for (let i = 0; i < 300; i += 1) {
    const run = await readFile(file, 'utf8').then(
      (s) => JSON.parse(s) as LastRun,
      () => undefined,
    );
    if (run && run.gitBranch === gitBranch && run.hook === hook && run.at > after) return run;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(
    `no background run for ${gitBranch} (log: ${await readFile(path.join(root, '.git', 'consort', 'hooks.log'), 'utf8').catch(() => 'none')})`,
  );
}

const envValue = async (root: string) =>
  /^DATABASE_URL=(.*)$/m.exec(await readFile(path.join(root, '.env'), 'utf8').catch(() => ''))?.[1];

describe('plain .git/hooks with an existing post-checkout hook', () => {
  it('chains the old hook, pairs on checkout -b, updates .env from the cache on switching back, and uninstalls byte for byte', async () => {
    const root = await repo();
    const original = '#!/bin/sh\n# the team\'s own hook\necho "$3" >> .git/own-hook-ran\n';
    const hookFile = path.join(root, '.git', 'hooks', 'post-checkout');
    await writeFile(hookFile, original, { mode: 0o750 });
    await chmod(hookFile, 0o750);

    const first = await installHooks(root, runner);
    expect(first.place).toMatchObject({ manager: 'git', mode: 'chain' });
    expect(first.hooks.map((h) => h.outcome)).toEqual(['installed', 'installed']);
    expect((await installHooks(root, runner)).hooks.map((h) => h.outcome)).toEqual(['unchanged', 'unchanged']);

    let since = new Date().toISOString();
    await git(root, 'checkout', '-q', '-b', 'feature/search');
    const run = await lastRun(root, 'feature/search', since);
    expect(run).toMatchObject({
      ok: true,
      message: expect.stringMatching(/feature\/search → feature-search \(created from main/),
    });
    const paired = await t.provider.get('feature-search');
    expect(paired).toMatchObject({ parent: 'main', gitBranch: 'feature/search' });
    const featureUrl = await t.provider.connectionUri('feature-search');
    expect(await envValue(root)).toBe(featureUrl);
    expect(await query(featureUrl, "SELECT to_regclass('items') IS NOT NULL AS migrated")).toEqual([
      { migrated: true },
    ]);
    expect(await readFile(path.join(root, '.git', 'own-hook-ran'), 'utf8')).toBe('1\n');

    since = new Date().toISOString();
    await git(root, 'checkout', '-q', 'main');
    await lastRun(root, 'main', since);
    const mainUrl = await t.provider.connectionUri('main');
    expect(await envValue(root)).toBe(mainUrl);
    // Paired before: .env is right as soon as git returns, before any background work.
    await git(root, 'checkout', '-q', 'feature/search');
    expect(await envValue(root)).toBe(featureUrl);
    const reused = await lastRun(root, 'feature/search', since);
    expect(reused.message).toMatch(/\(reused/);

    const status = await hooksStatus(root);
    expect(status.hooks.map((h) => [h.installed, h.runnerPresent])).toEqual([
      [true, true],
      [true, true],
    ]);
    expect(status.hooks[0]!.chained).toBe(`${hookFile}.pre-consort`);
    expect(status.log.join('\n')).toMatch(
      /post-checkout: feature\/search: \.env updated from the cache \(feature-search\)/,
    );

    const removed = await uninstallHooks(root);
    expect(removed.hooks.map((h) => h.outcome)).toEqual(['restored', 'removed']);
    expect(await readFile(hookFile, 'utf8')).toBe(original);
    expect((await stat(hookFile)).mode & 0o777).toBe(0o750);
    await expect(access(path.join(root, '.git', 'hooks', 'post-merge'))).rejects.toThrow();
    await expect(access(`${hookFile}.pre-consort`)).rejects.toThrow();
  });

  it('applies migrations a pull brings, through post-merge', async () => {
    const root = await repo();
    await installHooks(root, runner);
    let since = new Date().toISOString();
    await git(root, 'checkout', '-q', '-b', 'feature/pull');
    await lastRun(root, 'feature/pull', since);
    await git(root, 'checkout', '-q', '-b', 'upstream');
    await writeFile(
      path.join(root, 'migrations', '002_tags.sql'),
      '-- Up Migration\nCREATE TABLE tags (id int);\n-- Down Migration\nDROP TABLE tags;\n',
    );
    await git(root, 'add', '.');
    await git(root, 'commit', '-qm', 'tags');
    since = new Date().toISOString();
    await git(root, 'checkout', '-q', 'feature/pull');
    await lastRun(root, 'feature/pull', since);
    since = new Date().toISOString();
    await git(root, 'merge', '-q', '--ff-only', 'upstream');
    const merged = await lastRun(root, 'feature/pull', since, 'post-merge');
    expect(merged.ok).toBe(true);
    // Applied by this post-merge job, or already by a checkout job still queued when the merge landed
    // (jobs run one at a time and pair the HEAD of the moment): either way the pull's migration is in.
    expect(merged.message).toMatch(/^feature\/pull → feature-pull \(reused/);
    const url = await t.provider.connectionUri('feature-pull');
    expect(await query(url, "SELECT to_regclass('tags') IS NOT NULL AS migrated")).toEqual([{ migrated: true }]);
  });

  it('a migration that fails in the background job is a failed run, in hooks status and pair status', async () => {
    // Before, the job recorded `ok: true` with "migration … failed" in its message, so `hooks
    // status` read "ok: … failed" and `pair status` said nothing of it at all.
    const root = await repo();
    await git(root, 'checkout', '-q', '-b', 'broken');
    await writeFile(
      path.join(root, 'migrations', '002_broken.sql'),
      '-- Up Migration\nALTER TABLE nowhere ADD COLUMN x int;\n-- Down Migration\nSELECT 1;\n',
    );
    await git(root, 'add', '.');
    await git(root, 'commit', '-qm', 'broken');
    await git(root, 'checkout', '-q', 'main');
    await installHooks(root, runner);
    const since = new Date().toISOString();
    await git(root, 'checkout', '-q', 'broken');
    const run = await lastRun(root, 'broken', since);
    expect(run).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^broken → broken \(created from main[^]*migration 002_broken failed/),
    });
    // The pairing stands, with the migration that applied, as `consort pair`'s does.
    expect(await envValue(root)).toBe(await t.provider.connectionUri('broken'));
    const cli = async (...args: string[]) => {
      let out = '';
      const code = await runCli(
        ['-C', root, ...args],
        {
          out: (s) => {
            out += s;
          },
          err: () => undefined,
        },
        hookEnv,
      );
      return { code, out };
    };
    expect((await cli('hooks', 'status')).out).toMatch(/last run: \S+ FAILED: broken → broken/);
    const status = await cli('pair', 'status');
    expect(status.code).toBe(0);
    expect(status.out).toMatch(/\nlast hook run: +\S+ FAILED: broken → broken [^\n]*002_broken failed/);
  });
});

/** A repository set up as `husky` (v9) does: core.hooksPath=.husky/_, whose scripts run .husky/<hook> through `h`. */
async function huskyRepo(): Promise<string> {
  const root = await repo();
  await mkdir(path.join(root, '.husky', '_'), { recursive: true });
  await writeFile(
    path.join(root, '.husky', '_', 'h'),
    '#!/usr/bin/env sh\nn=$(basename "$0")\ns=$(dirname "$(dirname "$0")")/$n\n[ ! -f "$s" ] && exit 0\nsh -e "$s" "$@"\n',
    { mode: 0o755 },
  );
  for (const hook of ['post-checkout', 'post-merge'])
    await writeFile(path.join(root, '.husky', '_', hook), '#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n', {
      mode: 0o755,
    });
  await git(root, 'config', 'core.hooksPath', '.husky/_');
  return root;
}

describe('hook managers', () => {
  it('husky: appends to .husky/<hook>, pairs through husky, and restores the user hook byte for byte', async () => {
    const root = await huskyRepo();
    const userHook = 'echo husky-user-hook >> .git/husky-ran'; // no final newline, as editors sometimes leave it
    await writeFile(path.join(root, '.husky', 'post-checkout'), userHook);

    const installed = await installHooks(root, runner);
    expect(installed.place).toMatchObject({ manager: 'husky', mode: 'append', dir: path.join(root, '.husky') });
    expect((await installHooks(root, runner)).hooks.map((h) => h.outcome)).toEqual(['unchanged', 'unchanged']);
    // The .husky/ files are tracked: what is appended names nothing of this machine (its Node, this
    // Consort, this clone); that is in the clone's own .git/consort/hooks/<hook>.
    for (const hook of ['post-checkout', 'post-merge']) {
      const tracked = await readFile(path.join(root, '.husky', hook), 'utf8');
      for (const local of [runner.node, runner.entry, root]) expect(tracked).not.toContain(local);
      expect(await readFile(path.join(root, '.git', 'consort', 'hooks', hook), 'utf8')).toContain(runner.entry);
    }
    const since = new Date().toISOString();
    await git(root, 'checkout', '-q', '-b', 'husky-branch');
    expect((await lastRun(root, 'husky-branch', since)).ok).toBe(true);
    expect(await readFile(path.join(root, '.git', 'husky-ran'), 'utf8')).toBe('husky-user-hook\n');
    expect(await envValue(root)).toBe(await t.provider.connectionUri('husky-branch'));

    expect((await uninstallHooks(root)).hooks.map((h) => h.outcome)).toEqual(['restored', 'removed']);
    expect(await readFile(path.join(root, '.husky', 'post-checkout'), 'utf8')).toBe(userHook);
    await expect(access(path.join(root, '.husky', 'post-merge'))).rejects.toThrow();
    await expect(access(path.join(root, '.git', 'consort', 'hooks', 'post-checkout'))).rejects.toThrow();
  });

  it('husky: a block committed by a teammate does nothing on a clone without the hooks, and pairs once installed there', async () => {
    const root = await huskyRepo();
    await installHooks(root, runner);
    await git(root, 'add', '.husky/post-checkout', '.husky/post-merge');
    await git(root, 'commit', '-qm', 'the pairing block, committed');
    // The teammate's clone: the block is there, this clone's script is not (no install yet).
    await rm(path.join(root, '.git', 'consort', 'hooks'), { recursive: true, force: true });
    await git(root, 'checkout', '-q', '-b', 'before-install'); // under husky's `sh -e`: the block must not fail it
    expect(await git(root, 'branch', '--show-current')).toBe('before-install');
    expect((await installHooks(root, runner)).hooks.map((h) => h.outcome)).toEqual(['installed', 'installed']);
    expect(await git(root, 'status', '--porcelain', '--untracked-files=no', '.husky')).toBe(''); // nothing tracked changed
    const since = new Date().toISOString();
    await git(root, 'checkout', '-q', '-b', 'after-install');
    expect((await lastRun(root, 'after-install', since)).ok).toBe(true);
  });

  it('core.hooksPath directory: chains there; a failing pairing never fails the checkout and is logged', async () => {
    const root = await repo();
    await git(root, 'config', 'core.hooksPath', '.githooks');
    const installed = await installHooks(root, runner);
    expect(installed.place).toMatchObject({
      manager: 'core.hooksPath',
      mode: 'chain',
      dir: path.join(root, '.githooks'),
    });
    const saved = hookEnv.CONSORT_POSTGRES_URL;
    hookEnv.CONSORT_POSTGRES_URL = 'postgresql://postgres@127.0.0.1:1/postgres';
    try {
      const since = new Date().toISOString();
      await git(root, 'checkout', '-q', '-b', 'offline'); // resolves: the checkout itself succeeded
      expect(await git(root, 'branch', '--show-current')).toBe('offline');
      const run = await lastRun(root, 'offline', since);
      expect(run.ok).toBe(false);
      let out = '';
      const code = await runCli(
        ['-C', root, 'hooks', 'status'],
        {
          out: (s) => {
            out += s;
          },
          err: () => undefined,
        },
        hookEnv,
      );
      expect(code).toBe(0);
      expect(out).toMatch(/last run: .* FAILED: /);
      expect(out).toMatch(/post-checkout: error: /);
    } finally {
      hookEnv.CONSORT_POSTGRES_URL = saved;
    }
    expect((await uninstallHooks(root)).hooks.map((h) => h.outcome)).toEqual(['removed', 'removed']);
  });
});

describe("the hook's sh fast path", () => {
  // No Node part at all (the runner is absent): only the shell edits .env, from the recorded line.
  const shellOnly: HookRunner = { node: process.execPath, entry: '/nonexistent/hook-main.js' };
  const url = 'postgresql://app:p#ss@127.0.0.1:5432/shop_feature-x';

  it.each([
    ['no .env yet', undefined],
    ['an empty .env', ''],
    ['other lines only', '# local settings\nSECRET=keep\n'],
    ['the key among other lines', 'A=1\nDATABASE_URL=postgresql://old\n  B = "two words"\n'],
    ['an exported key', 'export DATABASE_URL=old\nDATABASE_URL=second\n'],
    ['a similar key', 'DATABASE_URL_RO=ro\n'],
  ])('writes what env-file.ts writes, for %s', async (_label, before) => {
    const root = await repo();
    await installHooks(root, shellOnly);
    await git(root, 'branch', 'feature/x');
    await recordPairing(
      path.join(root, '.git'),
      { envFile: '.env', envKey: 'DATABASE_URL', writeEnv: true },
      'feature/x',
      { name: 'feature-x', url },
    );
    if (before !== undefined) await writeFile(path.join(root, '.env'), before, { mode: 0o640 });
    await git(root, 'checkout', '-q', 'feature/x');
    expect(await readFile(path.join(root, '.env'), 'utf8')).toBe(setEnvLine(before ?? '', 'DATABASE_URL', url));
    expect((await stat(path.join(root, '.env'))).mode & 0o777).toBe(before === undefined ? 0o600 : 0o640);
    expect(
      (await import('node:fs/promises').then((fs) => fs.readdir(root))).filter((f) => f.includes('consort-')),
    ).toEqual([]);
  });

  it('leaves files it cannot edit byte-exactly (CRLF, no final newline) to the Node job', async () => {
    const root = await repo();
    await installHooks(root, shellOnly);
    await git(root, 'branch', 'feature/x');
    await recordPairing(
      path.join(root, '.git'),
      { envFile: '.env', envKey: 'DATABASE_URL', writeEnv: true },
      'feature/x',
      { name: 'feature-x', url },
    );
    for (const before of ['A=1\r\nDATABASE_URL=old\r\n', 'DATABASE_URL=old']) {
      await writeFile(path.join(root, '.env'), before);
      await git(root, 'checkout', '-q', 'feature/x');
      expect(await readFile(path.join(root, '.env'), 'utf8')).toBe(before);
      await git(root, 'checkout', '-q', 'main');
    }
  });
});

describe("the hook's sh fast path with a configured file", () => {
  it('edits a dotenv file in a subdirectory, through a symlink, keeping the link', async () => {
    const root = await repo();
    await installHooks(root, { node: process.execPath, entry: '/nonexistent/hook-main.js' });
    await git(root, 'branch', 'feature/y');
    await mkdir(path.join(root, 'config'));
    await writeFile(path.join(root, 'config', 'real.env'), 'KEEP=1\nAPP_DB=old\n');
    await symlink('real.env', path.join(root, 'config', '.env.local'));
    const url = 'postgresql://postgres@127.0.0.1:5432/shop_feature-y';
    await recordPairing(
      path.join(root, '.git'),
      { envFile: 'config/.env.local', envKey: 'APP_DB', writeEnv: true },
      'feature/y',
      { name: 'feature-y', url },
    );
    await git(root, 'checkout', '-q', 'feature/y');
    expect(await readFile(path.join(root, 'config', 'real.env'), 'utf8')).toBe(`KEEP=1\nAPP_DB=${url}\n`);
    expect((await lstat(path.join(root, 'config', '.env.local'))).isSymbolicLink()).toBe(true);
  });
});

it('a background job that starts the embedded server says so in the log and in `hooks status`', async () => {
  // Before, a checkout in a shell without the project's CONSORT_DATA_DIR (or CONSORT_PROVIDER) had
  // the job initialise or start an embedded server, and point .env at it, without a word anywhere.
  const dataDir = await ownDataDir(); // initialised, stopped
  const { CONSORT_POSTGRES_URL: _url, CONSORT_NAMESPACE: _namespace, ...rest } = hookEnv;
  const env: NodeJS.ProcessEnv = { ...rest, CONSORT_PROVIDER: 'local', CONSORT_DATA_DIR: dataDir };
  const root = await repo();
  try {
    await installHooks(root, runner);
    const since = new Date().toISOString();
    await exec('git', ['checkout', '-q', '-b', 'feature/local'], { cwd: root, env });
    expect(await lastRun(root, 'feature/local', since)).toMatchObject({ ok: true });
    const log = await readFile(path.join(root, '.git', 'consort', 'hooks.log'), 'utf8');
    expect(log).toMatch(
      new RegExp(`post-checkout: Starting embedded PostgreSQL on 127\\.0\\.0\\.1:\\d+ \\(data: ${dataDir}/pgdata\\)`),
    );
    expect((await hooksStatus(root)).log.join('\n')).toContain('Starting embedded PostgreSQL');
  } finally {
    await new EmbeddedServer(dataDir).stop();
    await rm(dataDir, { recursive: true, force: true });
  }
});
