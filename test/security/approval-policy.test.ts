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
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runOnPullRequest, type PullRequestAsk } from '../../src/lanes/tdd/index.js';
import { uncountedApproval } from '../../src/lanes/tdd/pull-request.js';
import { approveModePorts } from '../helpers/approve-mode.js';
import { startFakeGitHub, postedText, type FakeGitHub } from '../helpers/fake-github.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
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
  await writeFile(
    path.join(author, 'consort.config.json'),
    JSON.stringify({ gates: { approvers: ['mona'] }, migrations: { timeout: '20m' } }),
  );
  await git(author, 'add', '-A');
  await git(author, 'commit', '-qm', 'base');
  baseSha = await git(author, 'rev-parse', 'HEAD');
  // The pull request grants itself everything.
  await git(author, 'checkout', '-qb', 'phones');
  await writeFile(
    path.join(author, 'consort.config.json'),
    JSON.stringify({
      gates: { approvers: ['octocat'], selfApproval: true, mode: 'proxy' },
      // Nor lift the limit on building the lane's baseline.
      migrations: { timeout: '24h' },
    }),
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

function ports() {
  return approveModePorts({ workspace, runnerTemp: dir, apiUrl: github.url, owner: OWNER, repo: REPO }, TOKEN);
}

const approve = (login: string): PullRequestAsk => {
  const comment = github.seed({ issue: 7, body: '/consort approve spec', user: { login, id: 5, type: 'User' } });
  return { kind: 'approve', pr: 7, gate: 'spec', actor: { login, type: 'User' }, commentId: comment.id };
};
const replies = () => github.comments.filter((c) => c.user.type === 'Bot').map((c) => postedText(c.body));
const head = () => git(workspace, 'rev-parse', 'HEAD');

it("reads who may approve, the gate mode and the baseline's limit from the base branch's commit, not the branch the runner checked out", async () => {
  const p = await ports();
  const pull = await p.github.pull({ owner: OWNER, repo: REPO }, 7);
  expect(await p.policy(pull)).toEqual({
    approvers: ['mona'],
    selfApproval: false,
    gateMode: 'human',
    migrationsTimeout: '20m',
  });
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
  expect(replies()).toEqual(['@mona, no feature on this branch is waiting at the spec gate, so nothing was approved.']);
  expect(github.statuses).toEqual([]);
});

it("counts an approval written into the branch's gates.json only when the Action could have recorded it", async () => {
  const p = await ports();
  const pull = await p.github.pull({ owner: OWNER, repo: REPO }, 7);
  const policy = await p.policy(pull);
  const [SPEC, SPEC2, MERGE] = ['sha256:' + '1'.repeat(64), 'sha256:' + '2'.repeat(64), 'sha256:' + '3'.repeat(64)];
  const bot = { login: 'github-actions[bot]', id: 41898282, type: 'Bot' as const };
  const person = (login: string) => ({ login, id: 6, type: 'User' as const });
  const announce = (gate: string, hash: string) =>
    github.seed({ issue: 7, body: `<!-- consort:gate ${gate} ${hash} -->\n### ⏸ Gate \`${gate}\``, user: bot });
  github.seed({ issue: 7, body: '/consort approve spec', user: person('mona') }); // before any announcement
  announce('spec', SPEC);
  github.seed({ issue: 7, body: '/consort approve spec', user: person('mona') });
  // A person quoting the marker announces nothing.
  github.seed({ issue: 7, body: `<!-- consort:gate merge ${MERGE} -->`, user: person('octocat') });
  github.seed({ issue: 7, body: '/consort approve merge', user: person('lee') });
  github.seed({ issue: 7, body: '/consort approve', user: person('lee') });
  github.seed({ issue: 7, body: 'LGTM, /consort approve merge later', user: person('mona') });
  announce('spec', SPEC2); // the artifacts changed after mona approved
  announce('merge', MERGE);
  github.seed({ issue: 7, body: '/consort approve merge', user: person('octocat') });
  github.seed({ issue: 7, body: '/consort approve merge', user: person('grace') });
  github.permissions.set('grace', 'read');
  // mona's comment, edited afterwards (by her, or by anyone with write access: REST does not say who).
  const edited = github.seed({ issue: 7, body: 'LGTM', user: person('mona') });
  edited.body = '/consort approve merge';
  edited.updated_at = new Date(Date.parse(edited.created_at) + 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const comments = await p.github.listComments({ owner: OWNER, repo: REPO }, 7);
  const judge = (gate: string, approver: string, hash: string, proxy = false) =>
    uncountedApproval(p.github, { owner: OWNER, repo: REPO }, pull, policy, gate, { approver, proxy, hash }, comments);
  expect(await judge('spec', 'mona', SPEC)).toBeUndefined(); // as the Action records it
  expect(await judge('spec', 'Mona', SPEC)).toBeUndefined();
  // Written by whoever pushed to the branch:
  expect(await judge('spec', 'mona', SPEC2)).toBe(
    "@mona's /consort approve spec on #7 was not given on these artifacts (sha256:22222222…, not the gate as announced before it)",
  );
  expect(await judge('merge', 'mona', MERGE)).toBe(
    "@mona's /consort approve merge on #7 was edited (an edited comment carries no command)",
  );
  expect(await judge('merge', 'grace', MERGE)).toBe('@grace has read access');
  expect(await judge('merge', 'hubot', MERGE)).toBe('@hubot left no /consort approve merge on #7');
  // lee's named command came before the merge gate was announced (the marker octocat wrote is no announcement); the unnamed one names nothing.
  expect(await judge('merge', 'lee', MERGE)).toBe(
    "@lee's /consort approve merge on #7 was not given on these artifacts (sha256:33333333…, not the gate as announced before it)",
  );
  expect(await judge('spec', 'lee', SPEC2)).toBe('@lee left no /consort approve spec on #7');
  expect(await judge('merge', 'octocat', MERGE)).toMatch(/^the author of a pull request may not approve its gates/);
  expect(await judge('merge', 'proxy', MERGE, true)).toBe("a proxy's, and the base branch's gates.mode is human");
  expect(
    await uncountedApproval(
      p.github,
      { owner: OWNER, repo: REPO },
      pull,
      { ...policy, gateMode: 'proxy' },
      'merge',
      { approver: 'proxy', proxy: true, hash: MERGE },
      comments,
    ),
  ).toBeUndefined();
  github.permissions.delete('grace');
});
