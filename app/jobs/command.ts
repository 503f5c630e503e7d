/**
 * A `/consort` command the App answers (COMMAND_OWNER): admitted by the flow the Action uses too
 * (src/github/command-reply.ts — permission through the API, 😕 and the refusal, or 👀), carried
 * out, and answered in one reply.
 */
import type { CommandJob } from '../queue.js';
import { admitCommand, reply, type CommandRequest } from '../../src/github/command-reply.js';
import { describeCommand, HELP_TEXT } from '../../src/github/commands.js';
import { gateStatusContext } from '../../src/conductor/gates.js';
import { recordPullCheck } from '../intake.js';
import { forkRunApproval, getPull } from '../store/pulls.js';
import { latestRun, prSubject } from '../store/runs.js';
import type { JobDeps } from './deps.js';
import { allowForkRun, REJECT_ANSWER } from './fork-run.js';
import { sweepRepository } from './sweep.js';
import { count } from '../../src/core/plural.js';

export async function handleCommand(deps: JobDeps, job: CommandJob): Promise<void> {
  const gh = await deps.github(job.installationId, { deliveryId: job.deliveryId });
  const request: CommandRequest = {
    repo: { owner: job.owner, repo: job.repo },
    pr: job.pr,
    actor: job.author,
    commentId: job.commentId,
    asked: describeCommand(job.command),
  };
  if (!(await admitCommand(gh, request)).admitted) return;
  await reply(gh, request, await execute(deps, job));
}

async function execute(deps: JobDeps, job: CommandJob): Promise<string> {
  const c = job.command;
  switch (c.kind) {
    case 'allow-run':
      return allowForkRun(deps, job);
    case 'reject':
      return REJECT_ANSWER;
    case 'approve':
      // Queued before `allow-run` had its own kind.
      if (c.gate === 'run') return allowForkRun(deps, job);
      return `\`${describeCommand(c)}\` is answered by the Consort Action's TDD-lane workflow, not by this App.`;
    case 'build':
      // The intake never queues the Action's commands (COMMAND_OWNER); a job queued before that rule is answered once.
      return `\`${describeCommand(c)}\` is answered by the Consort Action's TDD-lane workflow, not by this App.`;
    case 'retry':
      return retry(deps, job);
    case 'status':
      return status(deps, job);
    case 'gc': {
      const { deleted, expired } = await sweepRepository(deps, job);
      const all = [...deleted, ...expired];
      return all.length === 0
        ? 'nothing to clean up: no branches of closed pull requests, none expired.'
        : `deleted ${count(all.length, 'branch', 'branches')}: ${all.map((b) => `\`${b}\``).join(', ')}.`;
    }
    case 'help':
      return `here is what I can do:\n\n${HELP_TEXT}`;
    case 'unknown':
      return `I do not know \`/consort ${c.name}\`.\n\n${HELP_TEXT}`;
    case 'invalid':
      return `${c.problem}.\n\n${HELP_TEXT}`;
  }
}

async function retry(deps: JobDeps, job: CommandJob): Promise<string> {
  const pull = await getPull(deps.store.pool, job.repositoryId, job.pr);
  if (!pull) return 'I have not seen a push to this pull request yet, so there is nothing to re-run.';
  if (pull.state !== 'open') return 'this pull request is closed, so nothing was re-run.';
  await deps.store.tx((tx) => recordPullCheck(tx, deps.queue, pull, job.deliveryId));
  deps.queue.wake();
  const fork = pull.fork && !(await forkRunApproval(deps.store.pool, pull.repositoryId, pull.number, pull.headSha));
  return fork
    ? `re-running at \`${pull.headSha.slice(0, 7)}\`; it is a fork's code, so it waits for \`/consort allow-run\`.`
    : `re-running the database check at \`${pull.headSha.slice(0, 7)}\`.`;
}

async function status(deps: JobDeps, job: CommandJob): Promise<string> {
  const pull = await getPull(deps.store.pool, job.repositoryId, job.pr);
  const run = await latestRun(deps.store.pool, prSubject(job.repositoryId, job.pr));
  const lines = ['here is where this pull request stands:', ''];
  if (!pull || !run) lines.push('- **Check:** none yet (push a commit to start one).');
  else {
    const what =
      run.state === 'completed' || run.state === 'cancelled'
        ? `${run.conclusion ?? run.state}${run.summary ? ` — ${run.summary}` : ''}`
        : run.state;
    lines.push(`- **Check** at \`${run.headSha.slice(0, 7)}\`: ${what}`);
    if (pull.fork) {
      const approval = await forkRunApproval(deps.store.pool, pull.repositoryId, pull.number, pull.headSha);
      lines.push(
        `- **Fork:** ${approval ? `running \`${pull.headSha.slice(0, 7)}\` approved by @${approval.approver}` : 'waiting for `/consort allow-run`'}`,
      );
    }
  }
  lines.push(
    `- **Gates:** the TDD lane keeps them on the branch (\`.consort/features/<feature>/gates.json\`) and publishes each as the \`${gateStatusContext('<gate>')}\` status of the head commit.`,
  );
  return lines.join('\n');
}
