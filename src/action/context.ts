/**
 * What GitHub tells a running Action — the runner's environment variables and the event payload
 * (GITHUB_EVENT_PATH) — parsed once into a typed context. Only the fields Consort uses are read,
 * with the shape GitHub documents for each event.
 */
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { z } from 'zod';
import { ConsortError } from '../core/errors.js';
import type { RepoRef } from '../ports/github.js';

export interface GitPoint {
  ref: string;
  sha: string;
}

export type ActionEvent =
  /** `pull_request`, or `pull_request_target` (target: true: a privileged run on the base's code). */
  | {
      kind: 'pull_request';
      target: boolean;
      action: string;
      number: number;
      base: GitPoint;
      head: GitPoint;
      fork: boolean;
      label: string | null;
      sender: Actor;
    }
  /** A comment on an issue or pull request (`pullRequest` tells which). */
  | {
      kind: 'issue_comment';
      action: string;
      number: number;
      pullRequest: boolean;
      comment: { id: number; body: string; user: Actor };
    }
  /** A manual run; `inputs` are the workflow's own dispatch inputs. */
  | { kind: 'workflow_dispatch'; ref: string; inputs: Record<string, string>; sender: Actor }
  | { kind: 'merge_group'; base: GitPoint; head: GitPoint }
  | { kind: 'push'; ref: string; before: string | null; after: string }
  /** workflow_dispatch, schedule, …: the checked-out HEAD is the change. */
  | { kind: 'other'; name: string };

/** Who did something: a login and whether it is a person or a bot. */
export interface Actor {
  login: string;
  type: string;
}

export interface ActionContext {
  eventName: string;
  event: ActionEvent;
  workspace: string;
  repo: RepoRef;
  runnerTemp: string;
  apiUrl: string;
  /** e.g. https://github.com (GITHUB_SERVER_URL): where git pushes go. */
  serverUrl: string;
  /** Link to this workflow run, for the report. */
  runUrl: string | undefined;
  /** Set on GitHub runners; the job summary is written only then. */
  stepSummary: string | undefined;
}

const Env = z.object({
  GITHUB_EVENT_NAME: z.string().min(1),
  GITHUB_EVENT_PATH: z.string().min(1),
  GITHUB_WORKSPACE: z.string().min(1),
  GITHUB_REPOSITORY: z.string().regex(/^[^/\s]+\/[^/\s]+$/, { error: 'must be owner/name' }),
  RUNNER_TEMP: z.string().min(1).optional(),
  GITHUB_API_URL: z.url().optional(),
  GITHUB_SERVER_URL: z.url().optional(),
  GITHUB_RUN_ID: z.string().optional(),
  GITHUB_STEP_SUMMARY: z.string().min(1).optional(),
});

const Point = z.object({ ref: z.string(), sha: z.string().regex(/^[0-9a-f]{40,64}$/) });
const PullRequestPayload = z.object({
  action: z.string(),
  number: z.number().int().positive(),
  pull_request: z.object({
    base: Point.extend({ repo: z.object({ full_name: z.string() }) }),
    head: Point.extend({ repo: z.object({ full_name: z.string() }).nullable() }),
  }),
});
const ActorShape = z.object({ login: z.string(), type: z.string() });
const PullRequestExtras = z.object({ label: z.object({ name: z.string() }).optional(), sender: ActorShape });
const IssueCommentPayload = z.object({
  action: z.string(),
  issue: z.object({ number: z.number().int().positive(), pull_request: z.object({}).loose().optional() }),
  comment: z.object({ id: z.number().int(), body: z.string().nullable(), user: ActorShape.nullable() }),
});
const DispatchPayload = z.object({
  ref: z.string(),
  inputs: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
    .nullable()
    .optional(),
  sender: ActorShape,
});
const MergeGroupPayload = z.object({
  merge_group: z.object({
    base_sha: Point.shape.sha,
    base_ref: z.string(),
    head_sha: Point.shape.sha,
    head_ref: z.string(),
  }),
});
const PushPayload = z.object({ ref: z.string(), before: z.string(), after: Point.shape.sha });

const NULL_SHA = /^0+$/;

export function parseEvent(name: string, payload: unknown): ActionEvent {
  const parse = <T extends z.ZodType>(schema: T): z.output<T> => {
    const r = schema.safeParse(payload);
    if (r.success) return r.data;
    const where = r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new ConsortError('invalid-input', `The ${name} event payload is not what GitHub sends (${where}).`, {
      hint: 'Run Consort from a workflow triggered by that event.',
    });
  };
  switch (name) {
    case 'pull_request':
    case 'pull_request_target': {
      const p = parse(PullRequestPayload);
      const extras = parse(PullRequestExtras);
      const { base, head } = p.pull_request;
      return {
        kind: 'pull_request',
        target: name === 'pull_request_target',
        action: p.action,
        number: p.number,
        base: { ref: base.ref, sha: base.sha },
        head: { ref: head.ref, sha: head.sha },
        // A deleted fork has no head repository: still a fork, never trusted.
        fork: head.repo === null || head.repo.full_name !== base.repo.full_name,
        label: extras.label?.name ?? null,
        sender: extras.sender,
      };
    }
    case 'issue_comment': {
      const p = parse(IssueCommentPayload);
      return {
        kind: 'issue_comment',
        action: p.action,
        number: p.issue.number,
        pullRequest: p.issue.pull_request !== undefined,
        // A deleted account's comment has no user: nobody can be trusted with it.
        comment: {
          id: p.comment.id,
          body: p.comment.body ?? '',
          user: p.comment.user ?? { login: 'ghost', type: 'User' },
        },
      };
    }
    case 'workflow_dispatch': {
      const p = parse(DispatchPayload);
      return {
        kind: 'workflow_dispatch',
        ref: p.ref,
        inputs: Object.fromEntries(Object.entries(p.inputs ?? {}).map(([k, v]) => [k, String(v)])),
        sender: p.sender,
      };
    }
    case 'merge_group': {
      const g = parse(MergeGroupPayload).merge_group;
      return {
        kind: 'merge_group',
        base: { ref: g.base_ref, sha: g.base_sha },
        head: { ref: g.head_ref, sha: g.head_sha },
      };
    }
    case 'push': {
      const p = parse(PushPayload);
      return { kind: 'push', ref: p.ref, before: NULL_SHA.test(p.before) ? null : p.before, after: p.after };
    }
    default:
      return { kind: 'other', name };
  }
}

export async function readActionContext(env: NodeJS.ProcessEnv): Promise<ActionContext> {
  const parsed = Env.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (i) => `${String(i.path[0])} ${i.code === 'invalid_type' || i.code === 'too_small' ? 'is not set' : i.message}`,
    );
    throw new ConsortError('invalid-input', `Not running as a GitHub Action: ${problems.join('; ')}.`, {
      hint: 'Run it with `uses:` in a workflow; locally, use the consort CLI (consort check).',
    });
  }
  const e = parsed.data;
  let payload: unknown;
  try {
    payload = JSON.parse(await readFile(e.GITHUB_EVENT_PATH, 'utf8'));
  } catch (cause) {
    throw new ConsortError('invalid-input', `Cannot read the event payload ${e.GITHUB_EVENT_PATH}.`, {
      hint: 'GITHUB_EVENT_PATH must name the JSON file GitHub wrote.',
      cause,
    });
  }
  const [owner, repo] = e.GITHUB_REPOSITORY.split('/') as [string, string];
  const server = e.GITHUB_SERVER_URL ?? 'https://github.com';
  return {
    eventName: e.GITHUB_EVENT_NAME,
    event: parseEvent(e.GITHUB_EVENT_NAME, payload),
    workspace: e.GITHUB_WORKSPACE,
    repo: { owner, repo },
    runnerTemp: e.RUNNER_TEMP ?? os.tmpdir(),
    apiUrl: e.GITHUB_API_URL ?? 'https://api.github.com',
    serverUrl: server.replace(/\/+$/, ''),
    runUrl: e.GITHUB_RUN_ID
      ? `${server.replace(/\/+$/, '')}/${owner}/${repo}/actions/runs/${e.GITHUB_RUN_ID}`
      : undefined,
    stepSummary: e.GITHUB_STEP_SUMMARY,
  };
}

/** Runner credentials the project's suite has no business seeing (it may be a PR's untrusted code). */
const HIDDEN_FROM_SUITE =
  /^(INPUT_.*|ACTIONS_RUNTIME_TOKEN|ACTIONS_ID_TOKEN_REQUEST_TOKEN|ACTIONS_ID_TOKEN_REQUEST_URL|ACTIONS_CACHE_URL|ACTIONS_RESULTS_URL|CONSORT_POSTGRES_URL|GITHUB_TOKEN|GH_TOKEN)$/;

export function suiteEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([key]) => !HIDDEN_FROM_SUITE.test(key)));
}

/** What the project's suite sees in the TDD lane: neither GitHub tokens nor the agents' API keys (`keys`: agentKeyEnvNames). */
export function laneSuiteEnv(env: NodeJS.ProcessEnv, keys: readonly string[]): NodeJS.ProcessEnv {
  const out = suiteEnv(env);
  for (const key of keys) delete out[key];
  return out;
}
