/**
 * Databricks Lakebase as a BranchService: branches of one project created from a source branch
 * (`spec.source_branch`, optional `source_branch_time`) with `ttl` or `no_expiry`; deleted with
 * `purge=true` (a plain DeleteBranch only soft-deletes and keeps the id taken); a read-write
 * endpoint made when the branch has none; long-running operations polled until `done`; logins
 * with a short-lived database credential (refreshed before it expires) as the password and the
 * Databricks identity as the user, over `sslmode=require`.
 */
import type { z } from 'zod';
import { isConsortError } from '../../core/errors.js';
import type { ProviderName } from '../../ports/branch-provider.js';
import type { BranchService, CreateRemoteBranch, RemoteBranch, ServiceDescription } from '../cloud/service.js';
import { createOnce } from '../cloud/create-once.js';
import { JsonClient } from '../http/json-client.js';
import { pollUntil } from '../http/poll.js';
import { systemClock, type Clock, type PollPolicy, type RetryPolicy } from '../http/retry.js';
import { RefreshingToken } from '../http/token.js';
import {
  Branch,
  Credential,
  describeFailure,
  Endpoint,
  isDeleted,
  lakebaseError,
  lastSegment,
  ListBranches,
  ListEndpoints,
  Me,
  Operation,
  Project,
  READ_WRITE,
  retryable,
} from './api.js';
import { WorkspaceAuth } from './auth.js';
import type { LakebaseSettings } from './settings.js';

export interface LakebaseServiceOptions {
  clock?: Clock;
  retry?: Partial<RetryPolicy>;
  poll?: Partial<PollPolicy>;
  log?: (line: string) => void;
  /** `require` against Databricks; a local stand-in without TLS uses `disable`. */
  sslMode?: 'require' | 'verify-full' | 'disable';
  /** Refresh database credentials this long before they expire (default 5 minutes). */
  credentialMarginMs?: number;
}

/** How far the service's clock may be behind ours when Consort compares a branch's create_time with its request. */
const CLOCK_SKEW_MS = 120_000;

/** Lakebase keeps branches for at most 30 days when they expire at all. */
export const LAKEBASE_MAX_TTL_MS = 30 * 86_400_000;

export class LakebaseService implements BranchService {
  readonly provider: ProviderName = 'lakebase';
  readonly maxTtlMs = LAKEBASE_MAX_TTL_MS;
  private readonly auth: WorkspaceAuth;
  private readonly client: JsonClient;
  private readonly clock: Clock;
  private readonly credentials = new Map<string, RefreshingToken>();
  private readonly projectPath: string;
  private defaultBranch: string | undefined;
  private identity: Promise<string> | undefined;

  constructor(
    private readonly settings: LakebaseSettings,
    private readonly options: LakebaseServiceOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.projectPath = `/api/2.0/postgres/projects/${settings.project}`;
    this.auth = new WorkspaceAuth({ host: settings.host, auth: settings.auth, clock: this.clock, ...pick(options) });
    this.client = new JsonClient({
      service: 'Lakebase',
      baseUrl: settings.host,
      authorization: () => this.auth.header(),
      ...(settings.auth.kind === 'oauth-m2m' ? { onUnauthorized: () => this.auth.invalidate() } : {}),
      retryable,
      describeError: describeFailure(settings.project),
      secrets: () => this.secrets(),
      clock: this.clock,
      ...pick(options),
    });
  }

  async describe(): Promise<ServiceDescription> {
    const project = await this.client.request('GET', this.projectPath, { schema: Project });
    this.defaultBranch = project.status?.default_branch;
    const name = project.status?.display_name
      ? `"${project.status.display_name}" (${this.settings.project})`
      : this.settings.project;
    return {
      // The project reports its major version; 17 is Lakebase's default when it does not.
      serverVersion: String(project.status?.pg_version ?? 17),
      modeReason: `Lakebase copy-on-write branches in project ${name} on ${new URL(this.settings.host).host}`,
    };
  }

  async list(): Promise<RemoteBranch[]> {
    const out: RemoteBranch[] = [];
    for await (const page of pages((token) =>
      this.client.request('GET', `${this.projectPath}/branches`, {
        query: { page_size: 100, page_token: token },
        schema: ListBranches,
      }),
    ))
      out.push(...(page.branches ?? []).filter((b) => !isDeleted(b)).map((b) => this.remote(b)));
    return out;
  }

  /**
   * Lakebase branches carry no labels, so "did this request make it?" is answered from what the
   * request fixed: the id (Consort's staging ids are random, and the provider saw the name free just
   * before), the source branch, and a creation time no earlier than the request.
   */
  async create(options: CreateRemoteBranch): Promise<RemoteBranch> {
    const source = `projects/${this.settings.project}/branches/${options.parentId}`;
    const spec = {
      source_branch: source,
      ...(options.ttlMs !== undefined ? { ttl: `${Math.ceil(options.ttlMs / 1000)}s` } : { no_expiry: true }),
      ...(options.at ? { source_branch_time: options.at.toISOString() } : {}),
    };
    const sentAt = this.clock.now();
    const what = `creating branch ${options.name}`;
    let purged = false;
    const send = async (): Promise<Branch> => {
      try {
        const op = await this.client.request('POST', `${this.projectPath}/branches`, {
          query: { branch_id: options.name },
          json: { spec },
          schema: Operation,
        });
        return await this.wait(op, Branch, what);
      } catch (e) {
        // A soft-deleted branch keeps its id until it is purged: purge it once, then create.
        const blocker = !purged && isConsortError(e, 'branch-exists') ? await this.getBranch(options.name) : undefined;
        if (!blocker || !isDeleted(blocker)) throw e;
        purged = true;
        this.options.log?.(
          `Lakebase: "${options.name}" was soft-deleted but still holds its id; purging it before creating the branch again.`,
        );
        await this.purge(options.name);
        return send();
      }
    };
    const branch = await createOnce<Branch>({
      name: options.name,
      send,
      lookup: async () => {
        const found = await this.getBranch(options.name);
        if (!found || isDeleted(found)) return undefined;
        const from = found.status?.source_branch ?? found.spec?.source_branch;
        const created = found.create_time ? Date.parse(found.create_time) : Number.NaN;
        if (from !== source) return { ours: false, why: `it was forked from ${from ?? 'an unknown branch'}` };
        if (!(created >= sentAt - CLOCK_SKEW_MS))
          return {
            ours: false,
            why: `it was created at ${found.create_time ?? 'an unknown time'}, before the request`,
          };
        return { ours: true, value: () => this.untilReady(options.name, what) };
      },
      ...(this.options.log ? { log: (l: string) => this.options.log!(`Lakebase: ${l}`) } : {}),
    });
    await this.ensureEndpoint(options.name);
    return this.remote(branch);
  }

  /** Delete for good: a soft delete would keep the id taken, and Consort re-creates the same ids on every push. */
  async delete(branch: RemoteBranch): Promise<void> {
    await this.purge(branch.id, `deleting branch ${branch.name}`);
  }

  private async purge(id: string, what = `purging branch ${id}`): Promise<void> {
    try {
      const op = await this.client.request('DELETE', `${this.projectPath}/branches/${id}`, {
        query: { allow_missing: true, purge: true },
        schema: Operation,
      });
      await this.wait(op, undefined, what);
    } catch (e) {
      if (!isConsortError(e, 'branch-not-found')) throw e; // already gone
    }
  }

  private async getBranch(id: string): Promise<Branch | undefined> {
    try {
      return await this.client.request('GET', `${this.projectPath}/branches/${id}`, { schema: Branch });
    } catch (e) {
      if (isConsortError(e, 'branch-not-found')) return undefined;
      throw e;
    }
  }

  /** Wait for a branch whose create operation Consort does not have (adopted after an ambiguous answer). */
  private untilReady(id: string, what: string): Promise<Branch> {
    return pollUntil(
      async () => {
        const b = await this.getBranch(id);
        if (!b || isDeleted(b))
          throw lakebaseError(this.settings.project, 404, 'NOT_FOUND', `branch ${id} disappeared`, what);
        return b.status?.current_state === 'READY'
          ? { done: true, value: b }
          : { done: false, detail: b.status?.current_state ?? 'unknown state' };
      },
      { what, clock: this.clock, ...(this.options.poll ? { policy: this.options.poll } : {}) },
    );
  }

  async connectionUri(branch: RemoteBranch): Promise<string | undefined> {
    const endpoint = (await this.endpoints(branch.id)).find((e) => type(e) === READ_WRITE && e.status?.hosts?.host);
    if (!endpoint) return undefined;
    const [user, password] = await Promise.all([this.user(), this.credential(endpoint.name)]);
    const url = new URL('postgresql://host');
    url.host = endpoint.status!.hosts!.host!;
    url.username = user;
    url.password = password;
    url.pathname = `/${encodeURIComponent(this.settings.database)}`;
    url.searchParams.set('sslmode', this.options.sslMode ?? 'require');
    return url.toString();
  }

  async close(): Promise<void> {
    this.credentials.clear();
  }

  secrets(): string[] {
    return [...this.auth.secrets(), ...[...this.credentials.values()].flatMap((c) => c.secrets())];
  }

  private remote(b: Branch): RemoteBranch {
    const source = b.status?.source_branch ?? b.spec?.source_branch;
    const expires = b.status?.expire_time ?? b.spec?.expire_time;
    return {
      id: b.branch_id ?? lastSegment(b.name),
      name: b.branch_id ?? lastSegment(b.name),
      parentId: source ? lastSegment(source) : null,
      isDefault: b.status?.default === true || (this.defaultBranch !== undefined && b.name === this.defaultBranch),
      createdAt: b.create_time ? new Date(b.create_time) : new Date(0),
      expiresAt: expires ? new Date(expires) : null,
      gitBranch: null, // Lakebase branches carry no labels
    };
  }

  private async endpoints(branchId: string): Promise<Endpoint[]> {
    const out: Endpoint[] = [];
    for await (const page of pages((token) =>
      this.client.request('GET', `${this.projectPath}/branches/${branchId}/endpoints`, {
        query: { page_token: token },
        schema: ListEndpoints,
      }),
    ))
      out.push(...(page.endpoints ?? []));
    return out;
  }

  /** Branches made through the API get no compute: add the one read-write endpoint. */
  private async ensureEndpoint(branchId: string): Promise<void> {
    if ((await this.endpoints(branchId)).some((e) => type(e) === READ_WRITE)) return;
    const what = `starting the read-write endpoint of ${branchId}`;
    await createOnce<unknown>({
      name: `${branchId}/endpoints/primary`,
      send: async () => {
        const op = await this.client.request('POST', `${this.projectPath}/branches/${branchId}/endpoints`, {
          query: { endpoint_id: 'primary' },
          json: { spec: { endpoint_type: READ_WRITE, autoscaling_limit_min_cu: 0.5, autoscaling_limit_max_cu: 2 } },
          schema: Operation,
        });
        return this.wait(op, Endpoint, what);
      },
      // Only Consort adds endpoints to the branches it just made: a read-write one there is ours.
      lookup: async () =>
        (await this.endpoints(branchId)).some((e) => type(e) === READ_WRITE)
          ? {
              ours: true,
              value: () =>
                pollUntil(
                  async () =>
                    (await this.endpoints(branchId)).some((e) => type(e) === READ_WRITE && e.status?.hosts?.host)
                      ? { done: true, value: undefined }
                      : { done: false, detail: 'no host yet' },
                  { what, clock: this.clock, ...(this.options.poll ? { policy: this.options.poll } : {}) },
                ),
            }
          : undefined,
      ...(this.options.log ? { log: (l: string) => this.options.log!(`Lakebase: ${l}`) } : {}),
    });
  }

  private wait<T>(op: Operation, schema: z.ZodType<T>, what: string): Promise<T>;
  private wait(op: Operation, schema: undefined, what: string): Promise<undefined>;
  private async wait<T>(op: Operation, schema: z.ZodType<T> | undefined, what: string): Promise<T | undefined> {
    const done = op.done
      ? op
      : await pollUntil(
          async () => {
            const current = await this.client.request('GET', `/api/2.0/postgres/${op.name}`, { schema: Operation });
            return current.done ? { done: true, value: current } : { done: false, detail: 'in progress' };
          },
          { what, clock: this.clock, ...(this.options.poll ? { policy: this.options.poll } : {}) },
        );
    if (done.error) throw lakebaseError(this.settings.project, 0, done.error.error_code, done.error.message, what);
    if (!schema) return undefined;
    const parsed = schema.safeParse(done.response);
    if (!parsed.success)
      throw lakebaseError(
        this.settings.project,
        0,
        'UNEXPECTED_RESPONSE',
        `the finished operation has no valid result (${parsed.error.issues[0]?.message ?? 'invalid'})`,
        what,
      );
    return parsed.data;
  }

  private user(): Promise<string> {
    const known = this.auth.knownIdentity();
    if (known) return Promise.resolve(known);
    this.identity ??= this.client
      .request('GET', '/api/2.0/preview/scim/v2/Me', { schema: Me })
      .then((me) => me.userName);
    return this.identity;
  }

  private credential(endpoint: string): Promise<string> {
    let token = this.credentials.get(endpoint);
    if (!token) {
      token = new RefreshingToken(
        async () => {
          const c = await this.client.request('POST', '/api/2.0/postgres/credentials', {
            json: { endpoint },
            schema: Credential,
            idempotent: true,
          });
          return { value: c.token, expiresAt: Date.parse(c.expire_time) };
        },
        this.clock,
        this.options.credentialMarginMs,
      );
      this.credentials.set(endpoint, token);
    }
    return token.get();
  }
}

function type(e: Endpoint): string | undefined {
  return e.status?.endpoint_type ?? e.spec?.endpoint_type;
}

function pick(o: LakebaseServiceOptions): { retry?: Partial<RetryPolicy>; log?: (line: string) => void } {
  return { ...(o.retry ? { retry: o.retry } : {}), ...(o.log ? { log: o.log } : {}) };
}

/**
 * Every page of a listing, following `next_page_token` until there is none, or until the service
 * hands out a token it has handed out before (a listing that would never end, as Neon's is guarded).
 */
async function* pages<T extends { next_page_token?: string | undefined }>(
  get: (token: string | undefined) => Promise<T>,
): AsyncGenerator<T> {
  const seen = new Set<string>();
  let token: string | undefined;
  do {
    const page = await get(token);
    yield page;
    token = page.next_page_token || undefined;
    if (token !== undefined && seen.has(token)) return;
    if (token !== undefined) seen.add(token);
  } while (token);
}
