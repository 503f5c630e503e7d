/**
 * An approval written into a pull request's branch does not move the TDD lane. The Action's build
 * and approve modes, from source (src/action/modes/build.ts with the Action's own ports), on the
 * example shop as a pull request against a local stand-in for GitHub's REST API and a bare
 * repository as `origin`, with scripted agents (the `command` backend) and the quick suite:
 *
 * 1. `/consort build` designs the feature up to the spec gate, which the Action announces.
 * 2. Someone who can push writes an approval of exactly those artifacts into gates.json, naming a
 *    person who may approve and who did comment `/consort approve spec` — before the gate was
 *    announced. The next `/consort build` waits at the gate (no turn runs), events.jsonl says why
 *    and the gate's status is pending with the reason.
 * 3. That person's `/consort approve spec`, after the announcement, lets the lane through.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ActionContext } from '../../src/action/context.js';
import { INPUT, parseInputs } from '../../src/action/inputs.js';
import { approveMode, buildMode } from '../../src/action/modes/build.js';
import { EmbeddedServer } from '../../src/branches/local/server.js';
import type { ScenarioRepo } from '../../src/demo/scenarios.js';
import { issueCommentContext } from '../helpers/approve-mode.js';
import { startFakeGitHub, postedText, type FakeGitHub } from '../helpers/fake-github.js';
import { ownDataDir } from '../helpers/servers.js';
import { shopRepoWithAgent } from '../helpers/shop-agent.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
const TOKEN = `ghs_${'aPpR0'.repeat(7)}z`;
const MODEL_KEY = 'sk-ant-api03-NotARealKeyButLongEnough-0123456789';
const OWNER = 'Codertocat';
const REPO = 'Hello-World';
const PR = 7;
const FEATURE = '001-customer-phones';
const AGENT_SOURCE = fileURLToPath(new URL('../fixtures/agents/pr-agent.mjs', import.meta.url));
const SLOW = 300_000;

let github: FakeGitHub;
let repo: ScenarioRepo;
let origin: string;
let dataDir: string;
let agentDir: string;
let savedDataDir: string | undefined;
/** Codertocat's `/consort approve spec`, written before the gate was announced. */
let early: { id: number; body: string };
/** When the approval written into the branch says it was given. */
let writtenAt: string;

const git = async (cwd: string, ...args: string[]) =>
  (
    await exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd })
  ).stdout.trim();

beforeAll(async () => {
  agentDir = await mkdtemp(path.join(os.tmpdir(), 'consort-approval-agent-'));
  const agent = path.join(agentDir, 'pr-agent.mjs');
  await writeFile(agent, await readFile(AGENT_SOURCE));
  [github, repo] = await Promise.all([
    startFakeGitHub(OWNER, REPO),
    shopRepoWithAgent(agent, 'build:\n  turnTimeout: 2m\n', 'quick'),
  ]);
  dataDir = await ownDataDir();
  savedDataDir = process.env.CONSORT_DATA_DIR;
  process.env.CONSORT_DATA_DIR = dataDir; // the provider reads it by name, as on a runner
  origin = path.join(await mkdtemp(path.join(os.tmpdir(), 'consort-approval-origin-')), 'Hello-World.git');
  await exec('git', ['clone', '-q', '--bare', repo.dir, origin]);
  // The base branch: the scenario's other branch (whatever git init named it).
  const baseBranch = (await git(repo.dir, 'for-each-ref', '--format=%(refname:short)', 'refs/heads'))
    .split('\n')
    .find((b) => b !== 'change')!;
  await git(repo.dir, 'remote', 'add', 'origin', origin);
  await git(repo.dir, 'checkout', '-q', repo.baseSha);
  await git(repo.dir, 'branch', '-D', 'change');
  github.setPull({
    number: PR,
    state: 'open',
    title: 'Customer phone numbers',
    body: 'Customers want to leave a phone number.',
    author: 'octocat',
    head: { ref: 'change', sha: repo.headSha, repo: `${OWNER}/${REPO}` },
    base: { ref: baseBranch, sha: repo.baseSha },
  });
  github.permissions.set('Codertocat', 'admin').set('octocat', 'write');
}, 120_000);

afterAll(async () => {
  if (savedDataDir === undefined) delete process.env.CONSORT_DATA_DIR;
  else process.env.CONSORT_DATA_DIR = savedDataDir;
  if (dataDir) {
    await new EmbeddedServer(dataDir).stop();
    await rm(dataDir, { recursive: true, force: true });
  }
  if (origin) await rm(path.dirname(origin), { recursive: true, force: true });
  if (agentDir) await rm(agentDir, { recursive: true, force: true });
  await Promise.all([github?.close(), repo?.dispose()]);
});

afterEach(() => expect(github.unexpected).toEqual([]));

/** A person's comment on the pull request, and the event it raises. */
function comment(body: string, login = 'Codertocat'): ActionContext['event'] {
  const c = github.seed({ issue: PR, body, user: { login, id: 5000 + login.length, type: 'User' } });
  return {
    kind: 'issue_comment',
    action: 'created',
    number: PR,
    pullRequest: true,
    comment: { id: c.id, body, user: { login, type: 'User' } },
  };
}

async function run(mode: 'build' | 'approve', event: ActionContext['event'], more: Record<string, string> = {}) {
  const given: Partial<Record<string, string>> = {
    [INPUT.mode]: mode,
    [INPUT.githubToken]: TOKEN,
    [INPUT.githubWritePacing]: 'none',
    [INPUT.anthropicApiKey]: MODEL_KEY,
    ...more,
  };
  const inputs = parseInputs((name) => given[name] ?? '');
  const ctx = issueCommentContext({
    workspace: repo.dir,
    runnerTemp: agentDir,
    apiUrl: github.url,
    owner: OWNER,
    repo: REPO,
    event,
  });
  return (mode === 'build' ? buildMode : approveMode)(inputs, ctx);
}

const originHead = () => git(origin, 'rev-parse', 'refs/heads/change');
const onOrigin = async <T>(file: string): Promise<T> =>
  JSON.parse(await git(origin, 'show', `refs/heads/change:.consort/features/${FEATURE}/${file}`)) as T;
const specStatuses = () => github.statuses.filter((s) => s.context === 'consort/gate/spec');

interface State {
  state: { step: string; gate: string | null; phase: string; surfaced: Record<string, string> };
}

describe('an approval written into the branch (the Action from source)', () => {
  it(
    'does not move the lane: it waits at the gate, the record says why and the status is pending with the reason',
    async () => {
      // Codertocat approves early, before there is anything to approve (nothing answers it here).
      early = github.seed({
        issue: PR,
        body: '/consort approve spec',
        user: { login: 'Codertocat', id: 5010, type: 'User' },
      });
      expect(await run('build', comment('/consort build customer-phones'))).toEqual({ conclusion: 'success' });
      const designed = await onOrigin<State>('state.json');
      expect(designed.state).toMatchObject({ step: 'awaiting-approval', gate: 'spec' });
      const hash = designed.state.surfaced.spec!;
      expect(github.comments.at(-1)!.body).toContain(`<!-- consort:gate spec ${hash} -->`);

      // octocat, who can push, writes Codertocat's approval of exactly these artifacts into the branch.
      await git(repo.dir, 'fetch', '-q', origin, 'change');
      await git(repo.dir, 'checkout', '-q', '-B', 'change', 'FETCH_HEAD');
      const gatesFile = path.join(repo.dir, '.consort', 'features', FEATURE, 'gates.json');
      writtenAt = new Date().toISOString();
      const approval = { approver: 'Codertocat', at: writtenAt, hash, proxy: false };
      await writeFile(
        gatesFile,
        `${JSON.stringify({ version: 1, feature: FEATURE, gates: { spec: { approval, history: [approval] } } }, null, 2)}\n`,
      );
      await git(repo.dir, 'commit', '-qam', 'approve the spec');
      await git(repo.dir, 'push', '-q', origin, 'HEAD:refs/heads/change');
      const pushed = await originHead();
      github.setPull({ ...github.pulls.get(PR)!, head: { ref: 'change', sha: pushed, repo: `${OWNER}/${REPO}` } });
      const reviews = github.reviews.length;

      expect(await run('build', comment(`/consort build ${FEATURE}`))).toEqual({ conclusion: 'success' });
      // No turn ran: the feature still waits at the spec gate.
      expect(github.reviews.length).toBe(reviews);
      expect((await onOrigin<State>('state.json')).state).toMatchObject({ step: 'awaiting-approval', gate: 'spec' });
      const reason = `@Codertocat's /consort approve spec on #${PR} was not given on these artifacts (${hash.slice(0, 15)}…, not the gate as announced before it)`;
      const events = (await git(origin, 'show', `refs/heads/change:.consort/features/${FEATURE}/events.jsonl`))
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string });
      expect(events.filter((e) => e.type === 'gate.approval-ignored')).toEqual([
        expect.objectContaining({ gate: 'spec', hash, approver: 'Codertocat', reason }),
      ]);
      const head = await originHead();
      expect(specStatuses().filter((s) => s.sha === head)).toEqual([
        expect.objectContaining({
          state: 'pending',
          description: `not approved: ${reason}; waiting for /consort approve spec`.slice(0, 140),
        }),
      ]);
      expect(specStatuses().some((s) => s.state === 'success')).toBe(false);
    },
    SLOW,
  );

  it(
    "goes past the gate on the approver's /consort approve spec made after the announcement, not on the one before it",
    async () => {
      // The early command, run only now (a delayed workflow): it approves nothing.
      const before = await originHead();
      const answered = await run('approve', {
        kind: 'issue_comment',
        action: 'created',
        number: PR,
        pullRequest: true,
        comment: { id: early.id, body: early.body, user: { login: 'Codertocat', type: 'User' } },
      });
      expect(answered).toEqual({ conclusion: 'success' });
      expect(postedText(github.comments.at(-1)!.body)).toBe(
        '@Codertocat, the spec gate was not announced on this pull request before your comment, so nothing was approved: approve it after its announcement.',
      );
      expect(await originHead()).toBe(before);
      expect(specStatuses().some((s) => s.state === 'success')).toBe(false);

      const reviews = github.reviews.length;
      expect(await run('approve', comment('/consort approve spec'), { [INPUT.maxTurns]: '1' })).toEqual({
        conclusion: 'success',
      });
      const { state } = await onOrigin<State>('state.json');
      expect(state.phase).not.toBe('design');
      expect(github.reviews.slice(reviews).map((v) => /### \S+ `([a-z-]+)` · ([a-z]+)/.exec(v.body)!.slice(1))).toEqual(
        [['navigator', 'red']],
      );
      const head = await originHead();
      expect(specStatuses().filter((s) => s.sha === head)).toEqual([
        expect.objectContaining({ state: 'success', description: 'approved by @Codertocat' }),
      ]);
      const gates = await onOrigin<{
        gates: { spec: { approval: { approver: string; at: string }; history: unknown[] } };
      }>('gates.json');
      expect(gates.gates.spec.approval.approver).toBe('Codertocat');
      // The approval in the branch was Codertocat's of these artifacts (as the App's dashboard commits
      // it before posting the comment): the command found it recorded and did not write it twice.
      expect(gates.gates.spec.history).toEqual([gates.gates.spec.approval]);
      expect(gates.gates.spec.approval.at).toBe(writtenAt);
    },
    SLOW,
  );
});
