/**
 * Neon as a BranchService (API v2): a branch is created with its read-write endpoint in one call
 * (`parent_id`, optional `parent_timestamp` and `expires_at`), annotated with what made it; every
 * operation the API returns is polled until it finishes; `restore` from the parent resets a
 * branch in place; the connection URI comes from the API for the configured database and role.
 */
import { ConsortError, isConsortError } from '../../core/errors.js';
import type { ProviderName } from '../../ports/branch-provider.js';
import type { BranchService, CreateRemoteBranch, RemoteBranch, ServiceDescription } from '../cloud/service.js';
import { JsonClient } from '../http/json-client.js';
import { pollUntil } from '../http/poll.js';
import { systemClock, type Clock, type PollPolicy, type RetryPolicy } from '../http/retry.js';
import {
  Branch, BranchOperations, ConnectionUri, CreatedBranch, describeFailure, Endpoints, FAILED, FINISHED, ListBranches, Operation, OperationResponse, ProjectResponse, retryable,
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

export class NeonService implements BranchService {
  readonly provider: ProviderName = 'neon';
  readonly maxTtlMs = NEON_MAX_TTL_MS;
  private readonly client: JsonClient;
  private readonly clock: Clock;
  private readonly base: string;
  private readonly passwords = new Set<string>();

  constructor(private readonly settings: NeonSettings, private readonly options: NeonServiceOptions = {}) {
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

  async create(options: CreateRemoteBranch): Promise<RemoteBranch> {
    const annotations: Record<string, string> = {};
    for (const [k, v] of Object.entries(options.annotations)) annotations[`${ANNOTATION_PREFIX}${k}`] = v;
    if (options.gitBranch) annotations[`${ANNOTATION_PREFIX}git-branch`] = options.gitBranch;
    const res = await this.client.request('POST', `${this.base}/branches`, {
      json: {
        branch: {
          name: options.name,
          parent_id: options.parentId,
          ...(options.at ? { parent_timestamp: options.at.toISOString() } : {}),
          ...(options.ttlMs !== undefined ? { expires_at: new Date(this.clock.now() + options.ttlMs).toISOString().replace(/\.\d{3}Z$/, 'Z') } : {}),
        },
        endpoints: [{ type: 'read_write' }],
        annotation_value: annotations,
      },
      schema: CreatedBranch,
    });
    await this.waitFor(res.operations, `creating branch ${options.name}`);
    return this.remote(res.branch, annotations);
  }

  async delete(branch: RemoteBranch): Promise<void> {
    try {
      const res = await this.client.request('DELETE', `${this.base}/branches/${branch.id}`, { schema: BranchOperations.nullable() });
      if (res) await this.waitFor(res.operations, `deleting branch ${branch.name}`);
    } catch (e) {
      if (!isConsortError(e, 'branch-not-found')) throw e; // already gone
    }
  }

  async restore(branch: RemoteBranch, source: RemoteBranch): Promise<void> {
    const res = await this.client.request('POST', `${this.base}/branches/${branch.id}/restore`, { json: { source_branch_id: source.id }, schema: BranchOperations });
    await this.waitFor(res.operations, `resetting branch ${branch.name} to ${source.name}`);
  }

  async connectionUri(branch: RemoteBranch): Promise<string | undefined> {
    const { endpoints } = await this.client.request('GET', `${this.base}/branches/${branch.id}/endpoints`, { schema: Endpoints });
    const endpoint = endpoints.find((e) => e.type === 'read_write');
    if (!endpoint) return undefined;
    const { uri } = await this.client.request('GET', `${this.base}/connection_uri`, {
      query: { branch_id: branch.id, endpoint_id: endpoint.id, database_name: this.settings.database, role_name: this.settings.role },
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
      const last = await pollUntil(async () => {
        const { operation } = await this.client.request('GET', `${this.base}/operations/${op.id}`, { schema: OperationResponse });
        if (FINISHED.has(operation.status) || FAILED.has(operation.status)) return { done: true, value: operation };
        return { done: false, detail: `${operation.action ?? 'operation'} ${operation.status}${operation.error ? `: ${operation.error}` : ''}` };
      }, { what, clock: this.clock, ...(this.options.poll ? { policy: this.options.poll } : {}) });
      if (FAILED.has(last.status)) {
        throw new ConsortError('service-error', `Neon could not finish ${what}: ${last.action ?? 'operation'} ${last.status}${last.error ? ` (${last.error})` : ''}.`, {
          hint: 'See the project\'s Operations page in the Neon Console, then retry; `consort branch gc` removes anything left half-made.',
        });
      }
    }
  }
}
