/**
 * The App's webhook handlers: guard clauses, then one hand-off to the intake (which validates,
 * records and enqueues). They never call GitHub themselves, so a webhook is acknowledged in
 * milliseconds whatever GitHub's latency; the checks run from the queue.
 */
import type { Context } from 'probot';
import type { Intake, IntakeOutcome, WebhookEvent } from './intake.js';

type Named =
  | 'pull_request'
  | 'merge_group'
  | 'check_run'
  | 'check_suite'
  | 'issue_comment'
  | 'installation'
  | 'installation_repositories';

const event = (context: Context<Named>): WebhookEvent => ({
  id: context.id,
  name: context.name,
  payload: context.payload,
});
const logged = (context: Context<Named>, outcome: IntakeOutcome): void => {
  context.log.debug({ delivery: context.id, event: context.name, outcome }, 'consort intake');
};

/** Deliveries to an installation carry it; anything else is not for this App to act on. */
function installed(context: Context<Named>): boolean {
  const p: object = context.payload;
  return (
    'installation' in p &&
    typeof p.installation === 'object' &&
    p.installation !== null &&
    'id' in p.installation &&
    typeof p.installation.id === 'number'
  );
}

export const onPullRequest =
  (intake: Intake) =>
  async (context: Context<'pull_request'>): Promise<void> => {
    if (!installed(context)) return;
    logged(context, await intake.pullRequest(event(context)));
  };

export const onMergeGroup =
  (intake: Intake) =>
  async (context: Context<'merge_group'>): Promise<void> => {
    if (!installed(context)) return;
    logged(context, await intake.mergeGroup(event(context)));
  };

export const onCheckRunRerequested =
  (intake: Intake) =>
  async (context: Context<'check_run'>): Promise<void> => {
    if (!installed(context)) return;
    logged(context, await intake.checkRunRerequested(event(context)));
  };

export const onCheckSuiteRerequested =
  (intake: Intake) =>
  async (context: Context<'check_suite'>): Promise<void> => {
    if (!installed(context)) return;
    logged(context, await intake.checkSuiteRerequested(event(context)));
  };

export const onComment =
  (intake: Intake) =>
  async (context: Context<'issue_comment'>): Promise<void> => {
    if (!installed(context)) return;
    if (context.isBot) return; // the App's own replies, and every other bot
    if (!context.payload.issue.pull_request) return; // commands live on pull requests only
    if (!/\/consort/i.test(context.payload.comment.body ?? '')) return; // most comments: not even a candidate
    logged(context, await intake.comment(event(context)));
  };

/** The App uninstalled, or repositories taken from it (GitHub sends these to every App unasked). */
export const onInstallationRemoved =
  (intake: Intake) =>
  async (context: Context<'installation' | 'installation_repositories'>): Promise<void> => {
    logged(context, await intake.installationRemoved(event(context)));
  };
