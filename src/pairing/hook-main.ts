/**
 * What the git hooks run. In the hook (foreground) it does only what takes milliseconds: if the new
 * git branch was paired before, its cached URL goes into the dotenv file at once; then a detached
 * background job (this file again, `--background`) checks the pairing, creates the branch or
 * applies pending migrations, and logs to `.git/consort/hooks.log`. The checkout never waits for
 * the database. Kept free of heavy imports so Node starts it fast; the background loads the rest.
 */
import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pairingChildEnv } from './child-env.js';
import { writeEnvValue } from './env-file.js';
import { git } from './git.js';
import { appendLog, logFile, readCache, stateDir } from './state.js';

interface Repo {
  root: string;
  gitDir: string;
  branch: string | undefined;
}

async function repo(): Promise<Repo | undefined> {
  const r = await git(process.cwd(), ['rev-parse', '--show-toplevel', '--git-common-dir', '--abbrev-ref', 'HEAD']);
  if (r.code !== 0) return undefined;
  const [root, gitDir, head] = r.stdout.split('\n') as [string, string, string];
  return { root, gitDir: path.resolve(process.cwd(), gitDir), branch: head === 'HEAD' ? undefined : head };
}

/**
 * The git branch checked out before, when `git checkout -b`/`switch -c` just created this one from
 * it: the commit did not change and the branch's reflog holds only its creation. (A branch made
 * earlier with `git branch` and first checked out now looks the same; it forks from the branch
 * checked out before, which is where the person is coming from.)
 */
async function createdFrom(
  root: string,
  branch: string,
  prev: string | undefined,
  next: string | undefined,
): Promise<string | undefined> {
  if (prev === undefined || prev !== next) return undefined;
  const reflog = await git(root, ['reflog', 'show', '-n', '2', '--format=%gs', `refs/heads/${branch}`]);
  const entries = reflog.stdout.split('\n').filter(Boolean);
  if (reflog.code !== 0 || entries.length !== 1 || !entries[0]!.startsWith('branch: Created from')) return undefined;
  const r = await git(root, ['rev-parse', '--abbrev-ref', '@{-1}']);
  return r.code === 0 && r.stdout !== '' && r.stdout !== 'HEAD' ? r.stdout : undefined;
}

async function foreground(hook: string, args: string[]): Promise<void> {
  if (hook === 'post-checkout' && args[2] !== '1') return; // a file checkout, not a branch switch
  const where = await repo();
  if (where?.branch === undefined) return; // detached HEAD: nothing to pair
  const cache = await readCache(where.gitDir);
  const cached = cache?.branches[where.branch];
  if (hook === 'post-checkout' && cache?.writeEnv && cached) {
    await writeEnvValue(path.join(where.root, cache.envFile), cache.envKey, cached.url);
  }
  // Only a git branch without a pairing yet needs to know where it came from.
  const from =
    hook === 'post-checkout' && !cached ? await createdFrom(where.root, where.branch, args[0], args[1]) : undefined;
  await appendLog(
    where.gitDir,
    `${new Date().toISOString()} ${hook}: ${where.branch}${from ? ` (created from ${from})` : ''}${cached ? `: ${cache?.envFile} updated from the cache (${cached.name})` : ''}`,
  );
  const log = openSync(logFile(where.gitDir), 'a');
  // Not the ProcessRunner: the background half outlives the hook on purpose (git must not wait for it).
  const child = spawn(
    process.execPath,
    [fileURLToPath(import.meta.url), '--background', hook, where.branch, from ?? ''],
    {
      cwd: where.root,
      detached: true,
      stdio: ['ignore', log, log],
      env: pairingChildEnv(process.env),
    },
  );
  child.unref();
}

async function background(hook: string, gitBranch: string, from: string): Promise<void> {
  const where = await repo();
  if (where === undefined) return;
  const started = Date.now();
  // Renamed into place: `consort hooks status` (or an editor) may read it at any moment.
  const record = async (ok: boolean, message: string) => {
    const file = path.join(stateDir(where.gitDir), 'last-run.json');
    await writeFile(
      `${file}.${process.pid}.tmp`,
      JSON.stringify(
        { hook, gitBranch, ok, message, at: new Date().toISOString(), durationMs: Date.now() - started },
        null,
        2,
      ),
    );
    await rename(`${file}.${process.pid}.tmp`, file);
  };
  let release: (() => Promise<void>) | undefined;
  // What opening the provider said: a background job that initialised or started the embedded
  // server (a shell without the project's CONSORT_DATA_DIR, say) says so in the log, as a command does.
  const said: string[] = [];
  const flush = async () => {
    for (const line of said.splice(0)) await appendLog(where.gitDir, `${new Date().toISOString()} ${hook}: ${line}`);
  };
  try {
    // One background job at a time per repository (quick switches would otherwise race on the same
    // branch's migration lock); a job whose git branch is no longer checked out when its turn comes
    // has nothing left to do — the job of the newer switch pairs what is checked out.
    const lockfile = (await import('proper-lockfile')).default;
    release = await lockfile.lock(stateDir(where.gitDir), {
      lockfilePath: path.join(stateDir(where.gitDir), 'pairing.lock'),
      stale: 120_000,
      retries: { retries: 600, minTimeout: 100, maxTimeout: 500 },
    });
    if (hook === 'post-checkout' && (await repo())?.branch !== gitBranch) {
      await appendLog(where.gitDir, `${new Date().toISOString()} ${hook}: ${gitBranch}: skipped, HEAD moved on`);
      return;
    }
    const { runPairing } = await import('./run.js');
    const { ok, message } = await runPairing({
      root: where.root,
      gitBranch,
      ...(from ? { from } : {}),
      hook,
      env: process.env,
      log: (m) => said.push(m),
    });
    await flush();
    await appendLog(where.gitDir, `${new Date().toISOString()} ${hook}: ${ok ? '' : 'error: '}${message}`);
    await record(ok, message);
    if (!ok) process.exitCode = 1;
  } catch (e) {
    const err = e as Error & { hint?: string };
    const message = `${err.message}${err.hint ? ` ${err.hint}` : ''}`;
    await flush().catch(() => undefined);
    await appendLog(where.gitDir, `${new Date().toISOString()} ${hook}: error: ${message}`);
    await record(false, message);
    process.exitCode = 1;
  } finally {
    await release?.().catch(() => undefined);
  }
}

const [first, ...rest] = process.argv.slice(2);
if (first === '--background') await background(rest[0] ?? '', rest[1] ?? '', rest[2] ?? '');
else if (first !== undefined) {
  // A hook must never fail the git command that ran it.
  await foreground(first, rest).catch(() => undefined);
}
