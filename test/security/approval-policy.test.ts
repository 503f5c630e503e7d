/**
 * A pull request cannot approve its own gates by changing the configuration it carries. The
 * Action's TDD lane (src/action/ports.ts → src/lanes/tdd/pull-request.ts) reads `gates.approvers`,
 * `gates.selfApproval` and `gates.mode` from the pull request's base branch as committed — fetched
 * from origin and read with git — never from the branch under review, and not from whatever the
 * workflow checked out: here the runner's checkout is the pull request's own head (as a label's
 * run checks out the merge commit), whose configuration lets its author approve and turns proxy
 * mode on. Played with the Action's real ports against a local stand-in for GitHub's REST API and
 * a bare repository as `origin`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ActionContext } from '../../src/action/context.js';
import { INPUT, parseInputs } from '../../src/action/inputs.js';
import { tddPorts } from '../../src/action/ports.js';
import { runOnPullRequest, type PullRequestAsk } from '../../src/lanes/tdd/index.js';
import { uncountedApproval } from '../../src/lanes/tdd/pull-request.js';
import { startFakeGitHub, type FakeGitHub } from '../helpers/fake-github.js';

const exec = promisify(execFile);
const git = async (cwd: string, ...args: string[]) =>
  (
    await exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd })
  ).stdout.trim();
const OWNER = 'Codertocat';
const REPO = 'Hello-World';
const TOKEN = `ghs_${'p0L1c'.repeat(7)}z`;

let github: FakeGitHub;
let dir: string;
let workspace: string;
let baseSha: string;
let headSha: string;

beforeAll(async () => {
  github = await startFakeGitHub(OWNER, REPO);
  dir = await mkdtemp(path.join(os.tmpdir(), 'consort-approval-policy-'));
  const author = path.join(dir, 'author');
  await exec('git', ['init', '-q', '-b', 'main', author]);
  // The base: only mona approves, a person always (the defaults for the rest).
  await writeFile(path.join(author, 'consort.config.json'), JSON.stringify({ gates: { approvers: ['mona'] } }));
  await git(author, 'add', '-A');
  await git(author, 'commit', '-qm', 'base');
  baseSha = await git(author, 'rev-parse', 'HEAD');
  // The pull request grants itself everything.
  await git(author, 'checkout', '-qb', 'phones');
  await writeFile(
    path.join(author, 'consort.config.json'),
    JSON.stringify({ gates: { approvers: ['octocat'], selfApproval: true, mode: 'proxy' } }),
  );
  await git(author, 'commit', '-qam', 'let me approve my own gates');
  headSha = await git(author, 'rev-parse', 'HEAD');
  const origin = path.join(dir, 'origin.git');
  await exec('git', ['clone', '-q', '--bare', author, origin]);
  // The runner's checkout: the pull request's head, with the base branch not fetched at all.
  workspace = path.join(dir, 'workspace');
  await exec('git', ['clone', '-q', '--single-branch', '--branch', 'phones', origin, workspace]);
  github.setPull({
    number: 7,
    state: 'open',
    title: 'Phones',
    body: null,
    author: 'octocat',
    head: { ref: 'phones', sha: headSha, repo: `${OWNER}/${REPO}` },
    base: { ref: 'main', sha: baseSha },
  });
  github.permissions.set('octocat', 'admin').set('mona', 'write').set('lee', 'write');
});

afterAll(async () => {
  await github?.close();
  await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  github.comments.length = 0;
  github.reactions.length = 0;
  github.statuses.length = 0;
});
afterEach(() => expect(github.unexpected).toEqual([]));

async function ports() {
  const given: Partial<Record<string, string>> = { [INPUT.mode]: 'approve', [INPUT.githubToken]: TOKEN };
  const inputs = parseInputs((name) => given[name] ?? '');
  const ctx: ActionContext = {
    eventName: 'issue_comment',
    event: { kind: 'other', name: 'issue_comment' },
    workspace,
    repo: { owner: OWNER, repo: REPO },
    runnerTemp: dir,
    apiUrl: github.url,
    serverUrl: 'https://github.com',
    runUrl: undefined,
    stepSummary: undefined,
  };
  return tddPorts(inputs, ctx, TOKEN, new AbortController().signal);
}

const approve = (login: string): PullRequestAsk => {
  const comment = github.seed({ issue: 7, body: '/consort approve', user: { login, id: 5, type: 'User' } });
  return { kind: 'approve', pr: 7, gate: null, actor: { login, type: 'User' }, commentId: comment.id };
};
const replies = () => github.comments.filter((c) => c.user.type === 'Bot').map((c) => c.body);
const head = () => git(workspace, 'rev-parse', 'HEAD');

it("reads who may approve, and the gate mode, from the base branch's commit, not the branch the runner checked out", async () => {
  const p = await ports();
  const pull = await p.github.pull({ owner: OWNER, repo: REPO }, 7);
  expect(await p.policy(pull)).toEqual({ approvers: ['mona'], selfApproval: false, gateMode: 'human' });
});

it('refuses the author approving their own gates, though the pull request says gates.selfApproval: true', async () => {
  expect(await runOnPullRequest(await ports(), approve('octocat'))).toEqual({
    kind: 'refused',
    why: expect.stringContaining('the author of a pull request may not approve its gates'),
  });
  expect(github.reactions.map((r) => r.content)).toEqual(['confused']);
  expect(github.statuses).toEqual([]);
  expect(await head()).toBe(headSha); // nothing checked out, committed or pushed
});

it("refuses someone the pull request lists but the base does not, and lets the base's approver go ahead", async () => {
  expect(await runOnPullRequest(await ports(), approve('lee'))).toMatchObject({ kind: 'refused' });
  expect(replies()).toEqual([
    '@lee, only the approvers gates.approvers names may approve gates (mona), so nothing was approved.',
  ]);
  // mona, named by the base: the lane goes ahead (👀, the branch checked out) and finds no gate waiting.
  github.comments.length = 0;
  expect(await runOnPullRequest(await ports(), approve('mona'))).toMatchObject({ kind: 'answered' });
  expect(github.reactions.map((r) => r.content)).toEqual(['confused', 'eyes']);
  expect(replies()).toEqual(['@mona, no feature on this branch is waiting at a gate, so nothing was approved.']);
  expect(github.statuses).toEqual([]);
});

it("counts an approval written into the branch's gates.json only when the Action could have recorded it", async () => {
  const p = await ports();
  const pull = await p.github.pull({ owner: OWNER, repo: REPO }, 7);
  const policy = await p.policy(pull);
  github.seed({ issue: 7, body: '/consort approve spec', user: { login: 'mona', id: 6, type: 'User' } });
  github.seed({ issue: 7, body: 'LGTM, /consort approve merge later', user: { login: 'mona', id: 6, type: 'User' } });
  github.seed({ issue: 7, body: '/consort approve', user: { login: 'lee', id: 7, type: 'User' } });
  github.seed({ issue: 7, body: '/consort approve merge', user: { login: 'octocat', id: 8, type: 'User' } });
  const comments = await p.github.listComments({ owner: OWNER, repo: REPO }, 7);
  const judge = (gate: string, approver: string, proxy = false) =>
    uncountedApproval(p.github, pull, policy, gate, { approver, proxy }, comments);
  expect(await judge('spec', 'mona')).toBeUndefined(); // as the Action records it
  expect(await judge('spec', 'Mona')).toBeUndefined();
  // Written by whoever pushed to the branch:
  expect(await judge('merge', 'mona')).toBe('@mona gave no /consort approve for it on #7');
  expect(await judge('merge', 'grace')).toBe('@grace gave no /consort approve for it on #7');
  expect(await judge('merge', 'lee')).toBe('only the approvers gates.approvers names may approve gates (mona)');
  expect(await judge('merge', 'octocat')).toMatch(/^the author of a pull request may not approve its gates/);
  expect(await judge('merge', 'proxy', true)).toBe("a proxy's, and the base branch's gates.mode is human");
  expect(
    await uncountedApproval(
      p.github,
      pull,
      { ...policy, gateMode: 'proxy' },
      'merge',
      { approver: 'proxy', proxy: true },
      comments,
    ),
  ).toBeUndefined();
});
