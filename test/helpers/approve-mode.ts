/**
 * The Action on an `issue_comment` run, as the runner starts it: the context its entry point builds
 * from the event, and the TDD lane's real ports (src/action/ports.ts) in approve mode, for tests
 * that play the approval path against the stand-in for GitHub's REST API (test/helpers/fake-github.ts).
 */
import type { ActionContext } from '../../src/action/context.js';
import { INPUT, parseInputs } from '../../src/action/inputs.js';
import { tddPorts } from '../../src/action/ports.js';

export interface CommentRun {
  workspace: string;
  runnerTemp: string;
  apiUrl: string;
  owner: string;
  repo: string;
  /** The event as the entry point read it (default: one it does not look into). */
  event?: ActionContext['event'];
}

export function issueCommentContext(run: CommentRun): ActionContext {
  return {
    eventName: 'issue_comment',
    event: run.event ?? { kind: 'other', name: 'issue_comment' },
    workspace: run.workspace,
    repo: { owner: run.owner, repo: run.repo },
    runnerTemp: run.runnerTemp,
    apiUrl: run.apiUrl,
    serverUrl: 'https://github.com',
    runUrl: undefined,
    stepSummary: undefined,
  };
}

/** The approve mode's ports with `token` as the workflow's GITHUB_TOKEN. */
export function approveModePorts(run: CommentRun, token: string): ReturnType<typeof tddPorts> {
  const given: Partial<Record<string, string>> = { [INPUT.mode]: 'approve', [INPUT.githubToken]: token };
  const inputs = parseInputs((name) => given[name] ?? '');
  return tddPorts(inputs, issueCommentContext(run), token, new AbortController().signal);
}
