/**
 * A small git repository for PR-lane tests about who runs a pull request's code: `main` holds a
 * base migration and `.github/consort.yml`; a test branches off, commits a change and runs the
 * lane as `consort check --base main` does (sides from git, config from the working tree).
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { resolveSides } from '../../src/cli/commands/check.js';
import { loadConfig } from '../../src/config/load.js';
import { localGitRepo } from '../../src/git/repo.js';
import { check } from '../../src/lanes/check/run.js';
import { lineLog } from '../../src/runtime/log.js';
import type { BranchProvider } from '../../src/ports/branch-provider.js';
import type { MigrationRunner } from '../../src/ports/migration-runner.js';
import { CheckReport } from '../../src/report/check-report.js';
import { testPorts } from './check-ports.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;

export const git = (cwd: string, ...args: string[]) =>
  exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd });

/**
 * git with an environment of its own (an author, a HOME with no user configuration), for tests that
 * build histories commit by commit.
 */
const GIT_ENV = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.com',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.com',
  HOME: os.tmpdir(),
};
export const isolatedGit = (cwd: string, ...args: string[]) => exec('git', args, { cwd, env: GIT_ENV });

/** The `pg` module, for JS migrations and suites that run from a temporary directory. */
export const PG = createRequire(import.meta.url).resolve('pg');

/** A repository on `main` with `files` (path → text) committed; returns its directory. */
export async function checkRepo(prefix: string, files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `consort-${prefix}-`));
  await mkdir(path.join(dir, 'migrations'));
  await mkdir(path.join(dir, '.github'));
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
  await git(dir, 'init', '-q', '-b', 'main');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'base');
  return dir;
}

/** On a new branch `name` off `from`: write `files` and commit them. */
export async function commitBranch(
  dir: string,
  name: string,
  files: Record<string, string>,
  from = 'main',
): Promise<void> {
  await git(dir, 'checkout', '-q', '-b', name, from);
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', name);
}

/** The base migration of the check lane's cancel, time-limit and side-by-side tests: a customers table. */
export const CUSTOMERS_BASE = `-- Up Migration
CREATE TABLE customers (id int PRIMARY KEY, name text);
-- Down Migration
DROP TABLE customers;
`;

/** The check lane's temporary branches (`-suite`, `-rev`) still on the provider. */
export async function temporaryBranches(provider: BranchProvider): Promise<string[]> {
  return (await provider.list()).map((b) => b.name).filter((n) => n.endsWith('-suite') || n.endsWith('-rev'));
}

/**
 * The lane on `branch` against main, as `consort check --base main --pr <pr>` runs it; `log` gets its
 * lines; `env`: the environment it is run in (none by default). `asCommit`: as `--head <branch>`
 * from main's checkout, both sides read from commits and written for the run. `migrations`,
 * `signal`: the run's migrations port (default testPorts') and its cancel.
 */
export async function checkBranch(
  dir: string,
  branch: string,
  pr: number,
  provider: BranchProvider,
  log: (line: string) => void = () => undefined,
  env: NodeJS.ProcessEnv = {},
  {
    asCommit = false,
    migrations,
    signal,
  }: { asCommit?: boolean; migrations?: MigrationRunner; signal?: AbortSignal } = {},
): Promise<CheckReport> {
  await git(dir, 'checkout', '-q', asCommit ? 'main' : branch);
  const { config, source } = await loadConfig(dir);
  const sides = asCommit ? { base: 'main', head: branch } : { base: 'main' };
  const { base, head } = await resolveSides(localGitRepo, dir, config, sides, log);
  return check({
    ...testPorts,
    log: lineLog(log),
    workspace: dir,
    config,
    configSource: source,
    base,
    head,
    pr,
    provider,
    toolVersion: 'test',
    env,
    ...(migrations ? { migrations } : {}),
    ...(signal ? { signal } : {}),
  });
}

/**
 * The lane on the checked-out tree of `dir` against main, as `consort check --base main --pr <pr>
 * --cleanup` runs it, with this process's environment (for histories whose suite needs PATH and
 * friends); the report is parsed as the CheckReport schema says.
 */
export async function checkAgainstMain(
  dir: string,
  pr: number | null,
  provider: BranchProvider,
  /** false: the PR branch is kept, to be looked at (the caller deletes it). */
  cleanup = true,
): Promise<CheckReport> {
  const { config, source } = await loadConfig(dir);
  const { base, head } = await resolveSides(localGitRepo, dir, config, { base: 'main' }, () => undefined);
  return CheckReport.parse(
    await check({
      ...testPorts,
      workspace: dir,
      config,
      configSource: source,
      base,
      head,
      pr,
      provider,
      env: process.env,
      toolVersion: 'test',
      cleanup,
      keepBranches: false,
    }),
  );
}
