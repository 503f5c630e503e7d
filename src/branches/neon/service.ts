/**
 * Neon as a BranchService (API v2): a branch is created with its read-write endpoint in one call
 * (`parent_id`, optional `parent_timestamp` and `expires_at`), annotated with what made it and by
 * which request; every operation the API returns is polled until it finishes; `restore` from the
 * parent resets a branch in place (keeping the old state under `preserve_under_name` when it has
 * children); the connection URI comes from the API for the configured database and role.
 */
import { randomUUID } from 'node:crypto';
import { ConsortError, isConsortError } from '../../core/errors.js';
import type { ProviderName } from '../../ports/branch-provider.js';
import { createOnce } from '../cloud/create-once.js';
import type {
  BranchService,
  CreateRemoteBranch,
  RemoteBranch,
  RestoreOptions,
  ServiceDescription,
} from '../cloud/service.js';
import { JsonClient } from '../http/json-client.js';
import { pollUntil } from '../http/poll.js';
import { systemClock, type Clock, type PollPolicy, type RetryPolicy } from '../http/retry.js';
import {
  Branch,
  BranchOperations,
  BranchResponse,
  ConnectionUri,
  createBody,
  CreatedBranch,
  describeFailure,
  Endpoints,
  FAILED,
  FINISHED,
  ListBranches,
  Operation,
  OperationResponse,
  ProjectResponse,
  retryable,
  type BranchRestoreBody,
} from './api.js';
import type { NeonSettings } from './settings.js';

export interface NeonServiceOptions {
  clock?: Clock;
  retry?: Partial<RetryPolicy>;
  poll?: Partial<PollPolicy>;
  log?: (line: string) => void;
  /** Branches per page when listing (Neon allows up to 10000). */
  pageSize?: number;
}

/** Neon accepts an `expires_at` at most 30 days ahead. */
export const NEON_MAX_TTL_MS = 30 * 86_400_000;
const ANNOTATION_PREFIX = 'consort-';
/** The annotation that says which create request made a branch. */
const REQUEST_ID = `${ANNOTATION_PREFIX}request-id`;

export class NeonService implements BranchService {
  readonly provider: ProviderName = 'neon';
  readonly maxTtlMs = NEON_MAX_TTL_MS;
  private readonly client: JsonClient;
  private readonly clock: Clock;
  private readonly base: string;
  private readonly passwords = new Set<string>();

  constructor(
    private readonly settings: NeonSettings,
    private readonly options: NeonServiceOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.base = `/projects/${settings.projectId}`;
    this.client = new JsonClient({
      service: 'Neon API',
      baseUrl: settings.apiHost,
      authorization: async () => `Bearer ${settings.apiKey}`,
      retryable,
      describeError: describeFailure(settings.projectId),
      secrets: () => this.secrets(),
      clock: this.clock,
      ...(options.retry ? { retry: options.retry } : {}),
      ...(options.log ? { log: options.log } : {}),
    });
  }

  async describe(): Promise<ServiceDescription> {
    const { project } = await this.client.request('GET', this.base, { schema: ProjectResponse });
    return {
      serverVersion: String(project.pg_version ?? 17),
      modeReason: `Neon copy-on-write branches in project ${project.name ? `"${project.name}" (${project.id})` : project.id}`,
    };
  }

  async list(): Promise<RemoteBranch[]> {
    const out: RemoteBranch[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 1000; page++) {
      const res = await this.client.request('GET', `${this.base}/branches`, {
        query: { limit: this.options.pageSize ?? 100, cursor, sort_by: 'created_at', sort_order: 'asc' },
        schema: ListBranches,
      });
      out.push(...res.branches.map((b) => this.remote(b, res.annotations?.[b.id]?.value)));
      const next = res.pagination?.next;
      if (!next || next === cursor || res.branches.length === 0) break;
      cursor = next;
    }
    return out;
  }

  /**
   * Every create carries a fresh `consort-request-id` annotation, so after an ambiguous answer
   * (500/502/504, timeout, dropped connection) the branch found under the name is adopted only if
   * this very request made it.
   */
  async create(options: CreateRemoteBranch): Promise<RemoteBranch> {
    const annotations: Record<string, string> = {};
    for (const [k, v] of Object.entries(options.annotations)) annotations[`${ANNOTATION_PREFIX}${k}`] = v;
    if (options.gitBranch) annotations[`${ANNOTATION_PREFIX}git-branch`] = options.gitBranch;
    const requestId = randomUUID();
    annotations[REQUEST_ID] = requestId;
    const what = `creating branch ${options.name}`;
    return createOnce<RemoteBranch>({
      name: options.name,
      send: async () => {
        const res = await this.client.request('POST', `${this.base}/branches`, {
          json: createBody(options, annotations, this.clock.now()),
          schema: CreatedBranch,
        });
        await this.waitFor(res.operations, what);
        return this.remote(res.branch, annotations);
      },
      lookup: async () => {
        const found = await this.byName(options.name);
        if (!found) return undefined;
        const theirs = found.annotations?.[REQUEST_ID];
        if (theirs !== requestId)
          return {
            ours: false,
            why: theirs ? "another Consort request's id is on it" : 'it carries no Consort request id',
          };
        return {
          ours: true,
          value: () => this.untilReady(found.branch.id, what).then((b) => this.remote(b, found.annotations)),
        };
      },
      ...(this.options.log ? { log: (l: string) => this.options.log!(`Neon: ${l}`) } : {}),
    });
  }

  /**
   * Delete for good (`hard_delete=true`): Neon otherwise soft-deletes, keeping the branch
   * recoverable for 7 days, and a soft-deleted child is still a child — its parent could then not
   * be deleted or restored without `preserve_under_name`. Consort's branches are throwaway copies.
   */
  async delete(branch: RemoteBranch): Promise<void> {
    try {
      const res = await this.client.request('DELETE', `${this.base}/branches/${branch.id}`, {
        query: { hard_delete: true },
        schema: BranchOperations.nullable(),
      });
      if (res) await this.waitFor(res.operations, `deleting branch ${branch.name}`);
    } catch (e) {
      if (!isConsortError(e, 'branch-not-found')) throw e; // already gone
    }
  }

  /**
   * Neon refuses to restore a branch that has children (hidden staging ones count) unless the old
   * state is kept under `preserve_under_name`, which then also takes the children. Without it the
   * request changes nothing when repeated, so it is retried like a GET.
   */
  async restore(branch: RemoteBranch, source: RemoteBranch, options: RestoreOptions = {}): Promise<void> {
    const json: BranchRestoreBody = {
      source_branch_id: source.id,
      ...(options.preserveUnderName ? { preserve_under_name: options.preserveUnderName } : {}),
    };
    const res = await this.client.request('POST', `${this.base}/branches/${branch.id}/restore`, {
      json,
      schema: BranchOperations,
      idempotent: !options.preserveUnderName,
    });
    await this.waitFor(res.operations, `resetting branch ${branch.name} to ${source.name}`);
  }

  async connectionUri(branch: RemoteBranch): Promise<string | undefined> {
    const { endpoints } = await this.client.request('GET', `${this.base}/branches/${branch.id}/endpoints`, {
      schema: Endpoints,
    });
    const endpoint = endpoints.find((e) => e.type === 'read_write');
    if (!endpoint) return undefined;
    const { uri } = await this.client.request('GET', `${this.base}/connection_uri`, {
      query: {
        branch_id: branch.id,
        endpoint_id: endpoint.id,
        database_name: this.settings.database,
        role_name: this.settings.role,
      },
      schema: ConnectionUri,
    });
    const password = /^[a-z]+:\/\/[^:/@]*:([^@]+)@/i.exec(uri)?.[1];
    if (password) this.passwords.add(decodeURIComponent(password)).add(password);
    return uri;
  }

  async close(): Promise<void> {
    this.passwords.clear();
  }

  secrets(): string[] {
    return [this.settings.apiKey, ...this.passwords];
  }

  /** The branch with exactly this name, with its annotations (the API's `search` also matches parts of names and ids). */
  private async byName(
    name: string,
  ): Promise<{ branch: Branch; annotations: Record<string, string> | undefined } | undefined> {
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const res = await this.client.request('GET', `${this.base}/branches`, {
        query: { search: name, limit: 100, cursor },
        schema: ListBranches,
      });
      const branch = res.branches.find((b) => b.name === name);
      if (branch) return { branch, annotations: res.annotations?.[branch.id]?.value };
      const next = res.pagination?.next;
      if (!next || next === cursor || res.branches.length === 0) return undefined;
      cursor = next;
    }
    return undefined;
  }

  /** Wait for a branch whose create operations Consort does not have (adopted after an ambiguous answer). */
  private untilReady(id: string, what: string): Promise<Branch> {
    return pollUntil(
      async () => {
        const { branch } = await this.client.request('GET', `${this.base}/branches/${id}`, { schema: BranchResponse });
        return branch.current_state === 'ready'
          ? { done: true, value: branch }
          : { done: false, detail: branch.current_state ?? 'unknown state' };
      },
      { what, clock: this.clock, ...(this.options.poll ? { policy: this.options.poll } : {}) },
    );
  }

  private remote(b: Branch, annotations: Record<string, string> | undefined): RemoteBranch {
    return {
      id: b.id,
      name: b.name,
      parentId: b.parent_id ?? null,
      isDefault: b.default ?? b.primary ?? false,
      createdAt: new Date(b.created_at),
      expiresAt: b.expires_at ? new Date(b.expires_at) : null,
      gitBranch: annotations?.[`${ANNOTATION_PREFIX}git-branch`] ?? null,
    };
  }

  /** Poll every unfinished operation; Neon retries a `failed` one itself, so only the deadline ends that wait. */
  private async waitFor(operations: readonly Operation[], what: string): Promise<void> {
    for (const op of operations) {
      if (FINISHED.has(op.status)) continue;
      const last = await pollUntil(
        async () => {
          const { operation } = await this.client.request('GET', `${this.base}/operations/${op.id}`, {
            schema: OperationResponse,
          });
          if (FINISHED.has(operation.status) || FAILED.has(operation.status)) return { done: true, value: operation };
          return {
            done: false,
            detail: `${operation.action ?? 'operation'} ${operation.status}${operation.error ? `: ${operation.error}` : ''}`,
          };
        },
        { what, clock: this.clock, ...(this.options.poll ? { policy: this.options.poll } : {}) },
      );
      if (FAILED.has(last.status)) {
        throw new ConsortError(
          'service-error',
          `Neon could not finish ${what}: ${last.action ?? 'operation'} ${last.status}${last.error ? ` (${last.error})` : ''}.`,
          {
            hint: "See the project's Operations page in the Neon Console, then retry; `consort branch gc` removes anything left half-made.",
          },
        );
      }
    }
  }
}
