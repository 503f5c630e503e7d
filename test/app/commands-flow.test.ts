/**
 * `/consort` commands and trust, end to end (webhooks through Probot, the real queue and lane,
 * GitHub behind nock): code from a fork waits for `/consort approve run`; people without write
 * access are refused and nothing happens; gates are approved, go stale on a push, are rejected;
 * commands in code blocks or unchanged by an edit do not fire.
 */
import { CHECK_NAME, STICKY_MARKER } from '../../src/app/check-output.js';
import { REFUSAL } from '../../src/app/jobs/command.js';
import { listGates, openGate } from '../../src/app/store/gates.js';
import { forkRunApproval } from '../../src/app/store/pulls.js';
import { api, expectToken } from './helpers/github.js';
import { PATH, REPO_ID, setupFlow, type Body } from './helpers/flow.js';
import { commentPayload, delivery, pullRequestPayload } from './helpers/payloads.js';
import { commit } from './helpers/repo.js';
import { eventually } from './helpers/wait.js';

const flow = setupFlow();
const PR = 7;
const sticky = { id: 6001, body: `${STICKY_MARKER}\n## ⏸️ waiting`, user: { login: 'consort[bot]', type: 'Bot' } };

function expectPermission(user: string, reply: { status: number; permission?: string }): void {
  const scope = api().get(`${PATH}/collaborators/${user}/permission`);
  if (reply.status === 404) scope.reply(404, { message: 'Not Found' });
  else scope.reply(200, { permission: reply.permission, role_name: reply.permission });
}

function expectReply(into: { body?: string }, id: number): void {
  api().post(`${PATH}/issues/${PR}/comments`, (b: { body: string }) => ((into.body = b.body), true)).reply(201, { id });
}

function expectReaction(commentId: number): void {
  api().post(`${PATH}/issues/comments/${commentId}/reactions`, { content: '+1' }).reply(201, { id: 1 });
}

/** A fork's check that must not run: created, concluded action_required, the sticky comment written. */
function expectForkBlocked(head: string, checkRunId: number, bodies: Record<string, Body>, existingSticky: boolean): void {
  api().post(`${PATH}/check-runs`, (b: Body) => b.head_sha === head).reply(201, { id: checkRunId });
  api().patch(`${PATH}/check-runs/${checkRunId}`, (b: Body) => ((bodies.completed = b), true)).reply(200, {});
  api().get(`${PATH}/issues/${PR}/comments`).query({ per_page: 100, page: 1 }).reply(200, existingSticky ? [sticky] : []);
  if (existingSticky) api().patch(`${PATH}/issues/comments/${sticky.id}`).reply(200, {});
  else api().post(`${PATH}/issues/${PR}/comments`, (b: { body: string }) => ((bodies.sticky = b), b.body.startsWith(STICKY_MARKER))).reply(201, { id: sticky.id });
}

const comment = (id: string, body: string, user: string, commentId: number) =>
  delivery('issue_comment', id, commentPayload({ body, number: PR, user, commentId, repositoryId: REPO_ID }));

it("a fork's code does not run until someone with write access approves its head: then it does", async () => {
  const { repo } = flow;
  const blocked: Record<string, Body> = {};
  expectToken();
  expectForkBlocked(repo.headSha, 3001, blocked, false);
  await flow.probot.receive(delivery('pull_request', 'fork-open', pullRequestPayload({ action: 'opened', number: PR, head: repo.headSha, base: repo.baseSha, fork: true })));
  await eventually(async () => (await flow.runs(PR))[0]?.state === 'blocked' && blocked.sticky && blocked.completed, 'the fork check to be held');
  expect(blocked.completed).toMatchObject({
    conclusion: 'action_required', details_url: `https://github.com${PATH.replace('/repos', '')}/pull/${PR}#issuecomment-${sticky.id}`,
    output: { title: 'Waiting for approval to run code from a fork' },
  });
  expect((blocked.sticky as { body: string }).body).toContain('`/consort approve run`');

  const reply: { body?: string } = {};
  const checked: Record<string, Body> = {};
  expectPermission('maintainer', { status: 200, permission: 'maintain' });
  expectReaction(8001);
  expectReply(reply, 6002);
  flow.expectCheck({ pr: PR, head: repo.headSha, checkRunId: 3002, bodies: checked });
  api().get(`${PATH}/issues/${PR}/comments`).query({ per_page: 100, page: 1 }).reply(200, [sticky]);
  api().patch(`${PATH}/issues/comments/${sticky.id}`, (b: { body: string }) => b.body.includes(`${CHECK_NAME}: database checks passed`)).reply(200, {});
  await flow.probot.receive(comment('fork-approve', 'Reviewed the migrations.\n\n/consort approve run', 'maintainer', 8001));
  await eventually(async () => checked.completed && reply.body, 'the approved check and the reply', 90_000); // a full check on a shared, loaded machine
  await flow.finished(PR, 2);
  expect(checked.completed).toMatchObject({ conclusion: 'success' });
  expect(reply.body).toMatch(/^> \/consort approve run\n\n@maintainer approved running the fork's code at `[0-9a-f]{7}`/);
  expect(await forkRunApproval(flow.runtime.store.pool, REPO_ID, PR, repo.headSha)).toMatchObject({ approver: 'maintainer' });
}, 180_000);

it('someone without write access is refused politely, and nothing happens', async () => {
  const before = (await flow.runs(PR)).length;
  const read: { body?: string } = {};
  const none: { body?: string } = {};
  expectToken();
  expectPermission('reader', { status: 200, permission: 'read' });
  expectReply(read, 6101);
  expectPermission('stranger', { status: 404 });
  expectReply(none, 6102);
  await flow.probot.receive(comment('refuse-1', '/consort retry', 'reader', 8101));
  await flow.probot.receive(comment('refuse-2', '/consort approve run', 'stranger', 8102));
  await eventually(async () => read.body && none.body, 'both refusals');
  expect(read.body).toBe(`> /consort retry\n\n@reader ${REFUSAL}`);
  expect(none.body).toBe(`> /consort approve run\n\n@stranger ${REFUSAL}`);
  expect(await flow.runs(PR)).toHaveLength(before);
});

it('gates: approved with approver, head and artifact hash; stale after a push; rejected with a reason', async () => {
  const { repo } = flow;
  const artifactHash = 'sha256:5f2b0c0c2d0c4a4e9f1b7a6d3e8c9b0a1f2e3d4c5b6a79881726354433221100';
  await openGate(flow.runtime.store.pool, { repositoryId: REPO_ID, pr: PR, name: 'spec', artifactHash, headSha: repo.headSha });
  const approved: { body?: string } = {};
  const statuses: Body[] = [];
  expectToken();
  expectPermission('maintainer', { status: 200, permission: 'admin' });
  expectReaction(8201);
  api().post(`${PATH}/statuses/${repo.headSha}`, (b: Body) => (statuses.push(b), true)).reply(201, {});
  expectReply(approved, 6201);
  await flow.probot.receive(comment('gate-approve', '/consort approve', 'maintainer', 8201));
  await eventually(async () => approved.body, 'the approval reply');
  expect(statuses).toEqual([{ context: 'consort/gate/spec', state: 'success', description: 'Approved by @maintainer' }]);
  expect(approved.body).toContain('approved gate `spec`');
  expect((await listGates(flow.runtime.store.pool, REPO_ID, PR))[0]).toMatchObject({
    state: 'approved', decidedBy: 'maintainer', decidedHeadSha: repo.headSha, decidedArtifactHash: artifactHash, decidedAt: expect.any(Date),
  });

  // A push: the approval is stale, and the new head's gate status is pending again.
  const head2 = await commit(repo.dir, { 'notes/push.txt': 'more' }, 'push', repo.headSha);
  const blocked: Record<string, Body> = {};
  expectForkBlocked(head2, 3003, blocked, true);
  api().post(`${PATH}/statuses/${head2}`, (b: Body) => (statuses.push(b), true)).reply(201, {});
  await flow.probot.receive(delivery('pull_request', 'fork-sync', pullRequestPayload({ action: 'synchronize', number: PR, head: head2, base: repo.baseSha, fork: true })));
  await eventually(async () => (await flow.runs(PR)).at(-1)?.state === 'blocked' && statuses.length === 2 && blocked.completed, 'the push to be handled');
  expect(statuses[1]).toMatchObject({ context: 'consort/gate/spec', state: 'pending', description: expect.stringMatching(/^Approval by @maintainer at [0-9a-f]{7} is stale/) });
  expect((await listGates(flow.runtime.store.pool, REPO_ID, PR))[0]).toMatchObject({ state: 'stale' });

  const rejected: { body?: string } = {};
  expectPermission('maintainer', { status: 200, permission: 'write' });
  expectReaction(8202);
  api().post(`${PATH}/statuses/${head2}`, (b: Body) => (statuses.push(b), true)).reply(201, {});
  expectReply(rejected, 6202);
  await flow.probot.receive(comment('gate-reject', '/consort reject spec "AC3 has no refund case"', 'maintainer', 8202));
  await eventually(async () => rejected.body, 'the rejection reply');
  expect(statuses[2]).toEqual({ context: 'consort/gate/spec', state: 'failure', description: 'Rejected by @maintainer: AC3 has no refund case' });
  expect((await listGates(flow.runtime.store.pool, REPO_ID, PR))[0]).toMatchObject({ state: 'rejected', reason: 'AC3 has no refund case', decidedHeadSha: head2 });
});

it('commands in code blocks, quotes, or unchanged by an edit do not fire', async () => {
  const deliveries = async () => (await flow.runtime.store.pool.query('SELECT id FROM consort_app.deliveries ORDER BY id')).rows.map((r) => String(r.id));
  const before = await deliveries();
  await flow.probot.receive(comment('quiet-1', 'To approve, type:\n```\n/consort approve\n```', 'maintainer', 8301));
  await flow.probot.receive(comment('quiet-2', '> /consort approve run\n\nWho said that?', 'maintainer', 8302));
  await flow.probot.receive(delivery('issue_comment', 'quiet-3', commentPayload({
    body: 'Approved, typo fixed.\n/consort approve spec', from: 'Aproved.\n/consort approve spec', action: 'edited', number: PR, user: 'maintainer', repositoryId: REPO_ID,
  })));
  // Nothing recorded, nothing enqueued, and (checked after the test) no GitHub call.
  expect(await deliveries()).toEqual(before);
});
