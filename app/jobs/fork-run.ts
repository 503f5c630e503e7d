/**
 * `/consort allow-run` (alias `/consort approve run`): let a fork's code run for the current head
 * commit. The approval binds to the head commit its giver could have seen: if the App learned of a
 * newer head after the comment was written, nothing is approved and they are asked to look again.
 * Gates of the TDD lane are not the App's: their records live on the branch and the Action answers
 * `/consort approve <gate>`.
 */
import type { CommandJob } from '../queue.js';
import { recordPullCheck } from '../intake.js';
import { approveForkRun, forkRunApproval, getPull, type PullRecord } from '../store/pulls.js';
import type { JobDeps } from './deps.js';

const sha7 = (sha: string): string => `\`${sha.slice(0, 7)}\``;

type PullCheck = { ok: true; pull: PullRecord } | { ok: false; answer: string };

/** The open pull request, unless its head moved after the comment was written. */
async function currentPull(deps: JobDeps, job: CommandJob): Promise<PullCheck> {
  const pull = await getPull(deps.store.pool, job.repositoryId, job.pr);
  if (!pull)
    return { ok: false, answer: 'I have not seen a push to this pull request yet, so there is nothing to act on.' };
  if (pull.state !== 'open') return { ok: false, answer: 'this pull request is closed, so nothing was done.' };
  // GitHub dates to the second: a push in the same second as the comment may have come after it.
  if (pull.headRecordedAt.getTime() >= Date.parse(job.writtenAt)) {
    return {
      ok: false,
      answer: `new commits were pushed (now at ${sha7(pull.headSha)}) after your comment, so nothing was approved: look at them and comment again.`,
    };
  }
  return { ok: true, pull };
}

export async function allowForkRun(deps: JobDeps, job: CommandJob): Promise<string> {
  const current = await currentPull(deps, job);
  if (!current.ok) return current.answer;
  const { pull } = current;
  if (!pull.fork) return 'this pull request is not from a fork: its checks run without approval.';
  if (await forkRunApproval(deps.store.pool, pull.repositoryId, pull.number, pull.headSha))
    return `running the fork's code at ${sha7(pull.headSha)} is already approved.`;
  await deps.store.tx(async (tx) => {
    await approveForkRun(tx, pull.repositoryId, pull.number, pull.headSha, job.author);
    await recordPullCheck(tx, deps.queue, pull, job.deliveryId);
  });
  deps.queue.wake();
  return `approved running the fork's code at ${sha7(pull.headSha)}; the database check is starting. Every new push needs a new approval.`;
}

/** The TDD lane's gates have no reject: what to do instead. */
export const REJECT_ANSWER =
  "the TDD lane's gates have no reject: a gate stays waiting until someone comments `/consort approve <gate>`. Say what should change in a review; once the artifacts change, the gate is opened again with the new ones.";
