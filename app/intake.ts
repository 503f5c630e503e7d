/**
 * Where webhooks enter the App's core: each function validates its payload, records the delivery,
 * records what should happen and enqueues the job for it — all in one transaction, so a redelivery
 * (same delivery id) finds its row and does nothing, and a crash leaves either everything or
 * nothing. No GitHub call happens here: the handler acknowledges within milliseconds, and the
 * check runs from the queue.
 */
import type pg from 'pg';
import type { z } from 'zod';
import { ConsortError } from '../src/core/errors.js';
import { COMMAND_OWNER, commandOnEdit, describeCommand, parseCommand } from '../src/github/commands.js';
import type { JobQueue } from './queue.js';
import { type Store } from './store/db.js';
import { baseChanged, getPull, openPulls, recordDelivery, upsertPull, type PullRecord } from './store/pulls.js';
import {
  cancelSubject,
  findRunByCheckRun,
  getRun,
  insertRun,
  latestRunAt,
  cancelQueuedCloses,
  cancelRepositories,
  repositoriesOf,
  mergeGroupSubject,
  prSubject,
  type NewRun,
  type Run,
} from './store/runs.js';
import {
  CheckRunPayload,
  CheckSuitePayload,
  InstallationPayload,
  IssueCommentPayload,
  isFork,
  MergeGroupPayload,
  PullRequestPayload,
  repoRef,
} from './payloads.js';

export interface WebhookEvent {
  /** The delivery id (X-GitHub-Delivery): the same for a redelivery. */
  id: string;
  name: string;
  payload: unknown;
}

export type IntakeOutcome =
  | { kind: 'enqueued'; job: 'announce' | 'run' | 'command'; runId?: number }
  | { kind: 'cancelled'; runs: number[] }
  /** The App lost repositories: their live checks cancelled, their open pull requests' branches to delete. */
  | { kind: 'uninstalled'; repositories: number[]; cancelled: number[]; closing: number[] }
  | { kind: 'duplicate' }
  | { kind: 'ignored'; reason: string };

export interface Intake {
  pullRequest(event: WebhookEvent): Promise<IntakeOutcome>;
  mergeGroup(event: WebhookEvent): Promise<IntakeOutcome>;
  checkRunRerequested(event: WebhookEvent): Promise<IntakeOutcome>;
  checkSuiteRerequested(event: WebhookEvent): Promise<IntakeOutcome>;
  comment(event: WebhookEvent): Promise<IntakeOutcome>;
  installationRemoved(event: WebhookEvent): Promise<IntakeOutcome>;
}

const sha7 = (sha: string): string => sha.slice(0, 7);

/** A run of a recorded pull request's head (a close that merges nothing). */
function runOfPull(kind: 'check' | 'close', pull: PullRecord, deliveryId: string | null): NewRun {
  return {
    kind,
    subject: prSubject(pull.repositoryId, pull.number),
    repositoryId: pull.repositoryId,
    installationId: pull.installationId,
    owner: pull.owner,
    repo: pull.repo,
    pr: pull.number,
    headSha: pull.headSha,
    headRef: pull.headRef,
    baseSha: pull.baseSha,
    baseRef: pull.baseRef,
    fork: pull.fork,
    merged: false,
    deliveryId,
  };
}

/** Record a check of a pull request's head and enqueue its announcement; older live checks are cancelled. */
export async function recordPullCheck(
  tx: pg.PoolClient,
  queue: JobQueue,
  pull: PullRecord,
  deliveryId: string | null,
): Promise<Run> {
  const run = await insertRun(
    tx,
    runOfPull('check', pull, deliveryId),
    `superseded by a newer run at ${sha7(pull.headSha)}`,
  );
  await queue.sendQuick({ kind: 'announce', runId: run.id }, tx);
  return run;
}

/**
 * Check `previous`'s commit again ("Re-run" on the check, "Re-run all checks" on the suite): a
 * merge group's run as it was; a pull request's only while it is open and that commit is still
 * its head (an older commit's result no longer gates anything).
 */
async function rerun(
  tx: pg.PoolClient,
  queue: JobQueue,
  previous: Run,
  headSha: string,
  deliveryId: string,
): Promise<IntakeOutcome> {
  if (previous.pr === null) {
    const run = await insertRun(tx, { ...previous, deliveryId }, `superseded by a re-run at ${sha7(previous.headSha)}`);
    await queue.sendQuick({ kind: 'announce', runId: run.id }, tx);
    return { kind: 'enqueued', job: 'announce', runId: run.id };
  }
  const pull = await getPull(tx, previous.repositoryId, previous.pr);
  if (!pull || pull.state !== 'open') return { kind: 'ignored', reason: 'the pull request is closed' };
  if (pull.headSha !== headSha) return { kind: 'ignored', reason: `not the head commit (${sha7(pull.headSha)})` };
  const run = await recordPullCheck(tx, queue, pull, deliveryId);
  return { kind: 'enqueued', job: 'announce', runId: run.id };
}

export interface IntakeOptions {
  /** Also enqueue indexing each pushed head's TDD records for the dashboard. */
  indexRecords?: boolean;
}

export function createIntake(store: Store, queue: JobQueue, options: IntakeOptions = {}): Intake {
  /** One transaction that first claims the delivery id; a redelivery stops there. */
  async function once(
    event: WebhookEvent,
    action: string,
    repositoryId: number | null,
    fn: (tx: pg.PoolClient) => Promise<IntakeOutcome>,
  ): Promise<IntakeOutcome> {
    const outcome = await store.tx(async (tx) => {
      if (!(await recordDelivery(tx, { id: event.id, event: event.name, action, repositoryId })))
        return { kind: 'duplicate' } as const;
      return fn(tx);
    });
    if (outcome.kind === 'enqueued' || (outcome.kind === 'uninstalled' && outcome.closing.length > 0)) queue.wake();
    return outcome;
  }
  const parse = <T>(schema: z.ZodType<T>, event: WebhookEvent): T => {
    const parsed = schema.safeParse(event.payload);
    if (parsed.success) return parsed.data;
    const where = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConsortError(
      'invalid-input',
      `The ${event.name} webhook ${event.id} lacks what the App needs (${where}); nothing was recorded.`,
    );
  };

  return {
    async pullRequest(event) {
      const p = parse(PullRequestPayload, event);
      const pr = p.pull_request;
      const ref = repoRef(p);
      // An edit of the title or body changes nothing the check looks at; a new base changes what it compares with.
      if (p.action === 'edited' && !p.changes?.base)
        return { kind: 'ignored', reason: 'edited without a change of base' };
      return once(event, p.action, ref.repositoryId, async (tx) => {
        const closing = p.action === 'closed';
        const state = closing ? (pr.merged ? 'merged' : 'closed') : 'open';
        const { pull, stale } = await upsertPull(
          tx,
          {
            ...ref,
            number: pr.number,
            headSha: pr.head.sha,
            headRef: pr.head.ref,
            baseSha: pr.base.sha,
            baseRef: pr.base.ref,
            fork: isFork(pr),
            state,
          },
          { at: pr.updated_at, reopens: p.action === 'reopened' || p.action === 'opened' },
        );
        if (!pull)
          return {
            kind: 'ignored',
            reason:
              stale === 'closed'
                ? 'the pull request is closed (only reopening it checks it again)'
                : 'an older event of the pull request than the one recorded (delivered out of order)',
          };
        if (!closing) {
          if (p.action === 'edited') await baseChanged(tx, ref.repositoryId, pr.number, pr.updated_at);
          if (p.action === 'reopened')
            await cancelQueuedCloses(tx, prSubject(ref.repositoryId, pr.number), 'the pull request was reopened');
          const run = await recordPullCheck(tx, queue, pull, event.id);
          if (options.indexRecords)
            await queue.sendQuick(
              { kind: 'index', repositoryId: ref.repositoryId, pr: pr.number, headSha: pr.head.sha },
              tx,
            );
          return { kind: 'enqueued', job: 'announce', runId: run.id };
        }
        const merged = pr.merged === true && typeof pr.merge_commit_sha === 'string';
        // The parent branch holds the default branch's database: a merge into another branch (a
        // stacked pull request's base, a release branch) has not reached it, and promotes nothing.
        const promotes = merged && pr.base.ref === p.repository.default_branch;
        const close: NewRun = {
          kind: 'close',
          subject: prSubject(ref.repositoryId, pr.number),
          ...ref,
          pr: pr.number,
          headSha: merged ? pr.merge_commit_sha! : pr.head.sha,
          headRef: pr.head.ref,
          baseSha: pr.base.sha,
          baseRef: pr.base.ref,
          fork: pull.fork,
          merged: promotes,
          deliveryId: event.id,
        };
        const run = await insertRun(tx, close, 'the pull request was closed');
        await queue.sendRun({ runId: run.id }, tx);
        return { kind: 'enqueued', job: 'run', runId: run.id };
      });
    },

    async mergeGroup(event) {
      const p = parse(MergeGroupPayload, event);
      const g = p.merge_group;
      const ref = repoRef(p);
      const subject = mergeGroupSubject(ref.repositoryId, g.head_ref);
      return once(event, p.action, ref.repositoryId, async (tx) => {
        if (p.action === 'destroyed')
          return {
            kind: 'cancelled',
            runs: await cancelSubject(tx, subject, 'the merge group was destroyed (merged, dequeued or invalidated)'),
          };
        const run = await insertRun(
          tx,
          {
            kind: 'check',
            subject,
            ...ref,
            pr: null,
            headSha: g.head_sha,
            headRef: g.head_ref,
            baseSha: g.base_sha,
            baseRef: g.base_ref,
            fork: false,
            merged: false,
            deliveryId: event.id,
          },
          `superseded by a newer merge group commit ${sha7(g.head_sha)}`,
        );
        await queue.sendQuick({ kind: 'announce', runId: run.id }, tx);
        return { kind: 'enqueued', job: 'announce', runId: run.id };
      });
    },

    async checkRunRerequested(event) {
      const p = parse(CheckRunPayload, event);
      const ref = repoRef(p);
      return once(event, p.action, ref.repositoryId, async (tx) => {
        const external = Number(p.check_run.external_id);
        const previous =
          (await findRunByCheckRun(tx, p.check_run.id)) ??
          (Number.isInteger(external) && external > 0 ? await getRun(tx, external) : undefined);
        if (!previous || previous.repositoryId !== ref.repositoryId || previous.kind !== 'check')
          return { kind: 'ignored', reason: 'not a check run of this App' };
        return rerun(tx, queue, previous, p.check_run.head_sha, event.id);
      });
    },

    async checkSuiteRerequested(event) {
      const p = parse(CheckSuitePayload, event);
      const ref = repoRef(p);
      return once(event, p.action, ref.repositoryId, async (tx) => {
        const previous = await latestRunAt(tx, ref.repositoryId, p.check_suite.head_sha);
        if (!previous) return { kind: 'ignored', reason: `this App never checked ${sha7(p.check_suite.head_sha)}` };
        return rerun(tx, queue, previous, p.check_suite.head_sha, event.id);
      });
    },

    async comment(event) {
      const p = parse(IssueCommentPayload, event);
      if (!p.issue.pull_request) return { kind: 'ignored', reason: 'not a pull request' };
      // An edit is the editor's command, not the author's: someone with write access may edit anyone's comment.
      const actor = p.sender;
      if (p.comment.user?.type === 'Bot' || actor.type === 'Bot')
        return { kind: 'ignored', reason: 'written by a bot' };
      const body = p.comment.body ?? '';
      const command =
        p.action === 'edited'
          ? commandOnEdit(body, p.changes?.body?.from)
          : p.action === 'created'
            ? parseCommand(body)
            : null;
      if (command === null) return { kind: 'ignored', reason: 'no new /consort command' };
      if (COMMAND_OWNER[command.kind] !== 'app')
        return { kind: 'ignored', reason: `\`${describeCommand(command)}\` is answered by the Action` };
      const ref = repoRef(p);
      return once(event, p.action, ref.repositoryId, async (tx) => {
        await queue.sendQuick(
          {
            kind: 'command',
            command: {
              deliveryId: event.id,
              ...ref,
              pr: p.issue.number,
              commentId: p.comment.id,
              author: actor.login,
              writtenAt: p.action === 'edited' ? p.comment.updated_at : p.comment.created_at,
              command,
            },
          },
          tx,
        );
        return { kind: 'enqueued', job: 'command' };
      });
    },

    async installationRemoved(event) {
      const p = parse(InstallationPayload, event);
      return once(event, p.action, null, async (tx) => {
        // Nothing will reach these repositories' pull requests again (no push, no close, no token):
        // their checks stop, and the open ones' branches go now, as a close would remove them.
        const repositories =
          p.action === 'deleted'
            ? await repositoriesOf(tx, p.installation.id)
            : (p.repositories_removed ?? []).map((r) => r.id);
        if (repositories.length === 0) return { kind: 'ignored', reason: 'no repository the App has worked on' };
        const reason = 'the App was uninstalled from the repository';
        const cancelled = await cancelRepositories(tx, repositories, reason);
        const closing: number[] = [];
        for (const pull of await openPulls(tx, repositories)) {
          const run = await insertRun(tx, runOfPull('close', pull, event.id), reason);
          await queue.sendRun({ runId: run.id }, tx);
          closing.push(run.id);
        }
        return { kind: 'uninstalled', repositories, cancelled, closing };
      });
    },
  };
}
