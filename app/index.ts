/** The Consort GitHub App: which webhook goes to which handler. Nothing else lives here. */
import type { ApplicationFunction } from 'probot';
import type { Intake } from './intake.js';
import {
  onCheckRunRerequested,
  onCheckSuiteRerequested,
  onComment,
  onInstallationRemoved,
  onMergeGroup,
  onPullRequest,
} from './handlers.js';

export function consortApp(intake: Intake): ApplicationFunction {
  return (app) => {
    // edited: only a changed base leads to a check (the intake decides).
    app.on(
      [
        'pull_request.opened',
        'pull_request.synchronize',
        'pull_request.reopened',
        'pull_request.edited',
        'pull_request.closed',
      ],
      onPullRequest(intake),
    );
    app.on(['merge_group.checks_requested', 'merge_group.destroyed'], onMergeGroup(intake));
    app.on('check_run.rerequested', onCheckRunRerequested(intake));
    app.on('check_suite.rerequested', onCheckSuiteRerequested(intake));
    app.on(['issue_comment.created', 'issue_comment.edited'], onComment(intake));
    // Sent to every App without a subscription: nothing reaches these repositories' pull requests again.
    app.on(['installation.deleted', 'installation_repositories.removed'], onInstallationRemoved(intake));
  };
}
