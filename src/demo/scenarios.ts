/**
 * The example shop as a throwaway git repository: base commit on `main`, a scenario's files
 * (what a pull request would add) committed on top. Used by `consort demo`, the end-to-end tests
 * and the check benchmark, so all three exercise the real git path of `consort check`.
 */
import { access, cp, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findPackageRoot } from '../core/package-root.js';
import { git as runGit } from '../git/exec.js';

/** The repository (or installed package) root. */
export const PACKAGE_ROOT = findPackageRoot() ?? fileURLToPath(new URL('../../', import.meta.url));
export const SHOP_DIR = path.join(PACKAGE_ROOT, 'examples', 'shop');

export interface Scenario {
  name: string;
  /** What the check must conclude on it. */
  expect: 'success' | 'failure';
  /** The stage that must fail (for failing scenarios). */
  failingStage?: 'plan' | 'migrations' | 'reversibility' | 'lint' | 'suite';
  about: string;
}

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'clean',
    expect: 'success',
    about: 'adds a nullable column with a correct down, plus code and tests that use it',
  },
  {
    name: 'not-null',
    expect: 'failure',
    failingStage: 'migrations',
    about: 'adds a NOT NULL column without a default to a populated table',
  },
  {
    name: 'out-of-order',
    expect: 'failure',
    failingStage: 'plan',
    about: 'a new migration that sorts before the newest one on main',
  },
  {
    name: 'bad-down',
    expect: 'failure',
    failingStage: 'reversibility',
    about: 'a down migration that does not restore the schema',
  },
];

export interface ScenarioRepo {
  /** The shop's folder inside the repo: run `consort check` here. */
  dir: string;
  baseSha: string;
  headSha: string;
  dispose(): Promise<void>;
}

async function git(cwd: string, ...args: string[]): Promise<string> {
  const env = {
    GIT_AUTHOR_NAME: 'Consort demo',
    GIT_AUTHOR_EMAIL: 'demo@consort.invalid',
    GIT_COMMITTER_NAME: 'Consort demo',
    GIT_COMMITTER_EMAIL: 'demo@consort.invalid',
  };
  const r = await runGit(cwd, ['-c', 'init.defaultBranch=main', '-c', 'commit.gpgsign=false', ...args], { env });
  if (r.code !== 0) throw new Error(`git ${args[0]} failed: ${r.stderr.trim() || `exit ${r.code}`}`);
  return r.stdout.trim();
}

/**
 * Lay the shop out as <tmp>/examples/shop with <tmp>/node_modules linked to this package's, so the
 * example's packages (jest, pg) resolve from above it exactly as in the repository, with nothing
 * installed in the shop itself (a user's copy installs them: examples/shop/package.json).
 */
export interface ScenarioRepoOptions {
  /** Files added on top of the shop in the base commit (e.g. more migrations). */
  baseFiles?: { file: string; content: string }[];
  /** Files the change adds (after the scenario's overlay). */
  extraMigrations?: { file: string; content: string }[];
  /** Shop files left out of the base commit, relative to the shop (e.g. test files a lean copy does without). */
  leaveOut?: string[];
}

export async function scenarioRepo(scenario: string | null, options: ScenarioRepoOptions = {}): Promise<ScenarioRepo> {
  const left = new Set((options.leaveOut ?? []).map((f) => path.join(SHOP_DIR, f)));
  // A name that is not in the shop would leave nothing out without a word: say so instead.
  for (const f of left)
    await access(f).catch(() => {
      throw new Error(`scenarioRepo: leaveOut names ${path.relative(SHOP_DIR, f)}, which is not in the shop`);
    });
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'consort-demo-'));
  const dir = path.join(tmp, 'examples', 'shop');
  await mkdir(dir, { recursive: true });
  await symlink(path.join(PACKAGE_ROOT, 'node_modules'), path.join(tmp, 'node_modules'), 'dir');
  await cp(SHOP_DIR, dir, {
    recursive: true,
    filter: (src) =>
      !src.startsWith(path.join(SHOP_DIR, 'scenarios')) && path.basename(src) !== 'junit.xml' && !left.has(src),
  });
  for (const f of options.baseFiles ?? []) await writeFile(path.join(dir, f.file), f.content);
  await git(dir, 'init', '-q');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'base');
  const baseSha = await git(dir, 'rev-parse', 'HEAD');
  await git(dir, 'checkout', '-qb', scenario ?? 'change');
  if (scenario) {
    const overlay = path.join(SHOP_DIR, 'scenarios', scenario);
    for (const entry of await readdir(overlay)) {
      if (entry !== 'README.md') await cp(path.join(overlay, entry), path.join(dir, entry), { recursive: true });
    }
  }
  for (const m of options.extraMigrations ?? []) await writeFile(path.join(dir, m.file), m.content);
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', scenario ?? 'change', '--allow-empty');
  const headSha = await git(dir, 'rev-parse', 'HEAD');
  return { dir, baseSha, headSha, dispose: () => rm(tmp, { recursive: true, force: true }) };
}
