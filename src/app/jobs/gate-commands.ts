/**
 * `/consort approve` and `/consort reject`: gate decisions, and the fork-run approval
 * (`/consort approve run`). An approval binds to the head commit its author could have seen: if
 * the App learned of a newer head after the comment was written, the approval is refused and the
 * author asked to look again. Each decision is published as the gate's commit status.
 */
import type { CommandJob } from '../queue.js';
import type { Command } from '../../github/commands.js';
import type { GitHubApi } from '../github.js';
import { recordPullCheck } from '../intake.js';
import { publishGateStatuses } from '../publish.js';
import { decideGate, FORK_RUN_GATE, listGates, type Gate } from '../store/gates.js';
import { approveForkRun, forkRunApproval, getPull, type PullRecord } from '../store/pulls.js';
import type { JobDeps } from './deps.js';

const sha7 = (sha: string): string => `\`${sha.slice(0, 7)}\``;
const names = (gates: readonly Gate[]): string => gates.map((g) => `\`${g.name}\` (${g.state})`).join(', ');

type PullCheck = { ok: true; pull: PullRecord } | { ok: false; answer: string };

/** The open pull request, unless its head moved after the comment was written. */
async function currentPull(deps: JobDeps, job: CommandJob): Promise<PullCheck> {
  const pull = await getPull(deps.store.pool, job.repositoryId, job.pr);
  if (!pull) return { ok: false, answer: 'I have not seen a push to this pull request yet, so there is nothing to act on.' };
  if (pull.state !== 'open') return { ok: false, answer: 'this pull request is closed, so nothing was done.' };
  if (pull.headRecordedAt.getTime() > Date.parse(job.writtenAt)) {
    return { ok: false, answer: `new commits were pushed (now at ${sha7(pull.headSha)}) after your comment, so nothing was approved: look at them and comment again.` };
  }
  return { ok: true, pull };
}

async function approveRun(deps: JobDeps, job: CommandJob): Promise<string> {
  const current = await currentPull(deps, job);
  if (!current.ok) return current.answer;
  const { pull } = current;
  if (!pull.fork) return 'this pull request is not from a fork: its checks run without approval.';
  if (await forkRunApproval(deps.store.pool, pull.repositoryId, pull.number, pull.headSha)) return `running the fork's code at ${sha7(pull.headSha)} is already approved.`;
  await deps.store.tx(async (tx) => {
    await approveForkRun(tx, pull.repositoryId, pull.number, pull.headSha, job.author);
    await recordPullCheck(tx, deps.queue, pull, job.deliveryId);
  });
  deps.queue.wake();
  return `approved running the fork's code at ${sha7(pull.headSha)}; the database check is starting. Every new push needs a new approval.`;
}

/** The gate a command means: the named one, or the only one waiting when none is named. */
function pickGate(gates: readonly Gate[], name: string | null, verb: string): { gate: Gate } | { answer: string } {
  if (name !== null) {
    const gate = gates.find((g) => g.name === name);
    if (gate) return { gate };
    return { answer: gates.length === 0 ? `this pull request has no gates, so there is no \`${name}\` to ${verb}.` : `there is no gate \`${name}\` here; the gates are ${names(gates)}.` };
  }
  const waiting = gates.filter((g) => g.state === 'pending' || g.state === 'stale');
  if (waiting.length === 1) return { gate: waiting[0]! };
  if (waiting.length === 0) return { answer: gates.length === 0 ? `this pull request has no gates to ${verb}.` : `no gate is waiting; the gates are ${names(gates)}.` };
  return { answer: `several gates are waiting (${names(waiting)}); say which: \`/consort ${verb} <gate>\`.` };
}

async function decide(deps: JobDeps, gh: GitHubApi, job: CommandJob, gateName: string | null, decision: 'approved' | 'rejected', reason: string | null): Promise<string> {
  const current = await currentPull(deps, job);
  if (!current.ok) return current.answer;
  const { pull } = current;
  const gates = await listGates(deps.store.pool, job.repositoryId, job.pr);
  const picked = pickGate(gates, gateName, decision === 'approved' ? 'approve' : 'reject');
  if ('answer' in picked) return picked.answer;
  const gate = await deps.store.tx((tx) => decideGate(tx, picked.gate.id, { decision, actor: job.author, headSha: pull.headSha, reason }));
  await publishGateStatuses(gh, job, [gate], pull.headSha);
  const on = `at ${sha7(pull.headSha)} (artifacts \`${gate.artifactHash.slice(0, 12)}\`)`;
  return decision === 'approved'
    ? `approved gate \`${gate.name}\` ${on}. A new push or changed artifacts make this approval stale.`
    : `rejected gate \`${gate.name}\` ${on}: ${reason ?? ''}`;
}

export async function gateCommand(deps: JobDeps, gh: GitHubApi, job: CommandJob, command: Extract<Command, { kind: 'approve' | 'reject' }>): Promise<string> {
  if (command.kind === 'approve') {
    if (command.gate === FORK_RUN_GATE) return approveRun(deps, job);
    return decide(deps, gh, job, command.gate, 'approved', null);
  }
  // `reject spec too vague`: "spec" is the gate only if there is one by that name; else all of it is the reason.
  const gates = await listGates(deps.store.pool, job.repositoryId, job.pr);
  const named = command.gate !== null && gates.some((g) => g.name === command.gate);
  return decide(deps, gh, job, named ? command.gate : null, 'rejected', named ? command.reason : command.text);
}
