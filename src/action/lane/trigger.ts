/**
 * What a workflow run of the TDD lane was asked to do, read from its event alone: build a feature
 * on a pull request (`/consort build <feature>`, the build label, or a manual dispatch) or approve a
 * gate (`/consort approve <gate>`). Anything else — a comment without a command, a bot's comment,
 * an edit, a command for the App — is ignored with a reason. Who asked is checked afterwards,
 * through the API: nothing in the event is trusted for permission.
 */
import { ConsortError } from '../../core/errors.js';
import { type Command, COMMAND_OWNER, describeCommand, parseCommand } from '../../github/commands.js';
import type { PullRequestAsk } from '../../lanes/tdd/index.js';
import type { ActionEvent } from '../context.js';
import type { LaneInputs } from '../inputs.js';

export type LaneRequest = PullRequestAsk | { kind: 'ignore'; why: string };

export function laneRequest(
  mode: 'build' | 'approve',
  event: ActionEvent,
  lane: Pick<LaneInputs, 'feature' | 'pullRequest' | 'buildLabel'>,
): LaneRequest {
  switch (event.kind) {
    case 'issue_comment': {
      if (!event.pullRequest) return { kind: 'ignore', why: `#${event.number} is an issue, not a pull request` };
      if (event.action !== 'created')
        return { kind: 'ignore', why: `the comment was ${event.action} (only new comments carry commands)` };
      // Bots never give commands: not Consort's own comments, not another app's.
      if (event.comment.user.type === 'Bot')
        return { kind: 'ignore', why: `the comment is by a bot (${event.comment.user.login})` };
      const command: Command | null = parseCommand(event.comment.body);
      if (command === null) return { kind: 'ignore', why: 'the comment has no /consort command' };
      if (COMMAND_OWNER[command.kind] !== 'action')
        return { kind: 'ignore', why: `\`${describeCommand(command)}\` is answered by the Consort App` };
      const base = { pr: event.number, actor: event.comment.user, commentId: event.comment.id };
      if (command.kind === 'approve') return { kind: 'approve', ...base, gate: command.gate };
      if (command.kind === 'build') {
        if (mode !== 'build') return { kind: 'ignore', why: '`/consort build` is for mode: build' };
        return { kind: 'build', ...base, feature: command.feature, request: command.request || null, via: 'comment' };
      }
      return { kind: 'ignore', why: `\`${describeCommand(command)}\` is not a TDD lane command` };
    }
    case 'pull_request': {
      if (mode !== 'build') return { kind: 'ignore', why: 'mode: approve runs on comments' };
      if (event.action !== 'labeled' || event.label !== lane.buildLabel)
        return {
          kind: 'ignore',
          why: `the pull request was ${event.action}${event.label ? ` (${event.label})` : ''}, not labeled ${lane.buildLabel}`,
        };
      return {
        kind: 'build',
        pr: event.number,
        feature: lane.feature ?? null,
        request: null,
        actor: event.sender,
        commentId: null,
        via: 'label',
      };
    }
    case 'workflow_dispatch': {
      if (mode !== 'build') return { kind: 'ignore', why: 'mode: approve runs on comments' };
      if (lane.pullRequest === undefined) {
        throw new ConsortError(
          'invalid-input',
          'A manual build needs the pull request to work on, and the pull-request input is empty.',
          {
            hint: 'Add a workflow_dispatch input for it and pass it on: `pull-request: ${{ inputs.pr }}`.',
          },
        );
      }
      return {
        kind: 'build',
        pr: lane.pullRequest,
        feature: lane.feature ?? null,
        request: null,
        actor: event.sender,
        commentId: null,
        via: 'dispatch',
      };
    }
    default:
      return {
        kind: 'ignore',
        why: `mode: ${mode} runs on issue_comment, pull_request (labeled) and workflow_dispatch, not ${event.kind === 'other' ? event.name : event.kind}`,
      };
  }
}
