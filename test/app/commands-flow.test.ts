/**
 * `/consort` commands and trust, end to end (webhooks through Probot, the real queue and lane,
 * GitHub behind nock): code from a fork waits for `/consort allow-run`; people without write
 * access are refused and nothing happens; an edited command is its editor's; the TDD lane's gate
 * commands are the Action's (the App neither records nor answers them); commands in code blocks or
 * unchanged by an edit do not fire.
 */
import { approvalCommentBody } from '../../app/dashboard/approve.js';
import { CHECK_NAME, STICKY_MARKER } from '../../app/check-output.js';
import { REFUSAL } from '../../src/github/command-reply.js';
import { forkRunApproval } from '../../app/store/pulls.js';
import { api, expectNoCheckRunYet, expectToken } from './helpers/github.js';
import { OWNER, PATH, REPO, REPO_ID, setupFlow, type Body } from './helpers/flow.js';
import { commentPayload, delivery, pullRequestPayload } from './helpers/payloads.js';
import { eventually } from './helpers/wait.js';
import { postedText } from '../helpers/fake-github.js';

const flow = setupFlow();
const PR = 7;
const sticky = { id: 6001, body: `${STICKY_MARKER}\n## ⏸️ waiting`, user: { login: 'consort[bot]', type: 'Bot' } };

function expectPermission(user: string, reply: { status: number; permission?: string }): void {
  const scope = api().get(`${PATH}/collaborators/${user}/permission`);
  if (reply.status === 404) scope.reply(404, { message: 'Not Found' });
  else scope.reply(200, { permission: reply.permission, role_name: reply.permission });
}

function expectReply(into: { body?: string }, id: number): void {
  api()
    .post(`${PATH}/issues/${PR}/comments`, (b: { body: string }) => ((into.body = postedText(b.body)), true))
    .reply(201, { id });
}

/** 👀 acknowledges a command that goes ahead; 😕 comes with a refusal. */
function expectReaction(commentId: number, content: 'eyes' | 'confused' = 'eyes'): void {
  api().post(`${PATH}/issues/comments/${commentId}/reactions`, { content }).reply(201, { id: 1 });
}

/** A fork's check that must not run: created, concluded action_required, the sticky comment written. */
function expectForkBlocked(
  head: string,
  checkRunId: number,
  bodies: Record<string, Body>,
  existingSticky: boolean,
): void {
  expectNoCheckRunYet(OWNER, REPO, head);
  api()
    .post(`${PATH}/check-runs`, (b: Body) => b.head_sha === head)
    .reply(201, { id: checkRunId });
  api()
    .patch(`${PATH}/check-runs/${checkRunId}`, (b: Body) => ((bodies.completed = b), true))
    .reply(200, {});
  api()
    .get(`${PATH}/issues/${PR}/comments`)
    .query({ per_page: 100, page: 1 })
    .reply(200, existingSticky ? [sticky] : []);
  if (existingSticky) api().patch(`${PATH}/issues/comments/${sticky.id}`).reply(200, {});
  else
    api()
      .post(
        `${PATH}/issues/${PR}/comments`,
        (b: { body: string }) => ((bodies.sticky = b), b.body.startsWith(STICKY_MARKER)),
      )
      .reply(201, { id: sticky.id });
}

const comment = (id: string, body: string, user: string, commentId: number) =>
  delivery('issue_comment', id, commentPayload({ body, number: PR, user, commentId, repositoryId: REPO_ID }));

it("a fork's code does not run until someone with write access approves its head: then it does", async () => {
  const { repo } = flow;
  const blocked: Record<string, Body> = {};
  expectToken();
  expectForkBlocked(repo.headSha, 3001, blocked, false);
  await flow.probot.receive(
    delivery(
      'pull_request',
      'fork-open',
      pullRequestPayload({ action: 'opened', number: PR, head: repo.headSha, base: repo.baseSha, fork: true }),
    ),
  );
  await eventually(
    async () => (await flow.runs(PR))[0]?.state === 'blocked' && blocked.sticky && blocked.completed,
    'the fork check to be held',
  );
  expect(blocked.completed).toMatchObject({
    conclusion: 'action_required',
    details_url: `https://github.com${PATH.replace('/repos', '')}/pull/${PR}#issuecomment-${sticky.id}`,
    output: { title: 'Waiting for approval to run code from a fork' },
  });
  expect((blocked.sticky as { body: string }).body).toContain('`/consort allow-run`');

  const reply: { body?: string } = {};
  const checked: Record<string, Body> = {};
  expectPermission('maintainer', { status: 200, permission: 'maintain' });
  expectReaction(8001);
  expectReply(reply, 6002);
  flow.expectCheck({ pr: PR, head: repo.headSha, checkRunId: 3002, bodies: checked });
  api().get(`${PATH}/issues/${PR}/comments`).query({ per_page: 100, page: 1 }).reply(200, [sticky]);
  api()
    .patch(`${PATH}/issues/comments/${sticky.id}`, (b: { body: string }) =>
      b.body.includes(`${CHECK_NAME}: database checks passed`),
    )
    .reply(200, {});
  await flow.probot.receive(
    comment('fork-approve', 'Reviewed the migrations.\n\n/consort allow-run', 'maintainer', 8001),
  );
  await eventually(async () => checked.completed && reply.body, 'the approved check and the reply', 90_000); // a full check on a shared, loaded machine
  await flow.finished(PR, 2);
  expect(checked.completed).toMatchObject({ conclusion: 'success' });
  expect(reply.body).toMatch(/^> \/consort allow-run\n\n@maintainer approved running the fork's code at `[0-9a-f]{7}`/);
  expect(await forkRunApproval(flow.runtime.store.pool, REPO_ID, PR, repo.headSha)).toMatchObject({
    approver: 'maintainer',
  });
}, 180_000);

it('someone without write access is refused politely, and nothing happens', async () => {
  const before = (await flow.runs(PR)).length;
  const read: { body?: string } = {};
  const none: { body?: string } = {};
  expectToken();
  expectPermission('reader', { status: 200, permission: 'read' });
  expectReaction(8101, 'confused');
  expectReply(read, 6101);
  expectPermission('stranger', { status: 404 });
  expectReaction(8102, 'confused');
  expectReply(none, 6102);
  await flow.probot.receive(comment('refuse-1', '/consort retry', 'reader', 8101));
  await flow.probot.receive(comment('refuse-2', '/consort approve run', 'stranger', 8102));
  await eventually(async () => read.body && none.body, 'both refusals');
  expect(read.body).toBe(`> /consort retry\n\n@reader ${REFUSAL}`);
  // `/consort approve run` is the old spelling of `/consort allow-run`, answered as such.
  expect(none.body).toBe(`> /consort allow-run\n\n@stranger ${REFUSAL}`);
  expect(await flow.runs(PR)).toHaveLength(before);
});

it("an edited command is judged by whoever edited it, not by the comment's author", async () => {
  const before = (await flow.runs(PR)).length;
  const refused: { body?: string } = {};
  expectToken();
  // The maintainer wrote the comment; someone without access edited a command into it.
  expectPermission('intruder', { status: 404 });
  expectReaction(8401, 'confused');
  expectReply(refused, 6301);
  await flow.probot.receive(
    delivery(
      'issue_comment',
      'edit-1',
      commentPayload({
        body: 'LGTM\n\n/consort allow-run',
        from: 'LGTM',
        action: 'edited',
        number: PR,
        user: 'maintainer',
        editor: 'intruder',
        commentId: 8401,
        repositoryId: REPO_ID,
      }),
    ),
  );
  await eventually(async () => refused.body, 'the refusal');
  expect(refused.body).toBe(`> /consort allow-run\n\n@intruder ${REFUSAL}`);
  expect(await flow.runs(PR)).toHaveLength(before);
});

it("the TDD lane's commands are the Action's: the App records, answers and publishes nothing for them", async () => {
  const deliveries = async () =>
    (await flow.runtime.store.pool.query('SELECT id FROM consort_app.deliveries ORDER BY id')).rows.map((r) =>
      String(r.id),
    );
  const before = await deliveries();
  await flow.probot.receive(comment('lane-1', '/consort approve spec', 'maintainer', 8501));
  await flow.probot.receive(comment('lane-2', '/consort approve', 'maintainer', 8502));
  await flow.probot.receive(comment('lane-3', '/consort build customer-phones add a phone number', 'maintainer', 8503));
  // The comment the dashboard posts with the person's token after committing their approval.
  await flow.probot.receive(
    comment('lane-4', approvalCommentBody('spec', `sha256:${'a'.repeat(64)}`), 'maintainer', 8504),
  );
  // Nothing recorded, nothing enqueued, and (checked after the test) no GitHub call: no reply, no status.
  expect(await deliveries()).toEqual(before);
});

it('commands in code blocks, quotes, or unchanged by an edit do not fire', async () => {
  const deliveries = async () =>
    (await flow.runtime.store.pool.query('SELECT id FROM consort_app.deliveries ORDER BY id')).rows.map((r) =>
      String(r.id),
    );
  const before = await deliveries();
  await flow.probot.receive(comment('quiet-1', 'To approve, type:\n```\n/consort approve\n```', 'maintainer', 8301));
  await flow.probot.receive(comment('quiet-2', '> /consort approve run\n\nWho said that?', 'maintainer', 8302));
  await flow.probot.receive(
    delivery(
      'issue_comment',
      'quiet-3',
      commentPayload({
        body: 'Approved, typo fixed.\n/consort approve spec',
        from: 'Aproved.\n/consort approve spec',
        action: 'edited',
        number: PR,
        user: 'maintainer',
        repositoryId: REPO_ID,
      }),
    ),
  );
  // Nothing recorded, nothing enqueued, and (checked after the test) no GitHub call.
  expect(await deliveries()).toEqual(before);
});
