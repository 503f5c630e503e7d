/**
 * The slice of the Neon API v2 that Consort uses, as zod schemas of the documented responses,
 * and the mapping of its failures to errors that say what to do. Unknown fields are ignored.
 */
import { z } from 'zod';
import { ConsortError } from '../../core/errors.js';
import type { HttpFailure } from '../http/json-client.js';

export const Branch = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  parent_id: z.string().nullish(),
  default: z.boolean().optional(),
  primary: z.boolean().optional(),
  created_at: z.string().min(1),
  expires_at: z.string().nullish(),
  current_state: z.string().optional(),
});
export type Branch = z.infer<typeof Branch>;

export const Operation = z.object({
  id: z.string().min(1),
  status: z.string().min(1),
  action: z.string().optional(),
  error: z.string().optional(),
  failures_count: z.number().optional(),
});
export type Operation = z.infer<typeof Operation>;

export const Endpoint = z.object({ id: z.string().min(1), branch_id: z.string(), type: z.string(), host: z.string() });

export const BranchOperations = z.object({ branch: Branch, operations: z.array(Operation).default([]) });
export const CreatedBranch = BranchOperations.extend({ endpoints: z.array(Endpoint).default([]) });
export const ListBranches = z.object({
  branches: z.array(Branch),
  annotations: z.record(z.string(), z.object({ value: z.record(z.string(), z.string()) })).optional(),
  pagination: z.object({ next: z.string().optional() }).optional(),
});
export const Endpoints = z.object({ endpoints: z.array(Endpoint) });
export const BranchResponse = z.object({ branch: Branch });
export const ProjectResponse = z.object({
  project: z.object({ id: z.string(), name: z.string().optional(), pg_version: z.number().optional() }),
});
export const ConnectionUri = z.object({ uri: z.string().min(1) });
export const OperationResponse = z.object({ operation: Operation });

/** The body of `createProjectBranch` (BranchCreateRequest & AnnotationCreateValueRequest in the OpenAPI file). */
export interface BranchCreateBody {
  branch: { name: string; parent_id: string; parent_timestamp?: string; expires_at?: string };
  endpoints: { type: 'read_write' }[];
  annotation_value: Record<string, string>;
}

/** The body of `restoreProjectBranch` (BranchRestoreRequest). */
export interface BranchRestoreBody {
  source_branch_id: string;
  preserve_under_name?: string;
}

export function createBody(
  options: { name: string; parentId: string; at?: Date; ttlMs?: number },
  annotations: Record<string, string>,
  now: number,
): BranchCreateBody {
  return {
    branch: {
      name: options.name,
      parent_id: options.parentId,
      ...(options.at ? { parent_timestamp: options.at.toISOString() } : {}),
      // RFC 3339 with precision up to seconds, as the API asks.
      ...(options.ttlMs !== undefined
        ? { expires_at: new Date(now + options.ttlMs).toISOString().replace(/\.\d{3}Z$/, 'Z') }
        : {}),
    },
    endpoints: [{ type: 'read_write' }],
    annotation_value: annotations,
  };
}

/** Operation statuses after which nothing more will happen. */
export const FINISHED = new Set(['finished', 'skipped']);
export const FAILED = new Set(['cancelled', 'error']);

/** 423 (another operation holds the project), 429 and 5xx are worth another attempt. */
export function retryable(f: HttpFailure): boolean {
  return f.status === 423 || f.status === 429 || f.status >= 500;
}

const ErrorBody = z.object({ code: z.string().optional(), message: z.string().optional() });

export function describeFailure(projectId: string): (f: HttpFailure) => Error {
  return (f) => {
    const parsed = ErrorBody.safeParse(f.body);
    const message = parsed.success ? parsed.data.message : typeof f.body === 'string' ? f.body : undefined;
    const detail = message ? `: ${message}` : '';
    const what = `${f.method} ${f.path}`;
    if (f.status === 401) {
      return new ConsortError('auth', `Neon rejected the API key (HTTP 401 on ${what})${detail}.`, {
        hint: 'Check NEON_API_KEY: it may be revoked or mistyped; create a new one in the Neon Console → API keys.',
      });
    }
    if (f.status === 403) {
      return new ConsortError(
        'auth',
        `The Neon API key may not access project "${projectId}" (HTTP 403 on ${what})${detail}.`,
        {
          hint: 'Use a key of the organization that owns the project (or a project-scoped key for it).',
        },
      );
    }
    if (f.status === 404 && f.path === `/projects/${projectId}`) {
      return new ConsortError(
        'project-not-found',
        `The Neon project "${projectId}" does not exist or the key cannot see it${detail}.`,
        {
          hint: 'Check NEON_PROJECT_ID (the id, e.g. "shiny-wind-028834", not the name) and that NEON_API_KEY belongs to its organization.',
        },
      );
    }
    if (/quota|exceeded .*(storage|compute)|(storage|compute).*exceeded/i.test(message ?? '')) {
      return new ConsortError('quota-exceeded', `Neon quota reached (${what})${detail}.`, {
        hint: "Delete branches you no longer need (`consort branch gc`), or raise the plan's limits in the Neon Console → Billing.",
      });
    }
    if (/branch(es)?.*limit|limit.*branch/i.test(message ?? '')) {
      return new ConsortError(
        'branch-limit',
        `The Neon project "${projectId}" has reached its branch limit (${what})${detail}.`,
        {
          hint: 'Delete old branches (`consort branch gc` removes expired ones), give temporary branches a shorter --ttl, or upgrade the plan.',
        },
      );
    }
    if (f.status === 404)
      return new ConsortError('branch-not-found', `Not found (${what})${detail}.`, {
        hint: 'List branches with `consort branch list`.',
      });
    if (f.status === 409)
      return new ConsortError('branch-exists', `Already exists (${what})${detail}.`, {
        hint: 'Use it, reset it, or delete it first.',
      });
    if (f.status === 423) {
      return new ConsortError(
        'service-error',
        `Neon kept the project locked by another operation (${what})${detail}.`,
        {
          hint: 'Another change to the project is still running: wait for it (Neon Console → Operations), then retry.',
        },
      );
    }
    if (f.status === 429)
      return new ConsortError('service-error', `Neon kept rate-limiting Consort (${what})${detail}.`, {
        hint: 'Run fewer checks at once, then retry.',
      });
    if (f.status === 400 || f.status === 422)
      return new ConsortError('invalid-input', `Neon refused the request (${what})${detail}.`, {
        hint: "Check the branch name, parent and TTL, and that a point in time (--at) is within the project's history retention and not in the future.",
      });
    return new ConsortError('service-error', `Neon failed (HTTP ${f.status} on ${what})${detail}.`, {
      hint: 'Retry; if it persists, check https://neonstatus.com.',
    });
  };
}
