/**
 * dist/index.js as a runner runs it, on the outcomes that must fail the step or stay quiet: a
 * failing check (exit 1, annotations on the migration's lines), a fork PR (no comment), a token
 * that may not comment (a warning, not a failure), pull_request_target, and invalid inputs.
 */
import { rm } from 'node:fs/promises';
import { EmbeddedServer } from '../../src/branches/local/server.js';
import { scenarioRepo, type ScenarioRepo } from '../../src/demo/scenarios.js';
import { ownDataDir } from '../helpers/servers.js';
import {
  installAction,
  QUICK_SUITE,
  runAction,
  webhookPayload,
  type ActionResult,
  type InstalledAction,
  type RecordedPullRequestEvent,
} from '../helpers/action-run.js';
import { startFakeGitHub, type FakeGitHub } from '../helpers/fake-github.js';

const TOKEN = `ghs_${'Fq9z'.repeat(9)}`;
const OWNER = 'Codertocat';
const REPO = 'Hello-World';
const QUICK = { 'suite-command': QUICK_SUITE };

let action: InstalledAction;
let github: FakeGitHub;
let dataDir: string;
const repos: ScenarioRepo[] = [];

beforeAll(async () => {
  [action, github] = await Promise.all([installAction(), startFakeGitHub(OWNER, REPO)]);
  dataDir = await ownDataDir(); // the Action starts it, as on a runner
});

afterAll(async () => {
  if (dataDir) {
    await new EmbeddedServer(dataDir).stop();
    await rm(dataDir, { recursive: true, force: true });
  }
  await Promise.all([action?.cleanup(), github?.close(), ...repos.map((r) => r.dispose())]);
});

beforeEach(() => {
  github.requests.length = 0;
  github.comments.length = 0;
  github.forbidCreate = false;
});

afterEach(() => expect(github.unexpected).toEqual([]));

async function scenario(name: string): Promise<ScenarioRepo> {
  const repo = await scenarioRepo(name);
  repos.push(repo);
  return repo;
}

/**
 * One `clean` repository for the tests whose subject is not the repository (a fork, a 403, the
 * event, the inputs): a scenario repository per test cost a copy of the shop and five git commands
 * for the same two commits. The Action leaves only the suite's git-ignored junit.xml in it, which
 * every suite run writes anew.
 */
let clean: Promise<ScenarioRepo> | undefined;
const cleanRepo = (): Promise<ScenarioRepo> => (clean ??= scenario('clean'));

interface Run {
  repo: ScenarioRepo;
  inputs?: Record<string, string>;
  eventName?: string;
  edit?: (pr: RecordedPullRequestEvent['pull_request']) => void;
}

async function run({ repo, inputs = {}, eventName = 'pull_request', edit }: Run): Promise<ActionResult> {
  const payload = await webhookPayload('pull_request.synchronize.json');
  payload.pull_request.base.sha = repo.baseSha;
  payload.pull_request.head.sha = repo.headSha;
  edit?.(payload.pull_request);
  return runAction({
    action,
    inputs,
    token: TOKEN,
    eventName,
    payload,
    workspace: repo.dir,
    repository: `${OWNER}/${REPO}`,
    apiUrl: github.url,
    dataDir,
  });
}

describe('dist/index.js: failures and refusals', () => {
  it('fails the step on a failing check, with annotations on the migration and the comment still posted', async () => {
    const r = await run({ repo: await scenario('not-null'), inputs: QUICK });
    expect(r.code).toBe(1);
    expect(r.outputs).toMatchObject({ conclusion: 'failure', branch: 'pr-2' });
    const file = 'migrations/1730000400000_add_customer_region.sql';
    expect(r.stdout).toMatch(
      new RegExp(`^::error title=squawk%3A adding-required-field,file=${file},line=5,col=\\d+::`, 'm'),
    );
    expect(r.stdout).toMatch(
      new RegExp(
        `^::error title=Consort%3A migration failed,file=${file}(,line=\\d+)?::ERROR 23502: .*contains null values`,
        'm',
      ),
    );
    expect(r.stdout).toMatch(/^::error::Consort: database checks failed/m);
    expect(r.summary).toContain('database checks failed');
    expect(github.comments).toEqual([
      expect.objectContaining({ body: expect.stringContaining('database checks failed') }),
    ]);
  });

  it('fails a migration that does not reverse (bad-down)', async () => {
    const r = await run({ repo: await scenario('bad-down'), inputs: { ...QUICK, comment: 'off' } });
    expect(r.code).toBe(1);
    // No stage may have errored (its summary says why, if one did under load).
    const stages = (r.report as { stages: Record<string, { status: string; summary?: string }> }).stages;
    expect(Object.entries(stages).flatMap(([k, v]) => (v.status === 'error' ? [`${k}: ${v.summary}`] : []))).toEqual(
      [],
    );
    expect(r.report).toMatchObject({ conclusion: 'failure', stages: { reversibility: { status: 'failed' } } });
    expect(r.stdout).toMatch(
      /^::error title=Consort%3A not reversible \(not-restored\),file=migrations\/1730000400000_add_loyalty_program\.sql::/m,
    );
    expect(github.requests).toEqual([]); // comment: off
  });

  it('posts no comment on a fork PR and says why', async () => {
    const r = await run({
      repo: await cleanRepo(),
      inputs: QUICK,
      edit: (pr) => {
        pr.head.repo = { ...pr.head.repo, full_name: 'mona/Hello-World', fork: true };
      },
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('this pull request comes from a fork');
    expect(r.summary).toContain('database checks passed');
    expect(github.requests).toEqual([]);
  });

  it('turns a 403 on comment creation into a warning, not a failure', async () => {
    github.forbidCreate = true;
    const r = await run({ repo: await cleanRepo(), inputs: QUICK });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^::warning::Could not write the PR comment \(GitHub API create issue comment failed \(HTTP 403\): Resource not accessible by integration/m,
    );
    expect(r.outputs.conclusion).toBe('success');
    expect(github.requests.map((q) => q.method)).toEqual(['GET', 'POST']);
  });

  it('refuses mode: check on pull_request_target', async () => {
    const r = await run({ repo: await cleanRepo(), eventName: 'pull_request_target' });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^::error::mode: check does not run on pull_request_target/m);
    expect(github.requests).toEqual([]);
  });

  it.each([
    [{ mode: 'banana' }, 'Invalid input "mode" must be one of check, cleanup, build, approve (got "banana")'],
    [{ comment: 'always' }, 'Invalid input "comment" must be one of sticky, off (got "always")'],
    [{ 'fail-on': 'info' }, 'Invalid input "fail-on" must be one of error, warning (got "info")'],
    [
      { 'database-url': 'mysql://root:hunter2-secret@db/x' },
      'Invalid input "database-url" must be a postgres:// or postgresql:// connection string',
    ],
  ])('fails on an invalid input, naming it: %j', async (inputs, message) => {
    const r = await run({ repo: await cleanRepo(), inputs });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`::error::${message}`);
    expect(
      r.stdout
        .split('\n')
        .filter((l) => !l.startsWith('::add-mask::'))
        .join('\n'),
    ).not.toContain('hunter2-secret');
    expect(github.requests).toEqual([]);
  });
});
