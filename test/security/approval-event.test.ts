/**
 * The Action's approve mode reads who asked and what they asked from the workflow's event file
 * (GITHUB_EVENT_PATH), which any earlier step of the job can rewrite — and a workflow run on a
 * branch's own `pull_request` event runs that branch's workflow file. The event only points at a
 * comment: the approval is the comment as GitHub has it, by the person it names, carrying the
 * command. A forged event that names an approver and points at someone else's comment (or at the
 * approver's comment that approves nothing) records no approval, sets no status and runs no lane.
 * And the gate's announcement binds an approval to artifacts only as the Action posted it: one
 * edited since (anyone with write access may edit a bot's comment) announces nothing.
 * Played with the Action's real ports (src/action/ports.ts) against the stand-in for GitHub's REST
 * API and a bare repository as `origin`, on a feature waiting at its spec gate.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readGate } from '../../src/lanes/tdd/gate-check.js';
import { runOnPullRequest, type PullRequestAsk } from '../../src/lanes/tdd/index.js';
import { uncountedApproval } from '../../src/lanes/tdd/pull-request.js';
import { FeatureStore } from '../../src/lanes/tdd/store.js';
import { addGatedFeature } from '../dashboard/fixture.js';
import { approveModePorts } from '../helpers/approve-mode.js';
import { startFakeGitHub, type FakeGitHub } from '../helpers/fake-github.js';
import { execFileAsync } from '../helpers/exec-file.js';
import { workspaceAt } from '../helpers/tdd.js';

const exec = execFileAsync;
const git = async (cwd: string, ...args: string[]) =>
  (
    await exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd })
  ).stdout.trim();
const OWNER = 'Codertocat';
const REPO = 'Hello-World';
const TOKEN = `ghs_${'f0Rg3'.repeat(7)}z`;
const PR = 7;
const bot = { login: 'github-actions[bot]', id: 41898282, type: 'Bot' as const };
const person = (login: string) => ({ login, id: 6, type: 'User' as const });

let github: FakeGitHub;
let dir: string;
let origin: string;
let workspace: string;
let feature: string;
let hash: string;

beforeAll(async () => {
  github = await startFakeGitHub(OWNER, REPO);
  dir = await mkdtemp(path.join(os.tmpdir(), 'consort-approval-event-'));
  const author = path.join(dir, 'author');
  await exec('git', ['init', '-q', '-b', 'main', author]);
  // The base: only mona approves.
  await writeFile(path.join(author, 'consort.config.json'), JSON.stringify({ gates: { approvers: ['mona'] } }));
  await writeFile(path.join(author, 'README.md'), 'shop\n');
  await git(author, 'add', '-A');
  await git(author, 'commit', '-qm', 'base');
  const baseSha = await git(author, 'rev-parse', 'HEAD');
  await git(author, 'checkout', '-qb', 'phones');
  feature = await addGatedFeature(author);
  await git(author, 'add', '-A');
  await git(author, 'commit', '-qm', 'the design, waiting at the spec gate');
  const headSha = await git(author, 'rev-parse', 'HEAD');
  ({ hash } = (await readGate(await workspaceAt(author), new FeatureStore(author, feature), 'spec', false)).check);
  origin = path.join(dir, 'origin.git');
  await exec('git', ['clone', '-q', '--bare', author, origin]);
  workspace = path.join(dir, 'workspace');
  await exec('git', ['clone', '-q', '--branch', 'main', origin, workspace]);
  github.setPull({
    number: PR,
    state: 'open',
    title: 'Phones',
    body: null,
    author: 'octocat',
    head: { ref: 'phones', sha: headSha, repo: `${OWNER}/${REPO}` },
    base: { ref: 'main', sha: baseSha },
  });
  github.permissions.set('octocat', 'admin').set('mona', 'write').set('lee', 'write');
  // The gate as the Action announced it, then two comments after it: lee's, and mona's that approves nothing.
  github.seed({ issue: PR, body: `<!-- consort:gate spec ${hash} -->\n### ⏸ Gate \`spec\``, user: bot });
});

afterAll(async () => {
  await github?.close();
  await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  github.statuses.length = 0;
  github.reactions.length = 0;
});
afterEach(() => expect(github.unexpected).toEqual([]));

async function ports() {
  const p = await approveModePorts({ workspace, runnerTemp: dir, apiUrl: github.url, owner: OWNER, repo: REPO }, TOKEN);
  // Past the approval the lane would build: not this test's business.
  return {
    ...p,
    configure: () => Promise.reject(new Error('the lane ran on a forged approval')),
  };
}

/** The event as forged: mona asks, pointing at comment `id`. */
const forged = (id: number): PullRequestAsk => ({
  kind: 'approve',
  pr: PR,
  gate: 'spec',
  actor: { login: 'mona', type: 'User' },
  commentId: id,
});
const phonesOnOrigin = () => git(origin, 'rev-parse', 'refs/heads/phones');

it.each([
  [
    "lee's comment (lee may not approve)",
    () => github.seed({ issue: PR, body: '/consort approve spec', user: person('lee') }),
  ],
  [
    "mona's comment that approves nothing",
    () => github.seed({ issue: PR, body: 'Nearly there; I will approve tomorrow.', user: person('mona') }),
  ],
  [
    "mona's comment that approves another gate",
    () => github.seed({ issue: PR, body: '/consort approve merge', user: person('mona') }),
  ],
])(
  'an event that names mona but points at %s approves nothing',
  async (_what, write) => {
    const c = write();
    const before = await phonesOnOrigin();
    const outcome = await runOnPullRequest(await ports(), forged(c.id));
    expect(outcome).toEqual({ kind: 'refused', why: expect.stringContaining(`comment ${c.id}`) });
    expect(await phonesOnOrigin()).toBe(before);
    expect(github.statuses).toEqual([]);
    expect(github.reactions).toEqual([]);
    // Nothing is said on the pull request in mona's name.
    expect(github.comments.filter((x) => x.user.type === 'Bot').map((x) => x.body)).toEqual([
      expect.stringContaining('consort:gate spec'),
    ]);
  },
  60_000,
);

it("an announcement edited to other artifacts' hash does not bind mona's approval to them", async () => {
  // Another pull request of the same branch: the Action announced its gate with artifacts the
  // branch no longer has; someone with write access (who may edit anyone's comment) changed them
  // and the announcement's hidden marker to their hash.
  const PR2 = 8;
  github.setPull({ ...github.pulls.get(PR)!, number: PR2 });
  const announced = github.seed({
    issue: PR2,
    body: `<!-- consort:gate spec sha256:${'0'.repeat(64)} -->\n### ⏸ Gate \`spec\``,
    user: bot,
  });
  announced.body = announced.body.replace(/sha256:0+/, hash);
  announced.updated_at = new Date(Date.parse(announced.created_at) + 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const c = github.seed({ issue: PR2, body: '/consort approve spec', user: person('mona') });
  const before = await phonesOnOrigin();
  expect(await runOnPullRequest(await ports(), { ...forged(c.id), pr: PR2 })).toEqual({
    kind: 'answered',
    answer: expect.stringContaining('the spec gate was not announced on this pull request before your comment'),
  });
  expect(await phonesOnOrigin()).toBe(before);
  expect(github.statuses).toEqual([]);
  // Nor does it back an approval written into the branch.
  const p = await ports();
  const pull = await p.github.pull({ owner: OWNER, repo: REPO }, PR2);
  expect(
    await uncountedApproval(
      p.github,
      { owner: OWNER, repo: REPO },
      pull,
      await p.policy(pull),
      'spec',
      { approver: 'mona', proxy: false, hash },
      await p.github.listComments({ owner: OWNER, repo: REPO }, PR2),
    ),
  ).toMatch(/^@mona's \/consort approve spec on #8 was not given on these artifacts/);
}, 60_000);

it("mona's own /consort approve spec, as GitHub has it, still approves", async () => {
  const c = github.seed({ issue: PR, body: '/consort approve spec', user: person('Mona') });
  await expect(runOnPullRequest(await ports(), forged(c.id))).rejects.toThrow('the lane ran on a forged approval');
  const gates = JSON.parse(await git(origin, 'show', `refs/heads/phones:.consort/features/${feature}/gates.json`)) as {
    gates: { spec: { approval: { approver: string; hash: string } } };
  };
  expect(gates.gates.spec.approval).toMatchObject({ approver: 'mona', hash });
}, 60_000);
