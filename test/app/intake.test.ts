/**
 * The intake on a real store and queue, with no workers running: what each webhook records and
 * enqueues (in one transaction), what a redelivery does (nothing), and the command answers that
 * need no branches — against a GitHub stand-in.
 */
import { createIntake } from '../../app/intake.js';
import { handleAnnounce } from '../../app/jobs/announce.js';
import { handleCommand } from '../../app/jobs/command.js';
import type { AppRuntime } from '../../app/runtime.js';
import { REJECT_ANSWER } from '../../app/jobs/fork-run.js';
import { REFUSAL } from '../../src/github/command-reply.js';
import { forkRunApproval, getPull, recordDelivery } from '../../app/store/pulls.js';
import { getRun, mergeGroupSubject, prSubject, runsOf, setCheckRun } from '../../app/store/runs.js';
import type { CommandJob } from '../../app/queue.js';
import { freshDatabase, type TestDatabase } from './helpers/database.js';
import { FakeGitHub } from './helpers/fake-github.js';
import {
  checkRunPayload,
  checkSuitePayload,
  commentPayload,
  INSTALLATION,
  installationPayload,
  mergeGroupPayload,
  pullRequestPayload,
} from './helpers/payloads.js';
import { noBranches, startTestRuntime } from './helpers/runtime.js';

const REPO = 777;
const sha = (c: string): string => c.repeat(40);
let db: TestDatabase;
let app: AppRuntime;
const gh = new FakeGitHub();

beforeAll(async () => {
  db = await freshDatabase();
  app = await startTestRuntime({ storeUrl: db.url, github: async () => gh, providers: noBranches(), workers: false });
});
afterAll(async () => {
  await app?.stop();
  await db?.drop();
});

const jobs = async (queue: string): Promise<unknown[]> =>
  (
    await app.store.pool.query(
      "SELECT data FROM pgboss.job WHERE name = $1 AND state = 'created' ORDER BY created_on, id",
      [queue],
    )
  ).rows.map((r) => r.data);
const pr = (
  action: 'opened' | 'synchronize' | 'reopened' | 'closed',
  number: number,
  head: string,
  extra: { merged?: boolean; updatedAt?: string } = {},
) => ({
  id: `${action}-${number}-${head.slice(0, 4)}${extra.updatedAt ? `-${extra.updatedAt}` : ''}`,
  name: 'pull_request',
  payload: pullRequestPayload({ action, number, head, base: sha('b'), repositoryId: REPO, ...extra }),
});

describe('webhooks', () => {
  it('opened: a run and its announce job, atomically; a redelivery does nothing', async () => {
    const before = (await jobs('consort-quick')).length;
    const outcome = await app.intake.pullRequest(pr('opened', 1, sha('1')));
    expect(outcome).toMatchObject({ kind: 'enqueued', job: 'announce' });
    expect(await app.intake.pullRequest(pr('opened', 1, sha('1')))).toEqual({ kind: 'duplicate' });
    const runs = await runsOf(app.store.pool, prSubject(REPO, 1));
    expect(runs).toEqual([
      expect.objectContaining({ kind: 'check', headSha: sha('1'), state: 'queued', deliveryId: `opened-1-1111` }),
    ]);
    expect((await jobs('consort-quick')).slice(before)).toEqual([{ kind: 'announce', runId: runs[0]!.id }]);
  });

  it('with the dashboard on, a push also enqueues indexing its head (and a close does not)', async () => {
    const intake = createIntake(app.store, app.queue, { indexRecords: true });
    const before = (await jobs('consort-quick')).length;
    await intake.pullRequest(pr('opened', 41, sha('4')));
    await intake.pullRequest(pr('closed', 41, sha('4')));
    const runs = await runsOf(app.store.pool, prSubject(REPO, 41));
    const added = (await jobs('consort-quick')).slice(before);
    // One transaction: the two jobs share a creation time, so their order is not defined.
    expect(added).toHaveLength(2);
    expect(added).toEqual(
      expect.arrayContaining([
        { kind: 'announce', runId: runs[0]!.id },
        { kind: 'index', repositoryId: REPO, pr: 41, headSha: sha('4') },
      ]),
    );
  });

  it('synchronize: the older run is cancelled', async () => {
    await app.intake.pullRequest(pr('synchronize', 1, sha('2')));
    const runs = await runsOf(app.store.pool, prSubject(REPO, 1));
    expect(runs.map((r) => [r.headSha, r.cancelReason])).toEqual([
      [sha('1'), 'superseded by a newer run at 2222222'],
      [sha('2'), null],
    ]);
  });

  it('closed: a close run (cancelling the check) on the run queue', async () => {
    await app.intake.pullRequest(pr('closed', 1, sha('2'), { merged: true }));
    const runs = await runsOf(app.store.pool, prSubject(REPO, 1));
    expect(runs.at(-1)).toMatchObject({ kind: 'close', merged: true, headSha: sha('2') });
    expect(runs.at(-2)!.cancelReason).toBe('the pull request was closed');
    expect(await jobs('consort-run')).toContainEqual({ runId: runs.at(-1)!.id });
  });

  it('an event older than the one recorded (GitHub does not deliver in order) changes nothing: no stale head, no reopening', async () => {
    const at = (s: number) => `2026-01-01T00:00:${String(s).padStart(2, '0')}Z`;
    expect(await app.intake.pullRequest(pr('opened', 60, sha('1'), { updatedAt: at(10) }))).toMatchObject({
      kind: 'enqueued',
    });
    // The second push's event arrives before the first's: the first no longer says what the head is.
    await app.intake.pullRequest(pr('synchronize', 60, sha('3'), { updatedAt: at(30) }));
    expect(await app.intake.pullRequest(pr('synchronize', 60, sha('2'), { updatedAt: at(20) }))).toEqual({
      kind: 'ignored',
      reason: 'an older event of the pull request than the one recorded (delivered out of order)',
    });
    expect((await getPull(app.store.pool, REPO, 60))!.headSha).toBe(sha('3'));
    expect((await runsOf(app.store.pool, prSubject(REPO, 60))).map((r) => [r.headSha, r.cancelReason])).toEqual([
      [sha('1'), 'superseded by a newer run at 3333333'],
      [sha('3'), null],
    ]);
    // Closed, then a push's event of the same second arrives late: the pull request stays closed, nothing is checked.
    await app.intake.pullRequest(pr('closed', 60, sha('3'), { updatedAt: at(40) }));
    expect(await app.intake.pullRequest(pr('synchronize', 60, sha('4'), { updatedAt: at(40) }))).toEqual({
      kind: 'ignored',
      reason: 'the pull request is closed (only reopening it checks it again)',
    });
    expect(await getPull(app.store.pool, REPO, 60)).toMatchObject({ state: 'closed', headSha: sha('3') });
    expect((await runsOf(app.store.pool, prSubject(REPO, 60))).map((r) => r.kind)).toEqual(['check', 'check', 'close']);
    // Reopened: checked again.
    expect(await app.intake.pullRequest(pr('reopened', 60, sha('3'), { updatedAt: at(50) }))).toMatchObject({
      kind: 'enqueued',
    });
    expect(await getPull(app.store.pool, REPO, 60)).toMatchObject({ state: 'open' });
  });

  it("merged into another branch than the default (a stacked pull request's base, a release branch): its branches go, nothing is promoted", async () => {
    const closed = (number: number, baseRef: string) => ({
      id: `merged-into-${baseRef}`,
      name: 'pull_request',
      payload: pullRequestPayload({
        action: 'closed',
        number,
        head: sha('6'),
        base: sha('b'),
        baseRef,
        repositoryId: REPO,
        merged: true,
        mergeSha: sha('7'),
      }),
    });
    expect(closed(62, 'x').payload.repository).toMatchObject({ default_branch: 'master' });
    await app.intake.pullRequest(closed(62, 'feature/orders'));
    await app.intake.pullRequest(closed(63, 'master'));
    const [stacked] = await runsOf(app.store.pool, prSubject(REPO, 62));
    const [onDefault] = await runsOf(app.store.pool, prSubject(REPO, 63));
    expect(stacked).toMatchObject({ kind: 'close', baseRef: 'feature/orders', merged: false });
    expect(onDefault).toMatchObject({ kind: 'close', baseRef: 'master', merged: true, headSha: sha('7') });
    expect(await getPull(app.store.pool, REPO, 62)).toMatchObject({ state: 'merged' });
  });

  it('reopened before its close run started: the close run is cancelled, so it cannot delete the branch the new check makes', async () => {
    const at = (s: number) => `2026-01-02T00:00:${String(s).padStart(2, '0')}Z`;
    await app.intake.pullRequest(pr('opened', 64, sha('1'), { updatedAt: at(1) }));
    await app.intake.pullRequest(pr('closed', 64, sha('1'), { updatedAt: at(2) }));
    await app.intake.pullRequest(pr('reopened', 64, sha('1'), { updatedAt: at(3) }));
    const runs = await runsOf(app.store.pool, prSubject(REPO, 64));
    expect(runs.map((r) => [r.kind, r.cancelReason])).toEqual([
      ['check', 'the pull request was closed'],
      ['close', 'the pull request was reopened'],
      ['check', null],
    ]);
  });

  it('check_run.rerequested: runs the check again for the head; ignores check runs it does not know', async () => {
    await app.intake.pullRequest(pr('opened', 2, sha('3')));
    const [first] = await runsOf(app.store.pool, prSubject(REPO, 2));
    await setCheckRun(app.store.pool, first!.id, 424242);
    expect(
      await app.intake.checkRunRerequested({
        id: 'rr-1',
        name: 'check_run',
        payload: checkRunPayload({ checkRunId: 424242, head: sha('3'), repositoryId: REPO }),
      }),
    ).toMatchObject({ kind: 'enqueued', job: 'announce' });
    expect((await runsOf(app.store.pool, prSubject(REPO, 2))).map((r) => r.cancelReason)).toEqual([
      'superseded by a newer run at 3333333',
      null,
    ]);
    expect(
      await app.intake.checkRunRerequested({
        id: 'rr-2',
        name: 'check_run',
        payload: checkRunPayload({ checkRunId: 1, head: sha('3'), repositoryId: REPO }),
      }),
    ).toEqual({ kind: 'ignored', reason: 'not a check run of this App' });
  });

  it('check_suite.rerequested ("Re-run all checks"): the head is checked again; a commit it never checked, or an old head, is ignored', async () => {
    await app.intake.pullRequest(pr('opened', 12, sha('c')));
    const suite = (id: string, head: string) => ({
      id,
      name: 'check_suite',
      payload: checkSuitePayload({ head, repositoryId: REPO }),
    });
    expect(await app.intake.checkSuiteRerequested(suite('cs-1', sha('c')))).toMatchObject({
      kind: 'enqueued',
      job: 'announce',
    });
    expect(await app.intake.checkSuiteRerequested(suite('cs-1', sha('c')))).toEqual({ kind: 'duplicate' });
    const runs = await runsOf(app.store.pool, prSubject(REPO, 12));
    expect(runs.map((r) => [r.headSha, r.cancelReason, r.deliveryId])).toEqual([
      [sha('c'), 'superseded by a newer run at ccccccc', expect.any(String)],
      [sha('c'), null, 'cs-1'],
    ]);
    expect((await jobs('consort-quick')).at(-1)).toEqual({ kind: 'announce', runId: runs[1]!.id });
    expect(await app.intake.checkSuiteRerequested(suite('cs-2', sha('e')))).toEqual({
      kind: 'ignored',
      reason: 'this App never checked eeeeeee',
    });
    await app.intake.pullRequest(pr('synchronize', 12, sha('d')));
    expect(await app.intake.checkSuiteRerequested(suite('cs-3', sha('c')))).toEqual({
      kind: 'ignored',
      reason: 'not the head commit (ddddddd)',
    });
  });

  it('pull_request.edited: a new base records a check against it; an edit of the title does nothing', async () => {
    await app.intake.pullRequest(pr('opened', 13, sha('7')));
    const edited = (id: string, baseFrom: string | undefined) => ({
      id,
      name: 'pull_request',
      payload: pullRequestPayload({
        action: 'edited',
        number: 13,
        head: sha('7'),
        base: sha('8'),
        baseRef: 'release',
        repositoryId: REPO,
        ...(baseFrom ? { baseFrom } : {}),
      }),
    });
    expect(await app.intake.pullRequest(edited('ed-1', undefined))).toEqual({
      kind: 'ignored',
      reason: 'edited without a change of base',
    });
    expect(await app.intake.pullRequest(edited('ed-2', 'main'))).toMatchObject({ kind: 'enqueued', job: 'announce' });
    const runs = await runsOf(app.store.pool, prSubject(REPO, 13));
    expect(runs.map((r) => [r.baseRef, r.baseSha, r.cancelReason])).toEqual([
      [expect.any(String), sha('b'), 'superseded by a newer run at 7777777'],
      ['release', sha('8'), null],
    ]);
  });

  it('merge_group: checks_requested records a check; destroyed cancels it', async () => {
    const payload = mergeGroupPayload({ head: sha('4'), base: sha('b'), repositoryId: REPO });
    await app.intake.mergeGroup({ id: 'mg-a', name: 'merge_group', payload });
    const destroyed = await app.intake.mergeGroup({
      id: 'mg-b',
      name: 'merge_group',
      payload: mergeGroupPayload({ head: sha('4'), base: sha('b'), repositoryId: REPO, action: 'destroyed' }),
    });
    expect(destroyed).toMatchObject({ kind: 'cancelled', runs: [expect.any(Number)] });
    const [run] = await runsOf(
      app.store.pool,
      mergeGroupSubject(REPO, 'refs/heads/gh-readonly-queue/main/pr-104-929f8209d40f77f4abc622a499c93a83babdbe64'),
    );
    expect(run).toMatchObject({
      pr: null,
      headSha: sha('4'),
      cancelReason: expect.stringMatching(/merge group was destroyed/),
    });
  });

  it('comments: commands are enqueued with who wrote them and when; others are not recorded', async () => {
    const at = '2030-01-01T00:00:00Z';
    expect(
      await app.intake.comment({
        id: 'c-1',
        name: 'issue_comment',
        payload: commentPayload({
          body: '/consort status',
          number: 2,
          user: 'octocat',
          repositoryId: REPO,
          at,
          commentId: 55,
        }),
      }),
    ).toEqual({ kind: 'enqueued', job: 'command' });
    expect((await jobs('consort-quick')).at(-1)).toEqual({
      kind: 'command',
      command: expect.objectContaining({
        pr: 2,
        author: 'octocat',
        commentId: 55,
        writtenAt: at,
        installationId: INSTALLATION,
        command: { kind: 'status' },
      }),
    });
    expect(
      await app.intake.comment({
        id: 'c-2',
        name: 'issue_comment',
        payload: commentPayload({
          body: '/consort approve',
          number: 2,
          userType: 'Bot',
          user: 'other[bot]',
          repositoryId: REPO,
        }),
      }),
    ).toEqual({ kind: 'ignored', reason: 'written by a bot' });
    expect(
      await app.intake.comment({
        id: 'c-3',
        name: 'issue_comment',
        payload: commentPayload({
          body: '/consort gc',
          from: '/consort gc',
          action: 'edited',
          number: 2,
          repositoryId: REPO,
        }),
      }),
    ).toEqual({ kind: 'ignored', reason: 'no new /consort command' });
  });

  it("an edited comment's command is enqueued as its editor's (the sender), with the edit's time", async () => {
    const at = '2030-01-02T00:00:00Z';
    const edited = commentPayload({
      body: 'ok\n/consort retry',
      from: 'ok',
      action: 'edited',
      number: 2,
      user: 'octocat',
      editor: 'mallory',
      repositoryId: REPO,
      at,
      commentId: 56,
    });
    expect(await app.intake.comment({ id: 'c-4', name: 'issue_comment', payload: edited })).toEqual({
      kind: 'enqueued',
      job: 'command',
    });
    expect((await jobs('consort-quick')).at(-1)).toEqual({
      kind: 'command',
      command: expect.objectContaining({ author: 'mallory', commentId: 56, writtenAt: at, command: { kind: 'retry' } }),
    });
  });

  it('a comment whose author GitHub sends as null (a deleted account) or without a type is still read: its editor’s command runs', async () => {
    // GitHub's webhook description: issue_comment's comment.user is "User | null", and its type optional.
    const ghost = commentPayload({
      body: '/consort retry',
      from: 'old words',
      action: 'edited',
      number: 2,
      editor: 'mona',
      repositoryId: REPO,
      at: '2030-01-03T00:00:00Z',
      commentId: 57,
    }) as unknown as { comment: { user: unknown } };
    ghost.comment.user = null;
    expect(await app.intake.comment({ id: 'c-ghost', name: 'issue_comment', payload: ghost })).toEqual({
      kind: 'enqueued',
      job: 'command',
    });
    expect((await jobs('consort-quick')).at(-1)).toEqual({
      kind: 'command',
      command: expect.objectContaining({ author: 'mona', commentId: 57, command: { kind: 'retry' } }),
    });
    const untyped = commentPayload({
      body: '/consort status',
      number: 2,
      user: 'kim',
      repositoryId: REPO,
      commentId: 58,
    });
    delete (untyped.comment.user as { type?: string }).type;
    expect(await app.intake.comment({ id: 'c-untyped', name: 'issue_comment', payload: untyped })).toEqual({
      kind: 'enqueued',
      job: 'command',
    });
  });

  it("each command has one answerer: the TDD lane's go to the Action; `approve run` is `allow-run`, the App's", async () => {
    for (const [id, body] of [
      ['c-5', '/consort approve spec'],
      ['c-6', '/consort approve'],
      ['c-7', '/consort build phones'],
    ] as const) {
      expect(
        await app.intake.comment({
          id,
          name: 'issue_comment',
          payload: commentPayload({ body, number: 2, user: 'octocat', repositoryId: REPO }),
        }),
      ).toEqual({ kind: 'ignored', reason: expect.stringMatching(/is answered by the Action$/) });
    }
    expect(
      await app.intake.comment({
        id: 'c-8',
        name: 'issue_comment',
        payload: commentPayload({ body: '/consort approve run', number: 2, user: 'octocat', repositoryId: REPO }),
      }),
    ).toEqual({ kind: 'enqueued', job: 'command' });
    expect((await jobs('consort-quick')).at(-1)).toEqual({
      kind: 'command',
      command: expect.objectContaining({ command: { kind: 'allow-run' } }),
    });
  });

  it('a run superseded before it was announced gets no check run; the newer one does, and goes to the run queue', async () => {
    await app.intake.pullRequest(pr('opened', 4, sha('6')));
    await app.intake.pullRequest(pr('synchronize', 4, sha('7')));
    const [older, newer] = await runsOf(app.store.pool, prSubject(REPO, 4));
    const created = () => gh.calls.filter((c) => c.method === 'createCheckRun').length;
    const before = created();
    await handleAnnounce(app.deps, { kind: 'announce', runId: older!.id });
    expect(created()).toBe(before);
    await handleAnnounce(app.deps, { kind: 'announce', runId: newer!.id });
    expect(created()).toBe(before + 1);
    expect((await runsOf(app.store.pool, prSubject(REPO, 4))).map((r) => [r.state, r.checkRunId === null])).toEqual([
      ['cancelled', true],
      ['queued', false],
    ]);
    expect(await jobs('consort-run')).toContainEqual({ runId: newer!.id });
  });

  it("uninstalled: the repositories' live checks are cancelled and their open pull requests' branches go (a close run each); once per delivery", async () => {
    const OTHER = 778;
    const at = (n: number, repositoryId: number, head: string, action: 'opened' | 'closed' = 'opened') => ({
      id: `uninstall-${action}-${repositoryId}-${n}`,
      name: 'pull_request',
      payload: pullRequestPayload({ action, number: n, head, base: sha('b'), repositoryId }),
    });
    await app.intake.pullRequest(at(90, REPO, sha('1')));
    await app.intake.pullRequest(at(91, REPO, sha('2')));
    await app.intake.pullRequest(at(91, REPO, sha('2'), 'closed'));
    await app.intake.pullRequest(at(92, OTHER, sha('3')));
    const group = mergeGroupPayload({ head: sha('4'), base: sha('b'), repositoryId: OTHER });
    await app.intake.mergeGroup({ id: 'uninstall-mg', name: 'merge_group', payload: group });
    const removed = {
      id: 'uninstall-removed',
      name: 'installation_repositories',
      payload: installationPayload({ action: 'removed', repositoryIds: [REPO] }),
    };
    const outcome = await app.intake.installationRemoved(removed);
    const pr90 = await runsOf(app.store.pool, prSubject(REPO, 90));
    expect(outcome).toEqual({
      kind: 'uninstalled',
      repositories: [REPO],
      cancelled: expect.arrayContaining([pr90[0]!.id]),
      closing: expect.arrayContaining([pr90.at(-1)!.id]),
    });
    expect(pr90.map((r) => [r.kind, r.cancelReason, r.merged])).toEqual([
      ['check', 'the App was uninstalled from the repository', false],
      ['close', null, false],
    ]);
    expect(await jobs('consort-run')).toContainEqual({ runId: pr90.at(-1)!.id });
    // Closed before: its branches went then; nothing more to do for it.
    expect((await runsOf(app.store.pool, prSubject(REPO, 91))).map((r) => r.kind)).toEqual(['check', 'close']);
    // Another repository of the installation keeps its check until the App leaves it too.
    expect((await runsOf(app.store.pool, prSubject(OTHER, 92)))[0]!.cancelReason).toBeNull();
    expect(await app.intake.installationRemoved(removed)).toEqual({ kind: 'duplicate' });

    const deleted = {
      id: 'uninstall-deleted',
      name: 'installation',
      payload: installationPayload({ action: 'deleted' }),
    };
    expect(await app.intake.installationRemoved(deleted)).toMatchObject({
      kind: 'uninstalled',
      repositories: expect.arrayContaining([REPO, OTHER]),
    });
    expect((await runsOf(app.store.pool, prSubject(OTHER, 92))).map((r) => [r.kind, r.cancelReason])).toEqual([
      ['check', 'the App was uninstalled from the repository'],
      ['close', null],
    ]);
    expect((await runsOf(app.store.pool, mergeGroupSubject(OTHER, group.merge_group.head_ref)))[0]!.cancelReason).toBe(
      'the App was uninstalled from the repository',
    );
  });

  it('refuses a payload without the fields it needs, recording nothing', async () => {
    const payload = pullRequestPayload({
      action: 'opened',
      number: 3,
      head: 'not-a-sha',
      base: sha('b'),
      repositoryId: REPO,
    });
    await expect(app.intake.pullRequest({ id: 'bad-1', name: 'pull_request', payload })).rejects.toThrow(
      /pull_request\.head\.sha: expected a 40-character commit SHA/,
    );
    expect((await app.store.pool.query("SELECT 1 FROM consort_app.deliveries WHERE id = 'bad-1'")).rowCount).toBe(0);
  });
});

describe('commands without branches', () => {
  let n = 0;
  const job = (command: CommandJob['command'], author = 'octocat'): CommandJob => ({
    deliveryId: `cmd-${++n}`,
    installationId: INSTALLATION,
    repositoryId: REPO,
    owner: 'o',
    repo: 'r',
    pr: 2,
    commentId: 9,
    author,
    writtenAt: new Date(Date.now() + 1000).toISOString(),
    command,
  });
  const lastReply = (): string => String(gh.calls.filter((c) => c.method === 'createComment').at(-1)!.args[2]);

  beforeAll(async () => {
    gh.permissions.set('octocat', 'write');
    // Command jobs come from recorded comment deliveries.
    for (let i = 1; i <= 20; i++)
      await recordDelivery(app.store.pool, {
        id: `cmd-${i}`,
        event: 'issue_comment',
        action: 'created',
        repositoryId: REPO,
      });
  });

  it('status: the latest check, and where the gates are', async () => {
    await handleCommand(app.deps, job({ kind: 'status' }));
    expect(lastReply()).toMatch(
      /@octocat here is where this pull request stands:\n\n- \*\*Check\*\* at `3333333`: queued\n- \*\*Gates:\*\* the TDD lane keeps them on the branch .*`consort\/gate\/<gate>` status/,
    );
    // Acknowledged with 👀 by the flow the Action uses too (src/github/command-reply.ts).
    expect(gh.calls.filter((c) => c.method === 'react').at(-1)!.args).toEqual([expect.anything(), 9, 'eyes']);
  });

  it('someone without write access gets 😕 and the one refusal text, and nothing runs', async () => {
    const before = (await runsOf(app.store.pool, prSubject(REPO, 2))).length;
    await handleCommand(app.deps, job({ kind: 'retry' }, 'stranger'));
    expect(gh.calls.filter((c) => c.method === 'react').at(-1)!.args).toEqual([expect.anything(), 9, 'confused']);
    expect(lastReply()).toBe(`> /consort retry\n\n@stranger ${REFUSAL}`);
    expect(await runsOf(app.store.pool, prSubject(REPO, 2))).toHaveLength(before);
  });

  it('retry: a new run of the head', async () => {
    const before = (await runsOf(app.store.pool, prSubject(REPO, 2))).length;
    await handleCommand(app.deps, job({ kind: 'retry' }));
    expect(lastReply()).toContain('re-running the database check at `3333333`');
    expect(await runsOf(app.store.pool, prSubject(REPO, 2))).toHaveLength(before + 1);
  });

  it('a pull request opened before the App was installed: retry reads it from GitHub and checks it; allow-run asks to look again', async () => {
    const pull = (number: number, fork: boolean) => ({
      number,
      state: 'open',
      title: 'Older than the App',
      body: '',
      author: 'mona',
      head: { ref: 'feature', sha: sha('e'), repo: fork ? 'mona/r' : 'o/r' },
      base: { ref: 'master', sha: sha('b'), repo: 'o/r' },
    });
    gh.pulls.set(80, pull(80, false));
    await handleCommand(app.deps, { ...job({ kind: 'retry' }), pr: 80 });
    expect(lastReply()).toContain('re-running the database check at `eeeeeee`');
    expect(await getPull(app.store.pool, REPO, 80)).toMatchObject({ state: 'open', headSha: sha('e'), fork: false });
    expect((await runsOf(app.store.pool, prSubject(REPO, 80))).map((r) => [r.kind, r.headSha])).toEqual([
      ['check', sha('e')],
    ]);

    gh.pulls.set(81, pull(81, true));
    await handleCommand(app.deps, { ...job({ kind: 'allow-run' }), pr: 81 });
    expect(lastReply()).toContain(
      'I had not seen this pull request before (it is older than my installation); it is at `eeeeeee`: look at that commit and comment again',
    );
    expect(await getPull(app.store.pool, REPO, 81)).toMatchObject({ fork: true });
    await handleCommand(app.deps, { ...job({ kind: 'allow-run' }), pr: 81 });
    expect(lastReply()).toContain("approved running the fork's code at `eeeeeee`");

    // One GitHub does not know either: the answer says so, nothing is recorded.
    await handleCommand(app.deps, { ...job({ kind: 'retry' }), pr: 82 });
    expect(lastReply()).toContain('I have not seen a push to this pull request yet');
    expect(await getPull(app.store.pool, REPO, 82)).toBeUndefined();
  });

  it('gc, help, unknown and invalid commands', async () => {
    await handleCommand(app.deps, job({ kind: 'gc' }));
    expect(lastReply()).toContain('nothing to clean up');
    await handleCommand(app.deps, job({ kind: 'unknown', name: 'deploy' }));
    expect(lastReply()).toContain('I do not know `/consort deploy`');
    expect(lastReply()).toContain('| `/consort approve <gate>` |');
    await handleCommand(app.deps, job({ kind: 'invalid', name: 'reject', problem: '`reject` needs a reason' }));
    expect(lastReply()).toContain('`reject` needs a reason.');
  });

  it("allow-run on a non-fork says it is not needed; reject explains the TDD lane's gates; a queued gate approval points to the Action", async () => {
    await handleCommand(app.deps, job({ kind: 'allow-run' }));
    expect(lastReply()).toContain('not from a fork');
    // A job queued before allow-run had its own kind.
    await handleCommand(app.deps, job({ kind: 'approve', gate: 'run' }));
    expect(lastReply()).toContain('not from a fork');
    await handleCommand(app.deps, job({ kind: 'reject', gate: 'spec', reason: 'too vague', text: 'spec too vague' }));
    expect(lastReply()).toContain(REJECT_ANSWER);
    await handleCommand(app.deps, job({ kind: 'approve', gate: 'spec' }));
    expect(lastReply()).toContain('`/consort approve spec` is answered by the Consort Action');
  });

  it("a fork's new base needs a new approval: the base's configuration decides what the fork's code may have", async () => {
    const fork = (id: string, o: { action: 'opened' | 'edited'; baseRef?: string; baseFrom?: string }) => ({
      id,
      name: 'pull_request',
      payload: pullRequestPayload({ number: 72, head: sha('d'), base: sha('b'), repositoryId: REPO, fork: true, ...o }),
    });
    await app.intake.pullRequest(fork('fork-base-opened', { action: 'opened' }));
    await handleCommand(app.deps, { ...job({ kind: 'allow-run' }), pr: 72 });
    expect(lastReply()).toContain("approved running the fork's code at `ddddddd`");
    expect(await forkRunApproval(app.store.pool, REPO, 72, sha('d'))).toBeDefined();
    // Its author points it at another branch (one whose configuration passes more to a suite, say).
    await app.intake.pullRequest(fork('fork-base-edited', { action: 'edited', baseRef: 'legacy', baseFrom: 'master' }));
    expect(await forkRunApproval(app.store.pool, REPO, 72, sha('d'))).toBeUndefined();
    const runs = await runsOf(app.store.pool, prSubject(REPO, 72));
    expect(runs.at(-1)).toMatchObject({ baseRef: 'legacy', fork: true, state: 'queued' });
    await handleAnnounce(app.deps, { kind: 'announce', runId: runs.at(-1)!.id });
    expect((await getRun(app.store.pool, runs.at(-1)!.id))!.state).toBe('blocked');
    // An approval written before the new base was learned of does not count for it.
    await handleCommand(app.deps, {
      ...job({ kind: 'allow-run' }),
      pr: 72,
      writtenAt: new Date(Date.now() - 2000).toISOString(),
    });
    expect(await forkRunApproval(app.store.pool, REPO, 72, sha('d'))).toBeUndefined();
  });

  it("a push after the approval on GitHub's clock is not approved, even when the App's clock is behind GitHub's", async () => {
    const github = (s: number) =>
      new Date(Math.floor(Date.now() / 1000) * 1000 + s * 1000).toISOString().replace('.000', '');
    const fork = (action: 'opened' | 'synchronize', head: string, updatedAt: string) => ({
      id: `fork-clock-${action}`,
      name: 'pull_request',
      payload: pullRequestPayload({
        action,
        number: 71,
        head,
        base: sha('b'),
        repositoryId: REPO,
        fork: true,
        updatedAt,
      }),
    });
    await app.intake.pullRequest(fork('opened', sha('a'), github(0)));
    // GitHub's clock runs 10 s ahead of the App's: the comment at +5 s, then a push at +10 s, which the App records at its own "now".
    await app.intake.pullRequest(fork('synchronize', sha('c'), github(10)));
    await handleCommand(app.deps, { ...job({ kind: 'allow-run' }), pr: 71, writtenAt: github(5) });
    expect(lastReply()).toContain(
      'new commits were pushed (now at `ccccccc`) after your comment, so nothing was approved',
    );
    expect(await forkRunApproval(app.store.pool, REPO, 71, sha('c'))).toBeUndefined();
  });

  it('an approval written before the latest push is refused: the author must look again', async () => {
    await app.intake.pullRequest(pr('synchronize', 2, sha('5')));
    const stale = { ...job({ kind: 'allow-run' }), writtenAt: new Date(Date.now() - 60_000).toISOString() };
    await handleCommand(app.deps, stale);
    expect(lastReply()).toContain(
      'new commits were pushed (now at `5555555`) after your comment, so nothing was approved',
    );
  });
});
