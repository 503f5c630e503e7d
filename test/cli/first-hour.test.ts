/**
 * What a newcomer meets in the first hour: a dry run that starts nothing, usage errors that exit 2,
 * an invalid configuration that still writes the promised `error` report, a run that refuses to
 * start without an agent before it changes anything, the git branch a check records, a start-up
 * that loads nothing a command does not use.
 */
import { localGitRepo } from '../../src/git/repo.js';
import { EmbeddedServer } from '../../src/branches/local/server.js';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { demoVerdict } from '../../src/cli/commands/demo.js';
import { resolveSides } from '../../src/cli/commands/check.js';
import { defaultConfig } from '../../src/config/schema.js';
import { scenarioRepo } from '../../src/demo/scenarios.js';
import { CheckReport } from '../../src/report/check-report.js';
import { execFileAsync } from '../helpers/exec-file.js';
import { captureCli } from '../helpers/cli.js';

const exec = execFileAsync;
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const GIT_ENV = {
  PATH: process.env.PATH ?? '',
  HOME: os.tmpdir(),
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@t',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@t',
};

const cli = captureCli;

let tmp: string;
let dataDir: string;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'consort-first-hour-'));
  dataDir = path.join(tmp, 'data');
  env = { PATH: process.env.PATH ?? '', HOME: tmp, CONSORT_DATA_DIR: dataDir, NO_COLOR: '1' };
});
afterAll(() => rm(tmp, { recursive: true, force: true }));

it('check --dry-run plans from the files alone: no server started, no URL needed for postgres', async () => {
  const repo = await scenarioRepo('out-of-order');
  try {
    for (const provider of ['local', 'postgres']) {
      const r = await cli(['--provider', provider, '-C', repo.dir, 'check', '--base', 'main', '--dry-run'], env);
      expect(r).toMatchObject({
        code: 1,
        stdout: expect.stringContaining('rename to migrations/1730000300001_add_product_discontinued_at.sql'),
      });
      expect(r.stdout).toContain('no database touched');
    }
    // The local provider's data directory was never created: nothing was initialised or started.
    await expect(readdir(dataDir)).rejects.toMatchObject({ code: 'ENOENT' });
  } finally {
    await repo.dispose();
  }
});

it('usage errors exit 2 and say what was wrong', async () => {
  const cases: [string[], RegExp][] = [
    [['run', '--until', 'nope'], /--until must be a gate/],
    [['check', '--pr', 'x'], /--pr must be a positive number, got "x"\.\nPass the pull request's number \(--pr 42\)/],
    [
      ['check', '--json', '-', '--markdown', '-'],
      /both print on stdout: give one of them a file\.\nFor example: --json - --markdown report\.md/,
    ],
    [['--provider', 'bogus', 'branch', 'list'], /Unknown provider "bogus"/],
    [['branch', 'create', 'x', '--ttl', 'soon'], /soon/],
    [['demo', 'nope'], /Unknown demo "nope"/],
    [['demo', '--scenario', 'clean,nope'], /Unknown scenario: nope/],
    [['feature', 'new', 'x', '--request', 'a', '--from', 'b'], /either --request or --from/],
    [['check', '--no-such-flag'], /unknown option/],
  ];
  for (const [args, message] of cases) {
    const r = await cli(['-C', tmp, ...args], env);
    expect({ args, code: r.code }).toEqual({ args, code: 2 });
    expect(r.stderr).toMatch(message);
  }
});

it('an invalid configuration still writes the error report --json promised, and the hint stands on its own line', async () => {
  const dir = path.join(tmp, 'bad-config');
  await mkdir(path.join(dir, '.github'), { recursive: true });
  await writeFile(
    path.join(dir, '.github', 'consort.yml'),
    'suite:\n  comand: x\ndatabase:\n  url: postgres://u:secret@db/app\n',
  );
  const r = await cli(['-C', dir, 'check', '--json', '-'], env);
  expect(r.code).toBe(1);
  const report = CheckReport.parse(JSON.parse(r.stdout));
  expect(report.conclusion).toBe('error');
  expect(report.error?.message).toContain('Invalid Consort configuration in .github/consort.yml (2 problems)');
  expect(Object.values(report.stages).every((s) => s.status === 'skipped')).toBe(true);
  expect(r.stdout + r.stderr).not.toContain('secret@db');
  const lines = r.stderr.trim().split('\n');
  expect(lines.at(-1)).toBe(
    'Fix the settings listed; every key is described in https://github.com/consort/consort/blob/main/docs/configuration.md.',
  );
  expect(lines.at(-2)).toMatch(/consort\.yml:\d+:\d+ /);
  // The environment variable is named once, on the problem line.
  expect(r.stderr.match(/CONSORT_POSTGRES_URL/g)).toHaveLength(1);
});

it('a missing migrations folder names migrations.dir', async () => {
  const dir = path.join(tmp, 'no-migrations');
  await mkdir(dir, { recursive: true });
  const r = await cli(['-C', dir, 'check', '--dry-run'], env);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('No migrations directory at migrations (migrations.dir).');
  expect(r.stderr).toContain('set migrations.dir in .github/consort.yml');
});

it("a missing migrations folder names the one the project's migrate script runs node-pg-migrate on", async () => {
  const dir = path.join(tmp, 'scripted-migrations');
  await mkdir(path.join(dir, 'db/migrations'), { recursive: true });
  await writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({ scripts: { migrate: 'node-pg-migrate up -m db/migrations' } }),
  );
  const r = await cli(['-C', dir, 'check', '--dry-run'], env);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('No migrations directory at migrations (migrations.dir).');
  expect(r.stderr).toContain(
    'package.json\'s script "migrate" runs node-pg-migrate with -m db/migrations: set migrations.dir: db/migrations in .github/consort.yml.',
  );
});

it('consort run without an agent backend refuses before it commits or writes anything', async () => {
  const repo = path.join(tmp, 'lane');
  await mkdir(repo, { recursive: true });
  await exec('git', ['init', '-q', '-b', 'main'], { cwd: repo, env: GIT_ENV });
  await writeFile(path.join(repo, 'consort.config.json'), JSON.stringify({ suite: { command: 'true' } }));
  await exec('git', ['add', '-A'], { cwd: repo, env: GIT_ENV });
  await exec('git', ['commit', '-qm', 'init'], { cwd: repo, env: GIT_ENV });
  expect((await cli(['-C', repo, 'feature', 'new', 'phones', '--request', 'Phones.'], env)).code).toBe(0);
  const before = (await exec('git', ['log', '--oneline'], { cwd: repo, env: GIT_ENV })).stdout;
  const status = (await exec('git', ['status', '--porcelain'], { cwd: repo, env: GIT_ENV })).stdout;
  const r = await cli(['-C', repo, 'run', 'phones'], env);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/No agent backend for the \S+ role/);
  expect(r.stderr.trim().split('\n').at(-1)).toMatch(/^Set agents\.default/);
  expect((await exec('git', ['log', '--oneline'], { cwd: repo, env: GIT_ENV })).stdout).toBe(before);
  expect((await exec('git', ['status', '--porcelain'], { cwd: repo, env: GIT_ENV })).stdout).toBe(status);
});

it('feature new names the commit the feature starts from, and asks to edit the request only when none was given', async () => {
  // Set up after `feature new` (a scripted agent, the configuration) and those files were the
  // feature's change: their lines flagged at the merge gate, with nothing said when it was made.
  const repo = path.join(tmp, 'base');
  await mkdir(repo, { recursive: true });
  await exec('git', ['init', '-q', '-b', 'main'], { cwd: repo, env: GIT_ENV });
  await exec('git', ['commit', '-q', '--allow-empty', '-m', 'init'], { cwd: repo, env: GIT_ENV });
  const head = (await exec('git', ['rev-parse', 'HEAD'], { cwd: repo, env: GIT_ENV })).stdout.trim();
  const given = await cli(['-C', repo, 'feature', 'new', 'phones', '--request', 'Phones.'], env);
  expect(given.code).toBe(0);
  expect(given.stdout).toContain(`It starts from ${head.slice(0, 7)} (HEAD)`);
  expect(given.stdout).toContain('commit your Consort setup first');
  expect(given.stdout).not.toContain('Edit feature-request.md');
  expect(given.stdout.trim().split('\n').at(-1)).toBe(`Next: consort -C ${repo} run 001-phones`);
  const template = await cli(['-C', repo, 'feature', 'new', 'tags'], env);
  expect(template.stdout.trim().split('\n').at(-1)).toBe(
    `Edit feature-request.md, then: consort -C ${repo} run 002-tags`,
  );
  const json = await cli(['-C', repo, 'feature', 'new', 'notes', '--json'], env);
  expect(JSON.parse(json.stdout)).toMatchObject({ feature: '003-notes', baseCommit: head });
});

it('consort run with every feature done says to start a new one, and with several open names one to run', async () => {
  // It said "Name the feature: consort run <feature>" for both: for a done feature that only says done again.
  const repo = path.join(tmp, 'all-done');
  await mkdir(repo, { recursive: true });
  await exec('git', ['init', '-q', '-b', 'main'], { cwd: repo, env: GIT_ENV });
  await exec('git', ['commit', '-q', '--allow-empty', '-m', 'init'], { cwd: repo, env: GIT_ENV });
  for (const slug of ['phones', 'tags'])
    expect((await cli(['-C', repo, 'feature', 'new', slug, '--request', 'x'], env)).code).toBe(0);
  const several = await cli(['-C', repo, 'run', '--dry-run'], env);
  expect(several.code).toBe(1);
  expect(several.stderr).toContain('Several features are open: 001-phones, 002-tags.');
  expect(several.stderr).toContain(`Name the one to run: consort -C ${repo} run 001-phones.`);
  for (const feature of ['001-phones', '002-tags']) {
    const file = path.join(repo, '.consort/features', feature, 'state.json');
    const state = JSON.parse(await readFile(file, 'utf8')) as { state: Record<string, unknown> };
    state.state = { ...state.state, phase: 'done', step: 'done' };
    await writeFile(file, JSON.stringify(state));
  }
  const done = await cli(['-C', repo, 'run', '--dry-run', '--json'], env);
  expect(done.code).toBe(1);
  expect(JSON.parse(done.stdout)).toMatchObject({
    error: {
      message: 'Every feature is done.',
      hint: 'Start the next one with `consort feature new <slug>` (`consort status` lists them all).',
    },
  });
  // A done feature run by name says it is done, whatever the working tree holds (it refused over
  // an uncommitted file, as if a turn were about to run).
  await writeFile(path.join(repo, 'scratch.txt'), 'notes\n');
  const named = await cli(['-C', repo, 'run', '001-phones'], env);
  expect(named.stderr).toBe('');
  expect(named.stdout).toContain('001-phones: done — nothing left to run');
  expect(named.code).toBe(0);
  expect(JSON.parse((await cli(['-C', repo, 'run', '001-phones', '--json'], env)).stdout)).toMatchObject({
    feature: '001-phones',
    stop: 'done',
  });
});

it('consort run outside a git repository says to make one before a feature, not only `feature new`', async () => {
  const folder = path.join(tmp, 'no-repo');
  await mkdir(folder, { recursive: true });
  const r = await cli(['-C', folder, 'run'], env);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('There is no feature yet.');
  expect(r.stderr).toContain(
    `\`git init\` and commit once, then start a feature with \`consort -C ${folder} feature new <slug>\``,
  );
});

it('a run that escalates says how to resume it (--retry), also when run again without it', async () => {
  const repo = path.join(tmp, 'escalates');
  await mkdir(repo, { recursive: true });
  await exec('git', ['init', '-q', '-b', 'main'], { cwd: repo, env: GIT_ENV });
  // An agent that does nothing: the spec-author's turn is incomplete, and with no retries the run escalates.
  await writeFile(
    path.join(repo, 'consort.config.json'),
    JSON.stringify({
      agents: { default: { backend: 'command', command: 'true' } },
      suite: { command: 'true', reports: 'junit.xml' },
      build: { retries: 0 },
    }),
  );
  await exec('git', ['add', '-A'], { cwd: repo, env: GIT_ENV });
  await exec('git', ['commit', '-qm', 'init'], { cwd: repo, env: GIT_ENV });
  expect((await cli(['-C', repo, 'feature', 'new', 'phones', '--request', 'Phones.'], env)).code).toBe(0);
  await exec('git', ['add', '-A'], { cwd: repo, env: GIT_ENV });
  await exec('git', ['commit', '-qm', 'feature'], { cwd: repo, env: GIT_ENV });
  // A data directory the postgres OS user can reach when the tests run as root (as in branch-cli.test.ts).
  const data = await mkdtemp(path.join(os.tmpdir(), 'consort-escalates-'));
  await chmod(data, 0o755);
  try {
    for (const attempt of ['first', 'again']) {
      const r = await cli(['-C', repo, 'run', 'phones'], { ...env, CONSORT_DATA_DIR: data });
      expect({ attempt, code: r.code }).toEqual({ attempt, code: 1 });
      expect(r.stdout).toContain('001-phones: escalated');
      expect(r.stdout.trim().split('\n').at(-1)).toMatch(/then resume with `consort -C \S+ run 001-phones --retry`\.$/);
    }
  } finally {
    await new EmbeddedServer(data).stop();
    await rm(data, { recursive: true, force: true });
  }
}, 120_000);

it('check records the git branch checked out, not "HEAD" or "working tree"', async () => {
  const repo = await scenarioRepo('clean');
  try {
    const config = defaultConfig();
    const atHead = await resolveSides(localGitRepo, repo.dir, config, { base: 'main', head: 'HEAD' }, () => undefined);
    expect(atHead.head).toMatchObject({ ref: 'HEAD', sha: repo.headSha, gitBranch: 'clean' });
    const tree = await resolveSides(localGitRepo, repo.dir, config, { base: 'main' }, () => undefined);
    expect(tree.head).toMatchObject({ ref: 'working tree', gitBranch: 'clean' });
    const byName = await resolveSides(localGitRepo, repo.dir, config, { base: 'main', head: 'clean' }, () => undefined);
    expect(byName.head.gitBranch).toBeUndefined(); // the ref is the branch name itself
  } finally {
    await repo.dispose();
  }
});

it('the demo claims only what the scenarios that ran showed', () => {
  const row = (scenario: string, expected: string, ok = true) => ({
    scenario,
    expected,
    got: expected,
    failedStage: '-',
    ok,
    seconds: 1,
  });
  expect(demoVerdict([row('clean', 'success')])).toBe('Consort passed the clean change.');
  expect(demoVerdict([row('not-null', 'failure (migrations)')])).toBe('Consort caught the broken change.');
  expect(
    demoVerdict([
      row('clean', 'success'),
      row('not-null', 'failure (migrations)'),
      row('bad-down', 'failure (reversibility)'),
    ]),
  ).toBe('Consort caught all 2 broken changes and passed the clean one.');
  expect(demoVerdict([row('clean', 'success', false)])).toMatch(/did not conclude as expected/);
});

it('--version and --help load commander and the CLI only: no provider, pg, zod or lane', async () => {
  const hooks = path.join(tmp, 'hooks.mjs');
  const register = path.join(tmp, 'register.mjs');
  await writeFile(
    hooks,
    'export async function load(url, ctx, next) { process._rawDebug(url); return next(url, ctx); }\n',
  );
  await writeFile(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(`file://${hooks}`)});\n`,
  );
  for (const args of [['--version'], ['check', '--help']]) {
    const { stderr } = await exec(
      process.execPath,
      ['--import', register, path.join(ROOT, 'bin', 'consort.js'), ...args],
      { env: { PATH: process.env.PATH ?? '' } },
    );
    const loaded = stderr
      .split('\n')
      .filter((l) => l.startsWith('file://'))
      .map((l) => path.relative(ROOT, fileURLToPath(l)));
    expect(loaded).toContain('lib/src/cli/main.js');
    expect(
      loaded.filter((f) => f.startsWith('node_modules/')).every((f) => f.startsWith('node_modules/commander/')),
    ).toBe(true);
    expect(loaded.some((f) => /lib\/(branches|lanes|config|db|migrations)\//.test(f))).toBe(false);
  }
});

it('the rename fix is `mv` for a migration git does not track yet, `git mv` otherwise', async () => {
  const { failingReport } = await import('../fixtures/reports/failing.js');
  const { renderCheckTerminal } = await import('../../src/report/terminal.js');
  const { untrackedFiles } = await import('../../src/git/repo.js');
  const file = 'migrations/20250401000000000_add_orders.sql';
  expect(renderCheckTerminal(failingReport)).toContain(`$ git mv ${file} `);
  const local = renderCheckTerminal(failingReport, { untracked: new Set([file]) });
  expect(local).toContain(`$ mv ${file} migrations/20250415093000001_add_orders.sql`);
  expect(local).not.toContain(`git mv ${file}`);
  const repo = await scenarioRepo('out-of-order');
  try {
    await writeFile(path.join(repo.dir, 'migrations', '1730000500000_new.sql'), 'SELECT 1;\n');
    expect([...(await untrackedFiles(repo.dir, 'migrations'))]).toEqual(['migrations/1730000500000_new.sql']);
  } finally {
    await repo.dispose();
  }
});

it('the CLI knows the same gates as the conductor (it checks --until and approve before loading it)', async () => {
  const { GATES } = await import('../../src/conductor/state.js');
  const { GATE_NAMES } = await import('../../src/cli/commands/run.js');
  expect([...GATE_NAMES]).toEqual([...GATES]);
});
