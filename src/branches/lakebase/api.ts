/**
 * The slice of the Databricks Postgres API (`/api/2.0/postgres/…`, Lakebase Autoscaling) that
 * Consort uses, as zod schemas of the documented responses, and the mapping of its failures to
 * errors that say what to do. Field names follow the Databricks SDKs' `postgres` service (Branch,
 * BranchSpec, BranchStatus, Endpoint, Operation, DatabaseCredential). Fields Consort does not read
 * are ignored, so additions to the API do not break it; a missing field it needs is a clear
 * "unexpected response" error.
 */
import { z } from 'zod';
import { ConsortError } from '../../core/errors.js';
import type { HttpFailure } from '../http/json-client.js';

export const Branch = z.object({
  name: z.string().min(1),
  branch_id: z.string().optional(),
  create_time: z.string().optional(),
  spec: z.object({ source_branch: z.string().optional(), expire_time: z.string().optional() }).optional(),
  status: z
    .object({
      default: z.boolean().optional(),
      source_branch: z.string().optional(),
      expire_time: z.string().optional(),
      current_state: z.string().optional(),
      /** Set when the branch is soft-deleted (restorable until `purge_time`; its id stays taken until purged). */
      delete_time: z.string().optional(),
    })
    .optional(),
});
export type Branch = z.infer<typeof Branch>;

export const Endpoint = z.object({
  name: z.string().min(1),
  spec: z.object({ endpoint_type: z.string().optional() }).optional(),
  status: z
    .object({
      endpoint_type: z.string().optional(),
      current_state: z.string().optional(),
      hosts: z.object({ host: z.string().optional() }).optional(),
    })
    .optional(),
});
export type Endpoint = z.infer<typeof Endpoint>;

const OperationError = z.object({ error_code: z.string().optional(), message: z.string().optional() });
export const Operation = z.object({
  name: z.string().min(1),
  done: z.boolean().optional(),
  error: OperationError.optional(),
  response: z.unknown().optional(),
});
export type Operation = z.infer<typeof Operation>;

export const ListBranches = z.object({ branches: z.array(Branch).optional(), next_page_token: z.string().optional() });
export const ListEndpoints = z.object({
  endpoints: z.array(Endpoint).optional(),
  next_page_token: z.string().optional(),
});
export const Project = z.object({
  name: z.string().min(1),
  status: z
    .object({
      pg_version: z.number().optional(),
      default_branch: z.string().optional(),
      display_name: z.string().optional(),
    })
    .optional(),
});
export const Credential = z.object({ token: z.string().min(1), expire_time: z.string().min(1) });
export const Me = z.object({ userName: z.string().min(1) });

export const READ_WRITE = 'ENDPOINT_TYPE_READ_WRITE';

/** The last segment of a resource name (`projects/p/branches/b` → `b`). */
export function lastSegment(resource: string): string {
  return resource.slice(resource.lastIndexOf('/') + 1);
}

/** A soft-deleted branch is gone for Consort, though its id stays taken until it is purged. */
export function isDeleted(b: Branch): boolean {
  return b.status?.current_state === 'DELETED' || b.status?.delete_time !== undefined;
}

/**
 * Quota answers: no amount of waiting fixes them. `RESOURCE_EXHAUSTED` is not one of them — it is
 * Databricks' per-user rate limit (HTTP 429, `ResourceExhausted` in the SDKs) and is retried.
 */
const QUOTA = new Set(['QUOTA_EXCEEDED']);
const LIMIT = new Set(['RESOURCE_LIMIT_EXCEEDED']);

/** 429 (RESOURCE_EXHAUSTED, REQUEST_LIMIT_EXCEEDED, …) and 5xx are transient — quota answers are not. */
export function retryable(f: HttpFailure): boolean {
  const code = errorBody(f.body).code;
  if (code && (QUOTA.has(code) || LIMIT.has(code))) return false;
  return f.status === 429 || f.status >= 500;
}

function errorBody(body: unknown): { code: string | undefined; message: string | undefined } {
  const parsed = OperationError.safeParse(body);
  return parsed.success
    ? { code: parsed.data.error_code, message: parsed.data.message }
    : { code: undefined, message: typeof body === 'string' && body ? body : undefined };
}

/** A failed call or operation as a ConsortError with what to do. */
export function lakebaseError(
  project: string,
  status: number,
  code: string | undefined,
  message: string | undefined,
  what: string,
): ConsortError {
  const detail = message ? `: ${message}` : '';
  if (status === 401 || code === 'UNAUTHENTICATED') {
    return new ConsortError('auth', `Databricks rejected the credentials while ${what} (HTTP 401)${detail}.`, {
      hint: 'Check DATABRICKS_TOKEN (not expired, from this workspace) or DATABRICKS_CLIENT_ID/DATABRICKS_CLIENT_SECRET, and DATABRICKS_HOST.',
    });
  }
  if (status === 403 || code === 'PERMISSION_DENIED') {
    return new ConsortError('auth', `The Databricks identity may not do this while ${what}${detail}.`, {
      hint: `Grant it CAN MANAGE on the Lakebase project "${project}" (Lakebase App → project → Permissions); listing needs CAN USE.`,
    });
  }
  if (code && QUOTA.has(code)) {
    return new ConsortError('quota-exceeded', `Lakebase quota reached while ${what}${detail}.`, {
      hint: "Delete branches you no longer need (`consort branch gc`, `consort branch list`) or raise the workspace's Lakebase quota.",
    });
  }
  if ((code && LIMIT.has(code)) || /branch(es)? limit|limit .*branches|too many branches/i.test(message ?? '')) {
    return new ConsortError(
      'branch-limit',
      `The Lakebase project "${project}" has reached its branch limit while ${what}${detail}.`,
      {
        hint: 'Delete old branches (`consort branch gc` removes expired ones), or give temporary branches a shorter --ttl.',
      },
    );
  }
  if (status === 404 || code === 'NOT_FOUND' || code === 'RESOURCE_DOES_NOT_EXIST') {
    return new ConsortError('branch-not-found', `Not found while ${what}${detail}.`, {
      hint: 'List branches with `consort branch list`.',
    });
  }
  if (status === 409 || code === 'ALREADY_EXISTS' || code === 'RESOURCE_ALREADY_EXISTS') {
    return new ConsortError('branch-exists', `Already exists while ${what}${detail}.`, {
      hint: 'Use it, reset it, or delete it first.',
    });
  }
  if (status === 400 || code === 'INVALID_PARAMETER_VALUE' || code === 'BAD_REQUEST') {
    return new ConsortError('invalid-input', `Lakebase refused the request while ${what}${detail}.`, {
      hint: "Check the branch name, parent and TTL, and that a point in time (--at) is within the project's history retention and not in the future.",
    });
  }
  if (status === 429 || code === 'RESOURCE_EXHAUSTED') {
    return new ConsortError('service-error', `Lakebase kept rate-limiting Consort while ${what}${detail}.`, {
      hint: 'Databricks limits API requests per user: run fewer checks at once (or give CI its own service principal), then retry.',
    });
  }
  return new ConsortError(
    'service-error',
    `Lakebase failed while ${what} (HTTP ${status}${code ? ` ${code}` : ''})${detail}.`,
    {
      hint: 'Retry; if it persists, check the workspace status and the Lakebase App.',
    },
  );
}

export function describeFailure(project: string): (f: HttpFailure) => Error {
  return (f) => {
    const { code, message } = errorBody(f.body);
    if (f.status === 404 && f.path === `/api/2.0/postgres/projects/${project}`) {
      return new ConsortError(
        'project-not-found',
        `The Lakebase project "${project}" does not exist in this workspace${message ? `: ${message}` : ''}.`,
        {
          hint: 'Check CONSORT_LAKEBASE_PROJECT (the id in projects/<id>) and DATABRICKS_HOST; the identity needs at least CAN USE on it.',
        },
      );
    }
    return lakebaseError(project, f.status, code, message, `calling ${f.method} ${f.path}`);
  };
}
