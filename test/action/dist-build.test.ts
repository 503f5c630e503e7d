/**
 * The committed dist/index.js in `mode: build` and `mode: approve`, run as a GitHub runner runs it
 * (test/helpers/action-run.ts) against a local stand-in for GitHub's REST API and a local bare
 * repository as `origin`: the TDD lane on the example shop from `/consort build` to the merge gate,
 * with scripted agents (the `command` backend), real branches on the embedded PostgreSQL 18 and the
 * shop's own test file for every proof, run by the quick stand-in for jest (see test/helpers/shop-agent.ts:
 * this file tests the Action's plumbing, not jest; test/agents/openai-build.test.ts runs the lane on the
 * shop's full jest suite).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EmbeddedServer } from '../../src/branches/local/server.js';
import type { ScenarioRepo } from '../../src/demo/scenarios.js';
import { REFUSAL, replyText } from '../../src/github/command-reply.js';
import {
  installAction,
  runAction,
  webhookPayload,
  type ActionResult,
  type InstalledAction,
  type RunOptions,
} from '../helpers/action-run.js';
import { postedText, startFakeGitHub, type FakeGitHub } from '../helpers/fake-github.js';
import { ownDataDir } from '../helpers/servers.js';
import { shopRepoWithAgent } from '../helpers/shop-agent.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
const TOKEN = `ghs_${'b8Tr5'.repeat(7)}z`;
const MODEL_KEY = 'sk-ant-api03-NotARealKeyButLongEnough-0123456789';
const OWNER = 'Codertocat';
const REPO = 'Hello-World';
const PR = 7;
const FEATURE = '001-customer-phones';
const AGENT_SOURCE = fileURLToPath(new URL('../fixtures/agents/pr-agent.mjs', import.meta.url));
/** A copy of the scripted agent in this file's own temp dir, so its `hang-once` control file is ours alone. */
let AGENT: string;
/** Real suite runs on a shared machine: generous limits. */
const SLOW = 300_000;

let action: InstalledAction;
let github: FakeGitHub;
let repo: ScenarioRepo;
let origin: string;
let dataDir: string;
let baseBranch: string;

async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await exec('git', args, { cwd })).stdout.trim();
}

beforeAll(async () => {
  AGENT = path.join(await mkdtemp(path.join(os.tmpdir(), 'consort-pr-agent-')), 'pr-agent.mjs');
  await writeFile(AGENT, await readFile(AGENT_SOURCE));
  [action, github, repo] = await Promise.all([
    installAction(),
    startFakeGitHub(OWNER, REPO),
    shopRepoWithAgent(AGENT, 'build:\n  turnTimeout: 2m\n', 'quick'),
  ]);
  dataDir = await ownDataDir(); // the Action starts it, as on a runner
  // origin: a bare repository with the base branch and the pull request's branch `change`.
  origin = path.join(await mkdtemp(path.join(os.tmpdir(), 'consort-origin-')), 'Hello-World.git');
  await exec('git', ['clone', '-q', '--bare', repo.dir, origin]);
  // The base branch: the scenario's other branch (whatever git init named it); the Action fetches it.
  baseBranch = (await git(repo.dir, 'for-each-ref', '--format=%(refname:short)', 'refs/heads'))
    .split('\n')
    .find((b) => b !== 'change')!;
  // As actions/checkout leaves a comment-triggered run: the default branch, with the token persisted.
  await git(repo.dir, 'remote', 'add', 'origin', origin);
  await git(repo.dir, 'checkout', '-q', repo.baseSha);
  await git(repo.dir, 'branch', '-D', 'change');
  await git(
    repo.dir,
    'config',
    '--local',
    'http.https://github.com/.extraheader',
    `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${TOKEN}`).toString('base64')}`,
  );
  github.setPull({
    number: PR,
    state: 'open',
    title: 'Customer phone numbers',
    body: 'Customers want to leave a phone number.',
    head: { ref: 'change', sha: repo.headSha, repo: `${OWNER}/${REPO}` },
    base: { ref: baseBranch, sha: repo.baseSha },
  });
  github.permissions.set('Codertocat', 'admin');
  github.permissions.set('mallory', 'read');
}, 120_000);

afterAll(async () => {
  if (dataDir) {
    await new EmbeddedServer(dataDir).stop();
    await rm(dataDir, { recursive: true, force: true });
  }
  if (origin) await rm(path.dirname(origin), { recursive: true, force: true });
  if (AGENT) await rm(path.dirname(AGENT), { recursive: true, force: true });
  await Promise.all([action?.cleanup(), github?.close(), repo?.dispose()]);
});

afterEach(() => expect(github.unexpected).toEqual([]));

let commentId = 0;
async function comment(body: string, user = 'Codertocat', type: 'User' | 'Bot' = 'User'): Promise<unknown> {
  const p = await webhookPayload<{
    issue: { number: number; pull_request?: unknown };
    comment: { id: number; body: string; user: { login: string; type: string } };
  }>('issue_comment.created.json');
  p.issue.number = PR;
  p.issue.pull_request = { url: `https://api.github.com/repos/${OWNER}/${REPO}/pulls/${PR}` };
  // The comment exists on the stand-in too, as on GitHub (reactions need it).
  commentId = github.seed({ issue: PR, body, user: { login: user, id: 5000 + user.length, type } }).id;
  p.comment.id = commentId;
  p.comment.body = body;
  p.comment.user.login = user;
  p.comment.user.type = type;
  return p;
}

async function run(
  mode: 'build' | 'approve',
  payload: unknown,
  inputs: Record<string, string> = {},
  more: Pick<RunOptions, 'env' | 'signalOn'> = {},
): Promise<ActionResult> {
  const r = await runAction({
    action,
    // GitHub's spacing between writes (≥ 1 s, reviews and comments ≥ 3 s) is test/github/octokit.test.ts's;
    // here it only waited (~20 s a run of this file). Rate limits are still waited out (the approval below).
    inputs: { mode, 'anthropic-api-key': MODEL_KEY, 'github-write-pacing': 'none', ...inputs },
    token: TOKEN,
    eventName: 'issue_comment',
    payload,
    workspace: repo.dir,
    repository: `${OWNER}/${REPO}`,
    apiUrl: github.url,
    dataDir,
    ...more,
  });
  if (r.code !== 0)
    console.log(
      r.stdout
        .split('\n')
        .filter((l) => /^::error|^::warning/.test(l))
        .join('\n') || r.stdout.slice(-3000),
    );
  return r;
}

const originHead = () => git(origin, 'rev-parse', 'refs/heads/change');
const originLog = async () =>
  (await git(origin, 'log', '--format=%H %s', 'refs/heads/change'))
    .split('\n')
    .map((l) => ({ sha: l.slice(0, 40), subject: l.slice(41) }));

/** Every place a secret could leak to. */
function visible(r: ActionResult): string {
  const log = `${r.stdout}\n${r.stderr}`
    .split('\n')
    .filter((l) => !l.startsWith('::add-mask::'))
    .join('\n');
  return [
    log,
    r.summary,
    ...Object.values(r.outputs),
    ...github.comments.map((c) => c.body),
    ...github.reviews.map((v) => v.body),
    ...github.requests.map((q) => JSON.stringify(q.body ?? '')),
  ].join('\n');
}

describe('dist/index.js, mode: build and approve', () => {
  it('refuses /consort build from someone without write access, and changes nothing', async () => {
    const before = await originHead();
    const r = await run('build', await comment('/consort build customer-phones', 'mallory'));
    expect(r.code).toBe(0);
    expect(github.reactions).toEqual([{ commentId, content: 'confused' }]);
    expect(github.comments.map((c) => (c.user.type === 'Bot' ? postedText(c.body) : c.body))).toEqual([
      '/consort build customer-phones',
      replyText('mallory', '/consort build customer-phones', REFUSAL),
    ]);
    expect(github.reviews).toEqual([]);
    expect(await originHead()).toBe(before);
    expect(r.stdout).toContain('mallory has read access');
  });

  it("ignores a bot's command and a comment without one", async () => {
    const requests = github.requests.length;
    for (const payload of [
      await comment('/consort build customer-phones', 'github-actions[bot]', 'Bot'),
      await comment('Looks good to me.\n\n> /consort build customer-phones'),
    ]) {
      const r = await run('build', payload);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/Nothing to do: (the comment is by a bot|the comment has no \/consort command)/);
    }
    expect(github.requests.length).toBe(requests);
  });

  it(
    'keeps every pushed turn when the job is cancelled mid-turn, and says how to resume',
    async () => {
      const marker = path.join(path.dirname(origin), 'architect-hung');
      await writeFile(path.join(path.dirname(AGENT), 'hang-once'), marker);
      const r = await run(
        'build',
        await comment(
          '/consort build customer-phones\nCustomers want to leave a phone number so the shop can call them.',
        ),
        {},
        {
          signalOn: { when: () => existsSync(marker), signal: 'SIGTERM' },
        },
      );
      expect(r.code).toBe(1);
      expect(r.stdout).toContain(
        '::error::Consort: the run was cancelled; `/consort build 001-customer-phones` resumes from the last pushed turn.',
      );
      // The two spec-author turns were pushed and reviewed; nothing of the interrupted turn was.
      expect(github.reviews).toHaveLength(2);
      const pushed = await git(
        origin,
        'ls-tree',
        '-r',
        '--name-only',
        'refs/heads/change',
        `.consort/features/${FEATURE}`,
      );
      expect(pushed).toContain('feature-spec.json');
      expect(pushed).not.toContain('architecture.json');
    },
    SLOW,
  );

  it(
    'designs the feature on the pull request: a commit and a review per turn, then the spec gate',
    async () => {
      const r = await run('build', await comment('/consort build customer-phones'));
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      // Resumed: the interrupted architect turn runs again, then the dba and the test-strategist.
      expect(r.outputs).toMatchObject({
        feature: FEATURE,
        stop: 'awaiting-approval',
        turns: '3',
        'cost-usd': '0.0375',
      });
      // The checkout's persisted token was removed before any agent ran.
      await expect(git(repo.dir, 'config', '--local', '--get-regexp', 'extraheader')).rejects.toThrow();

      // One review per turn, on the commit that holds the turn; the injected self-approval was refused.
      expect(
        github.reviews.map((v) => /### \S+ `([a-z-]+)` · ([a-z-]+)[^\n]* — (\w+)/.exec(v.body)!.slice(1).join(' ')),
      ).toEqual([
        'spec-author spec refused',
        'spec-author spec accepted',
        'architect-reviewer architecture accepted',
        'dba db-design accepted',
        'test-strategist test-list accepted',
      ]);
      const refused = github.reviews[0]!;
      expect(refused.body).toContain(`<code>.consort/features/${FEATURE}/gates.json</code>`);
      expect(refused.body).toContain('github token visible: false');
      expect(refused.body).toContain('my key is ****');
      expect(github.reviews.every((v) => v.event === 'COMMENT' && v.pr === PR)).toBe(true);
      const log = await originLog();
      const shas = new Set(log.map((c) => c.sha));
      for (const v of github.reviews) expect(shas.has(v.commitId)).toBe(true);
      const specCommit = log.find((c) => c.subject === `consort(spec-author): spec ${FEATURE}`)!;
      expect(github.reviews[1]!.commitId).toBe(specCommit.sha);
      // One commit per turn: the refused one records its reverted attempt; each holds its transcript.
      expect(log.find((c) => c.sha === github.reviews[0]!.commitId)!.subject).toBe(
        `consort(spec-author): spec ${FEATURE} (refused, reverted)`,
      );
      const inSpecCommit = await git(origin, 'show', '--name-only', '--format=', specCommit.sha);
      expect(inSpecCommit.split('\n').sort()).toEqual(
        expect.arrayContaining([
          `.consort/features/${FEATURE}/feature-spec.json`,
          `.consort/features/${FEATURE}/transcripts/turn-0002.txt`,
          `.consort/features/${FEATURE}/turns.jsonl`,
        ]),
      );
      // Besides the turns' commits, only the conductor's state at the start of each run (two runs so far).
      expect(
        log.filter((c) => c.subject.startsWith('consort: ') && c.subject.includes('turn-')).map((c) => c.subject),
      ).toEqual([`consort: ${FEATURE} records before turn-0003`, `consort: ${FEATURE} records before turn-0001`]);
      expect(github.reviews[1]!.body).toMatch(/\| Tokens \| 1,200 in \/ 300 out \|\n\| Cost \| \$0\.0125 \|/);

      // The gate: pending on the pushed head, with a comment that says exactly how to approve it.
      const head = await originHead();
      expect(github.statuses).toEqual([
        expect.objectContaining({ sha: head, context: 'consort/gate/spec', state: 'pending' }),
      ]);
      const gateComment = github.comments.at(-1)!.body;
      expect(gateComment).toContain('```\n/consort approve spec\n```');
      expect(gateComment).toContain(`.consort/features/${FEATURE}/feature-spec.json`);
      const gates = JSON.parse(await git(origin, 'show', `${head}:.consort/features/${FEATURE}/gates.json`)) as {
        gates: Record<string, unknown>;
      };
      expect(gates.gates).toEqual({});

      expect(r.summary).toMatch(
        /\| turn-0003 \| architect-reviewer \| architecture \| accepted \|[^\n]*\n\| turn-0004 \| dba \| db-design \| accepted \|/,
      );
      expect(r.summary).toContain('3 of 3 accepted');
      expect(r.summary).toContain('/consort approve spec');
      expect(visible(r)).not.toContain(MODEL_KEY);
      expect(visible(r)).not.toContain(TOKEN);
      const transcript = await git(origin, 'show', `${head}:.consort/features/${FEATURE}/transcripts/turn-0001.txt`);
      expect(transcript).toContain('my key is ****');
      expect(transcript).not.toContain(MODEL_KEY);
    },
    SLOW,
  );

  it(
    'approves the gate on a verified command, continues through RED, GREEN and REFACTOR to the merge gate, and waits out a rate limit',
    async () => {
      const reviewsBefore = github.reviews.length;
      github.limitNext = { status: 429, retryAfter: 1, count: 1 };
      // Two turns this run (max-turns), then a second run continues where it paused.
      const paused = await run('approve', await comment('/consort approve spec'), { 'max-turns': '2' });
      expect(paused.stderr).toBe('');
      expect(paused.code).toBe(0);
      expect(paused.stdout).toMatch(/rate limit/);
      expect(paused.outputs).toMatchObject({ feature: FEATURE, stop: 'max-turns', turns: '2' });
      expect(postedText(github.comments.at(-1)!.body)).toBe(
        `@Codertocat, the TDD lane paused ${FEATURE} at a budget: stopped after 2 turns, the most one run may take (max-turns). Everything so far is pushed; comment \`/consort build ${FEATURE}\` to continue.`,
      );
      const r = await run('build', await comment(`/consort build ${FEATURE}`));
      expect(r.code).toBe(0);
      expect(r.outputs).toMatchObject({ feature: FEATURE, stop: 'awaiting-approval', turns: '2' });

      const head = await originHead();
      const gates = JSON.parse(await git(origin, 'show', `${head}:.consort/features/${FEATURE}/gates.json`)) as {
        gates: { spec: { approval: { approver: string; headSha: string; hash: string } } };
      };
      expect(gates.gates.spec.approval).toMatchObject({
        approver: 'Codertocat',
        headSha: repo.headSha,
        hash: expect.stringMatching(/^sha256:/),
      });
      // Approved on the approval's commit, and again on every head the lane pushes afterwards.
      expect(github.statuses.filter((s) => s.context === 'consort/gate/spec').map((s) => s.state)).toEqual([
        'pending',
        'success',
        'success',
        'success',
      ]);
      expect(github.statuses.filter((s) => s.context === 'consort/gate/spec').at(-1)!.sha).toBe(head);
      expect(github.reactions.filter((x) => x.content === '+1')).toHaveLength(1);

      const turns = github.reviews
        .slice(reviewsBefore)
        .map((v) => /### \S+ `([a-z-]+)` · ([a-z-]+ ?T?\d?)[^\n]* — (\w+)/.exec(v.body)!.slice(1).join(' '));
      expect(turns).toEqual([
        'navigator red T1 accepted',
        'driver green T1 accepted',
        'driver refactor T1 accepted',
        'navigator review T1 accepted',
      ]);
      const green = github.reviews[reviewsBefore + 1]!;
      expect(green.body).toMatch(
        /\| passed \| failed \| errored \| skipped \| result \|\n[^\n]*\n\| \d+ \| 0 \| 0 \| 0 \| \d+ passed, 0 failed, 0 errored, 0 skipped \|/,
      );
      expect(green.body).toContain('migrations/1730000400000_add_customer_phone.sql');
      const subjects = (await originLog()).map((c) => c.subject);
      expect(subjects).toEqual(
        expect.arrayContaining([
          `consort(navigator): red ${FEATURE}/T1`,
          `consort(driver): green ${FEATURE}/T1`,
          `consort(navigator): review ${FEATURE}/T1`,
        ]),
      );
      expect(github.statuses.at(-1)).toMatchObject({ sha: head, context: 'consort/gate/merge', state: 'pending' });
      expect(github.comments.at(-1)!.body).toContain('/consort approve merge');
      expect(visible(r)).not.toContain(MODEL_KEY);
      expect(visible(paused)).not.toContain(MODEL_KEY);
    },
    SLOW,
  );

  it(
    'finishes the feature when the merge gate is approved',
    async () => {
      const r = await run('build', await comment('/consort approve merge'));
      expect(r.code).toBe(0);
      expect(r.outputs).toMatchObject({ stop: 'done', turns: '0' });
      const head = await originHead();
      const onHead = github.statuses
        .filter((s) => s.sha === head)
        .map((s) => `${s.context} ${s.state}`)
        .sort();
      expect(onHead).toEqual(['consort/gate/merge success', 'consort/gate/spec success']);
      const subjects = (await originLog()).map((c) => c.subject);
      expect(subjects[0]).toBe(`consort: ${FEATURE} done`);
    },
    SLOW,
  );

  it(
    'never reports an approval as in force once its artifacts changed: the gate is pending again on the new head',
    async () => {
      // Someone edits the approved spec and pushes.
      const spec = path.join(repo.dir, '.consort', 'features', FEATURE, 'feature-spec.json');
      await writeFile(
        spec,
        (await readFile(spec, 'utf8')).replace(
          'Customers can have a phone number.',
          'Customers can have two phone numbers.',
        ),
      );
      await git(repo.dir, 'commit', '-qam', 'widen the spec');
      await git(repo.dir, 'push', '-q', origin, 'HEAD:refs/heads/change');
      const pushed = await originHead();
      github.setPull({ ...github.pulls.get(PR)!, head: { ref: 'change', sha: pushed, repo: `${OWNER}/${REPO}` } });
      const r = await run('build', await comment('/consort build customer-phones'));
      expect(r.code).toBe(0);
      const head = await originHead();
      const spec_ = github.statuses.filter((s) => s.sha === head && s.context === 'consort/gate/spec');
      expect(spec_).toEqual([
        expect.objectContaining({
          state: 'pending',
          description: expect.stringContaining('changed since @Codertocat approved it'),
        }),
      ]);
      expect(github.statuses.filter((s) => s.sha === head && s.context === 'consort/gate/merge')).toEqual([
        expect.objectContaining({ state: 'pending' }),
      ]);
    },
    SLOW,
  );
});
