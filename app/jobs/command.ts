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
import { forkRunApproval, getPull, upsertPull, type PullRecord } from '../store/pulls.js';
import { isGitHubApiError, type GitHubPort } from '../../src/ports/github.js';
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
  const learned = await learnPull(deps, gh, job);
  if (learned && job.command.kind === 'allow-run') {
    // What the approver saw cannot be told from what GitHub says now: they look again, and the App knows the head from here on.
    await reply(
      gh,
      request,
      `I had not seen this pull request before (it is older than my installation); it is at \`${learned.headSha.slice(0, 7)}\`: look at that commit and comment again.`,
    );
    return;
  }
  await reply(gh, request, await execute(deps, job));
}

/**
 * A pull request opened before the App was installed sent it no webhook: for the commands that act
 * on it (`retry`, `allow-run`), it is read from GitHub and recorded. The pull request just recorded,
 * or null when the App knew it already (or GitHub does not).
 */
async function learnPull(deps: JobDeps, gh: GitHubPort, job: CommandJob): Promise<PullRecord | null> {
  if (job.command.kind !== 'retry' && job.command.kind !== 'allow-run') return null;
  if (await getPull(deps.store.pool, job.repositoryId, job.pr)) return null;
  const p = await gh.pull(job, job.pr).catch((e: unknown) => {
    if (isGitHubApiError(e, 404)) return null;
    throw e;
  });
  if (p === null || p.state !== 'open') return null;
  const { pull } = await upsertPull(deps.store.pool, {
    repositoryId: job.repositoryId,
    installationId: job.installationId,
    owner: job.owner,
    repo: job.repo,
    number: job.pr,
    headSha: p.head.sha,
    headRef: p.head.ref,
    baseSha: p.base.sha,
    baseRef: p.base.ref,
    // A deleted fork has no head repository: still a fork.
    fork: p.head.repo !== p.base.repo,
    state: 'open',
  });
  return pull;
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
