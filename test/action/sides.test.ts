/**
 * Base and head from a workflow's event, on real git repositories: the PR's base (or the commit a
 * merge ref was built on), a base missing from a shallow checkout fetched from origin, merge
 * groups and pushes. No network: "origin" is a local repository.
 */
import { localGitRepo } from '../../src/git/repo.js';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ActionEvent } from '../../src/action/context.js';
import { actionSides } from '../../src/action/sides.js';
import { loadConfig } from '../../src/config/load.js';
import { CHECK_STAGES, type ConsortConfig } from '../../src/config/schema.js';
import type { ActionInputs } from '../../src/action/inputs.js';
import { baseWithInputs } from '../../src/action/modes/check.js';
import { verdictSettings } from '../../src/lanes/check/base-settings.js';
import { scenarioRepo, type ScenarioRepo } from '../../src/demo/scenarios.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
const IDENTITY = {
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.invalid',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.invalid',
};
const git = async (cwd: string, ...args: string[]) =>
  (
    await exec('git', ['-c', 'commit.gpgsign=false', ...args], { cwd, env: { ...process.env, ...IDENTITY } })
  ).stdout.trim();

const NEW = 'migrations/1730000400000_add_customer_phone.sql';
const names = (side: { migrations: readonly { file: string }[] }) => side.migrations.map((m) => m.file).sort();

let repo: ScenarioRepo;
let config: ConsortConfig;
let scratch: string;

beforeAll(async () => {
  repo = await scenarioRepo('clean');
  config = (await loadConfig(repo.dir)).config;
  scratch = await mkdtemp(path.join(os.tmpdir(), 'consort-sides-'));
});
afterAll(async () => {
  await repo?.dispose();
  await rm(scratch, { recursive: true, force: true });
});

const pr = (base: string, head: string): ActionEvent => ({
  kind: 'pull_request',
  target: false,
  action: 'synchronize',
  number: 7,
  fork: false,
  base: { ref: 'main', sha: base },
  head: { ref: 'clean', sha: head },
  label: null,
  sender: { login: 'octocat', type: 'User' },
});

async function sides(workspace: string, event: ActionEvent) {
  const log: string[] = [];
  const result = await actionSides({ workspace, event }, config, (m) => log.push(m), localGitRepo);
  return { ...result, log };
}

describe('actionSides', () => {
  it('compares a PR head checkout with the PR base', async () => {
    const s = await sides(repo.dir, pr(repo.baseSha, repo.headSha));
    expect(s.pr).toBe(7);
    expect(s.base).toMatchObject({ ref: 'main', sha: repo.baseSha });
    expect(s.head).toMatchObject({ ref: 'clean', sha: repo.headSha });
    expect(names(s.head).filter((f) => !names(s.base).includes(f))).toEqual([NEW]);
    expect(s.log).toEqual([]);
    expect(s.head.leftBehind).toBeUndefined();
    // Migrations run where their imports resolve: base's whole commit, head's checkout itself.
    expect(s.base.tree).toEqual({ kind: 'commit', repo: repo.dir, sha: repo.baseSha });
    expect(s.head.tree).toEqual({ kind: 'dir', dir: repo.dir });
  });

  it("reads what a PR may not grant itself (check.migrationsRole, the verdict's settings) from the base's configuration, not the checkout's", async () => {
    const clone = path.join(scratch, 'self-grant');
    await git(scratch, 'clone', '-q', '--branch', 'clean', repo.dir, clone);
    const file = path.join(clone, '.github', 'consort.yml');
    await writeFile(file, `${await readFile(file, 'utf8')}\ncheck:\n  migrationsRole: admin\n  blocking: []\n`);
    await git(clone, 'commit', '-qam', 'grant myself the admin');
    const headSha = await git(clone, 'rev-parse', 'HEAD');
    expect((await loadConfig(clone)).config.check.migrationsRole).toBe('admin');

    const s = await sides(clone, pr(repo.baseSha, headSha));
    expect(s.base.settings).toEqual({
      migrationsRole: 'branch',
      verdict: verdictSettings(config),
      migrationsDir: config.migrations.dir,
      migrationsTimeout: config.migrations.timeout,
      source: '.github/consort.yml',
    });
    expect(s.base.settings?.verdict?.blocking).toEqual([...CHECK_STAGES]);
    // The workflow's fail-on input outranks the base's lint.failOn (and the change's, which is not read).
    expect(baseWithInputs(s.base, { failOn: 'warning' } as ActionInputs).settings?.verdict?.lint.failOn).toBe(
      'warning',
    );
    expect(baseWithInputs(s.base, { failOn: undefined } as ActionInputs)).toBe(s.base);
    const named = await actionSides(
      { workspace: clone, event: pr(repo.baseSha, headSha) },
      config,
      () => undefined,
      localGitRepo,
      '.github/consort.yml',
    );
    expect(named.base.settings).toMatchObject({ migrationsRole: 'branch', source: '.github/consort.yml' });
  });

  it("reads the checkout's files in the base's migrations folder when the PR points migrations.dir elsewhere", async () => {
    const clone = path.join(scratch, 'dir-copies');
    await git(scratch, 'clone', '-q', '--branch', 'clean', repo.dir, clone);
    const file = path.join(clone, '.github', 'consort.yml');
    await writeFile(file, (await readFile(file, 'utf8')).replace(/dir: \S+/, 'dir: db/copies'));
    await mkdir(path.join(clone, 'db'));
    await git(clone, 'mv', 'migrations', 'db/copies');
    await git(clone, 'commit', '-qam', 'move');
    await mkdir(path.join(clone, 'migrations'));
    await writeFile(path.join(clone, 'migrations', '1730000900000_hidden.sql'), 'SELECT 1;\n');
    await git(clone, 'add', '-A');
    await git(clone, 'commit', '-qm', 'a migration where main deploys from');
    const headConfig = (await loadConfig(clone)).config;
    expect(headConfig.migrations.dir).toBe('db/copies');

    const s = await actionSides(
      { workspace: clone, event: pr(repo.baseSha, await git(clone, 'rev-parse', 'HEAD')) },
      headConfig,
      () => undefined,
      localGitRepo,
    );
    expect(s.head.leftBehind).toEqual({
      baseDir: config.migrations.dir,
      migrations: [{ file: 'migrations/1730000900000_hidden.sql', content: 'SELECT 1;\n' }],
    });
  });

  it("compares GitHub's merge ref with the commit it merged onto, not a stale base SHA", async () => {
    const clone = path.join(scratch, 'merge');
    await git(scratch, 'clone', '-q', repo.dir, clone);
    await git(clone, 'checkout', '-q', '-b', 'main-moved', repo.baseSha);
    await writeFile(
      path.join(clone, 'migrations', '1730000350000_hotfix.sql'),
      '-- Up Migration\nSELECT 1;\n-- Down Migration\nSELECT 1;\n',
    );
    await git(clone, 'add', '-A');
    await git(clone, 'commit', '-qm', 'hotfix on main');
    const mainTip = await git(clone, 'rev-parse', 'HEAD');
    await git(clone, 'merge', '-q', '--no-ff', '-m', `Merge ${repo.headSha} into ${mainTip}`, repo.headSha);

    const s = await sides(clone, pr(repo.baseSha, repo.headSha));
    expect(s.base.sha).toBe(mainTip);
    expect(s.log).toEqual([expect.stringContaining(`merges the PR into main at ${mainTip.slice(0, 7)}`)]);
    expect(names(s.head).filter((f) => !names(s.base).includes(f))).toEqual([NEW]);
  });

  it('fetches a base commit missing from a shallow checkout, and says so', async () => {
    const clone = path.join(scratch, 'shallow');
    await git(scratch, 'clone', '-q', '--depth=1', '--branch', 'clean', `file://${repo.dir}`, clone);
    await expect(git(clone, 'cat-file', '-e', `${repo.baseSha}^{commit}`)).rejects.toThrow();

    const s = await sides(clone, pr(repo.baseSha, repo.headSha));
    expect(s.base.sha).toBe(repo.baseSha);
    expect(s.log).toEqual([
      `Base commit ${repo.baseSha} is not in the checkout (shallow clone?): running git fetch --no-tags --depth=1 origin ${repo.baseSha}. Use actions/checkout with fetch-depth: 0 to skip this.`,
    ]);
    expect(names(s.head).filter((f) => !names(s.base).includes(f))).toEqual([NEW]);
  });

  it('fails with the fix when the base cannot be fetched', async () => {
    await expect(sides(repo.dir, pr('f'.repeat(40), repo.headSha))).rejects.toThrow(
      /Base commit f{40} is not in the checkout and could not be fetched/,
    );
  });

  it("uses a merge group's base_sha, with no pull request", async () => {
    const s = await sides(repo.dir, {
      kind: 'merge_group',
      base: { ref: 'refs/heads/main', sha: repo.baseSha },
      head: { ref: 'refs/heads/gh-readonly-queue/main/pr-7-x', sha: repo.headSha },
    });
    expect(s).toMatchObject({
      pr: null,
      base: { sha: repo.baseSha },
      head: { sha: repo.headSha, ref: 'refs/heads/gh-readonly-queue/main/pr-7-x' },
    });
  });

  it("uses a push's before, or HEAD's parent for a new branch or an unknown before", async () => {
    const push = (before: string | null): ActionEvent => ({
      kind: 'push',
      ref: 'refs/heads/clean',
      before,
      after: repo.headSha,
    });
    expect((await sides(repo.dir, push(repo.baseSha))).base).toMatchObject({ ref: 'before push', sha: repo.baseSha });
    expect((await sides(repo.dir, push(null))).base).toMatchObject({ ref: 'HEAD^', sha: repo.baseSha });
    const gone = await sides(repo.dir, push('e'.repeat(40)));
    expect(gone.base).toMatchObject({ ref: 'HEAD^', sha: repo.baseSha });
    expect(gone.log.at(-1)).toMatch(/could not be fetched.*Falling back to HEAD's parent\.$/s);
  });

  it("uses HEAD's parent on the default branch for other events", async () => {
    const s = await sides(repo.dir, { kind: 'other', name: 'workflow_dispatch' });
    expect(s.base).toMatchObject({ sha: repo.baseSha });
    expect(s.head).toMatchObject({ ref: 'HEAD', sha: repo.headSha });
  });

  it('refuses a workspace that is not a git checkout', async () => {
    await expect(sides(scratch, { kind: 'other', name: 'workflow_dispatch' })).rejects.toThrow(/is not a git checkout/);
  });
});
