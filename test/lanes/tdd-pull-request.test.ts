/**
 * The TDD lane's pull-request workflow up to the point where it would check out the branch: the
 * pure `decide` (who may do what, table-tested), and `runOnPullRequest` against the local GitHub
 * stand-in through the real Octokit — refusals answer on the pull request and never touch the
 * branch; a permitted request goes ahead (here: to the checkout, which the test stops).
 * The lane's run itself is tested end to end by test/action/dist-build.test.ts.
 */
import { type ApprovalPolicy, approvalRefusal } from '../../src/conductor/gates.js';
import { createOctokitClient } from '../../src/github/client.js';
import { REFUSAL, replyText } from '../../src/github/command-reply.js';
import { octokitGitHub } from '../../src/github/octokit.js';
import {
  type Access,
  decide,
  type PullRequestAsk,
  type PullRequestPorts,
  runOnPullRequest,
} from '../../src/lanes/tdd/index.js';
import type { PullRequest } from '../../src/ports/github.js';
import { startFakeGitHub, postedText, type FakeGitHub } from '../helpers/fake-github.js';

const OWNER = 'octo-org';
const REPO = 'shop';
const SHA = 'a'.repeat(40);
const OPEN: PullRequest = {
  number: 7,
  state: 'open',
  title: 'Phones',
  body: '',
  author: 'octocat',
  head: { ref: 'phones', sha: SHA, repo: `${OWNER}/${REPO}` },
  base: { ref: 'main', sha: 'b'.repeat(40), repo: `${OWNER}/${REPO}` },
};
const DEFAULT_POLICY: ApprovalPolicy = { approvers: [], selfApproval: false };
const user = (login: string) => ({ login, type: 'User' });
const approve = (login: string, commentId = 11): PullRequestAsk => ({
  kind: 'approve',
  pr: 7,
  gate: 'spec',
  actor: user(login),
  commentId,
});
const build = (login: string, via: 'comment' | 'label' = 'comment'): PullRequestAsk => ({
  kind: 'build',
  pr: 7,
  feature: 'phones',
  request: null,
  actor: user(login),
  commentId: via === 'comment' ? 11 : null,
  via,
});
const writer: Access = { permission: 'write', teams: [] };

describe('decide', () => {
  it.each<[string, PullRequestAsk, Access, PullRequest, ApprovalPolicy, ReturnType<typeof decide>]>([
    [
      'a bot',
      { ...build('x'), actor: { login: 'renovate[bot]', type: 'Bot' } },
      writer,
      OPEN,
      DEFAULT_POLICY,
      { kind: 'ignore', why: 'renovate[bot] is a bot' },
    ],
    [
      'read access, by comment',
      build('mallory'),
      { permission: 'read', teams: [] },
      OPEN,
      DEFAULT_POLICY,
      { kind: 'refuse', why: 'mallory has read access; the TDD lane needs write access', answer: 'refusal' },
    ],
    [
      'read access, by label (no comment to answer)',
      build('mallory', 'label'),
      { permission: 'triage', teams: [] },
      OPEN,
      DEFAULT_POLICY,
      { kind: 'refuse', why: 'mallory has triage access; the TDD lane needs write access', answer: null },
    ],
    [
      'a closed pull request',
      build('mona'),
      writer,
      { ...OPEN, state: 'closed' },
      DEFAULT_POLICY,
      { kind: 'refuse', why: '#7 is closed', answer: '#7 is closed, so the TDD lane did not run.' },
    ],
    [
      'a fork',
      build('mona'),
      writer,
      { ...OPEN, head: { ...OPEN.head, repo: 'mallory/shop' } },
      DEFAULT_POLICY,
      {
        kind: 'refuse',
        why: 'the pull request comes from a fork',
        answer: expect.stringContaining('comes from a fork'),
      },
    ],
    ['a build by the author', build('octocat'), writer, OPEN, DEFAULT_POLICY, { kind: 'proceed' }],
    [
      'an approval that names no gate (it would stand for whichever gate is waiting)',
      { kind: 'approve', pr: 7, gate: null, actor: user('mona'), commentId: 11 },
      writer,
      OPEN,
      DEFAULT_POLICY,
      {
        kind: 'refuse',
        why: '/consort approve names no gate',
        answer:
          'name the gate you approve (`/consort approve <gate>`, as its announcement says), so nothing was approved.',
      },
    ],
    [
      'an approval by someone else with write access',
      approve('mona'),
      writer,
      OPEN,
      DEFAULT_POLICY,
      { kind: 'proceed' },
    ],
    [
      'the author approving their own gate (default)',
      approve('OctoCat'),
      writer,
      OPEN,
      DEFAULT_POLICY,
      {
        kind: 'refuse',
        why: expect.stringMatching(
          /^the author of a pull request may not approve its gates \(gates\.selfApproval is off\)/,
        ),
        answer: expect.stringMatching(/so nothing was approved\.$/),
      },
    ],
    [
      'the author approving with gates.selfApproval on',
      approve('octocat'),
      writer,
      OPEN,
      { approvers: [], selfApproval: true },
      { kind: 'proceed' },
    ],
    [
      'a listed approver',
      approve('Mona'),
      writer,
      OPEN,
      { approvers: ['mona'], selfApproval: false },
      { kind: 'proceed' },
    ],
    [
      'a member of a listed team',
      approve('kim'),
      { permission: 'maintain', teams: ['octo-org/reviewers'] },
      OPEN,
      { approvers: ['mona', 'octo-org/reviewers'], selfApproval: false },
      { kind: 'proceed' },
    ],
    [
      'someone not listed',
      approve('kim'),
      writer,
      OPEN,
      { approvers: ['mona', 'octo-org/reviewers'], selfApproval: false },
      {
        kind: 'refuse',
        why: 'only the approvers gates.approvers names may approve gates (mona, octo-org/reviewers)',
        answer: expect.any(String),
      },
    ],
    [
      'a listed author, self-approval off',
      approve('octocat'),
      writer,
      OPEN,
      { approvers: ['octocat'], selfApproval: false },
      { kind: 'refuse', why: expect.stringContaining('author'), answer: expect.any(String) },
    ],
    [
      'the approver list does not limit builds',
      build('kim'),
      writer,
      OPEN,
      { approvers: ['mona'], selfApproval: false },
      { kind: 'proceed' },
    ],
  ])('%s', (_label, request, access, pull, policy, expected) => {
    expect(decide(request, access, pull, policy)).toEqual(expected);
  });

  it('approvalRefusal: with no approvers listed and self-approval on, anyone with write access may approve', () => {
    expect(
      approvalRefusal({ approvers: [], selfApproval: true }, { login: 'octocat', teams: [] }, 'octocat'),
    ).toBeUndefined();
    expect(approvalRefusal(DEFAULT_POLICY, { login: 'mona', teams: [] }, null)).toBeUndefined();
  });
});

describe('runOnPullRequest, before the branch', () => {
  let github: FakeGitHub;
  const checkouts: string[] = [];
  const warnings: string[] = [];
  const STOP = new Error('the test stops at the checkout');

  beforeAll(async () => {
    github = await startFakeGitHub(OWNER, REPO);
    github.setPull({
      number: 7,
      state: 'open',
      title: 'Phones',
      body: null,
      head: { ref: 'phones', sha: SHA, repo: `${OWNER}/${REPO}` },
      base: { ref: 'main', sha: 'b'.repeat(40) },
    });
    github.permissions.set('octocat', 'write').set('mona', 'write').set('kim', 'maintain').set('reader', 'read');
    // GET /orgs/{org}/teams/{team_slug}/memberships/{username}: kim is in octo-org/reviewers.
    github.routes.push((req) => {
      const m = /^\/orgs\/([^/]+)\/teams\/([^/]+)\/memberships\/([^/]+)$/.exec(req.path);
      if (!m || req.method !== 'GET') return undefined;
      return m[1] === 'octo-org' && m[2] === 'reviewers' && m[3] === 'kim'
        ? {
            status: 200,
            body: { url: `${github.url}/organizations/1/team/2/memberships/kim`, role: 'member', state: 'active' },
          }
        : { status: 404, body: { message: 'Not Found' } };
    });
  });
  afterAll(async () => {
    await github?.close();
  });
  beforeEach(() => {
    checkouts.length = 0;
    warnings.length = 0;
    github.comments.length = 0;
    github.reactions.length = 0;
    github.unexpected.length = 0;
  });
  afterEach(() => {
    expect(github.unexpected).toEqual([]);
  });
  /** The command's comment (reactions need it, as on GitHub). */
  const asked = (login: string) =>
    approve(login, github.seed({ issue: 7, body: '/consort approve spec', user: { login, id: 5, type: 'User' } }).id);
  const replies = () => github.comments.filter((c) => c.user.type === 'Bot').map((c) => postedText(c.body));
  const reacted = () => github.reactions.map((r) => r.content);

  const noAgent = (): never => {
    throw new Error('no agent is built before the checkout');
  };
  const noGit = (): never => {
    throw new Error('git is not read before the checkout');
  };
  const ports = (policy: ApprovalPolicy): PullRequestPorts => ({
    // Unpaced: GitHub's spacing between writes is test/github/octokit.test.ts's, here it only waited.
    github: octokitGitHub(createOctokitClient({ token: 'ghs_test', apiUrl: github.url, writePacing: 'none' })),
    repo: { owner: OWNER, repo: REPO },
    workspace: '/nonexistent',
    workspaces: {
      open: async () => {
        throw new Error('no workspace is opened before the checkout');
      },
    },
    processes: {
      run: async () => {
        throw new Error('nothing is started before the checkout');
      },
    },
    agents: { command: noAgent, openai: noAgent, claude: noAgent, codex: noAgent },
    // Any method of the GitRepo port throws.
    git: new Proxy({} as PullRequestPorts['git'], { get: () => noGit }),
    migrations: {
      apply: async () => {
        throw new Error('no migration runs before the checkout');
      },
      open: () => {
        throw new Error('no migration runs before the checkout');
      },
      resolveEngine: async () => {
        throw new Error('no migration runs before the checkout');
      },
    },
    schemas: {
      snapshot: async () => {
        throw new Error('no schema is read before the checkout');
      },
      relations: async () => {
        throw new Error('no schema is read before the checkout');
      },
    },
    policy: async () => ({ ...policy, gateMode: 'human' }),
    remote: {
      checkout: async (ref) => {
        checkouts.push(ref);
        throw STOP;
      },
      push: async () => {
        throw new Error('nothing is pushed before the checkout');
      },
    },
    configure: async () => {
      throw new Error('not configured before the checkout');
    },
    environment: () => ({ env: {}, agentEnv: {} }),
    budgets: { maxTurns: 1, timeLimitMs: 1_000 },
    log: { info: () => undefined, warning: (m) => void warnings.push(m) },
    scrub: (t) => t,
    links: { repoUrl: `https://github.com/${OWNER}/${REPO}` },
  });

  it('the author approving their own gate: 😕, a reply saying why, and the branch untouched', async () => {
    expect(await runOnPullRequest(ports(DEFAULT_POLICY), asked('octocat'))).toEqual({
      kind: 'refused',
      why: expect.stringContaining('author of a pull request'),
    });
    expect(reacted()).toEqual(['confused']);
    expect(replies()).toEqual([
      expect.stringMatching(
        /^@octocat, the author of a pull request may not approve its gates .*so nothing was approved\.$/,
      ),
    ]);
    expect(checkouts).toEqual([]);
  });

  it('someone without write access gets the one refusal text', async () => {
    expect(await runOnPullRequest(ports(DEFAULT_POLICY), asked('reader'))).toMatchObject({ kind: 'refused' });
    expect(reacted()).toEqual(['confused']);
    expect(replies()).toEqual([replyText('reader', '/consort approve spec', REFUSAL)]);
    expect(warnings).toEqual(['Nothing was done: reader has read access; the TDD lane needs write access.']);
    expect(checkouts).toEqual([]);
  });

  it('gates.approvers: a team member goes ahead (👀, then the checkout); someone else with write access is refused', async () => {
    const policy = { approvers: ['mona', 'octo-org/reviewers'], selfApproval: false };
    await expect(runOnPullRequest(ports(policy), asked('kim'))).rejects.toBe(STOP);
    expect(reacted()).toEqual(['eyes']);
    expect(checkouts).toEqual(['phones']);
    github.permissions.set('lee', 'admin');
    expect(await runOnPullRequest(ports(policy), asked('lee'))).toMatchObject({ kind: 'refused' });
    expect(replies().at(-1)).toBe(
      '@lee, only the approvers gates.approvers names may approve gates (mona, octo-org/reviewers), so nothing was approved.',
    );
    expect(checkouts).toEqual(['phones']);
  });
});
