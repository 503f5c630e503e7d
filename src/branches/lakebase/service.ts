/**
 * Databricks Lakebase as a BranchService: branches of one project created from a source branch
 * (`spec.source_branch`, optional `source_branch_time`) with `ttl` or `no_expiry`; a read-write
 * endpoint made when the branch has none; long-running operations polled until `done`; logins
 * with a short-lived database credential (refreshed before it expires) as the password and the
 * Databricks identity as the user, over `sslmode=require`.
 */
import type { z } from 'zod';
import type { ProviderName } from '../../ports/branch-provider.js';
import type { BranchService, CreateRemoteBranch, RemoteBranch, ServiceDescription } from '../cloud/service.js';
import { JsonClient } from '../http/json-client.js';
import { pollUntil } from '../http/poll.js';
import { systemClock, type Clock, type PollPolicy, type RetryPolicy } from '../http/retry.js';
import { RefreshingToken } from '../http/token.js';
import {
  Branch, Credential, describeFailure, Endpoint, lakebaseError, lastSegment, ListBranches, ListEndpoints, Me, Operation, Project, READ_WRITE, retryable,
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

  constructor(private readonly settings: LakebaseSettings, private readonly options: LakebaseServiceOptions = {}) {
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
    const name = project.status?.display_name ? `"${project.status.display_name}" (${this.settings.project})` : this.settings.project;
    return {
      // The project reports its major version; 17 is Lakebase's default when it does not.
      serverVersion: String(project.status?.pg_version ?? 17),
      modeReason: `Lakebase copy-on-write branches in project ${name} on ${new URL(this.settings.host).host}`,
    };
  }

  async list(): Promise<RemoteBranch[]> {
    const out: RemoteBranch[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.request('GET', `${this.projectPath}/branches`, { query: { page_size: 100, page_token: token }, schema: ListBranches });
      out.push(...(page.branches ?? []).filter((b) => b.status?.current_state !== 'DELETED').map((b) => this.remote(b)));
      token = page.next_page_token || undefined;
    } while (token);
    return out;
  }

  async create(options: CreateRemoteBranch): Promise<RemoteBranch> {
    const spec = {
      source_branch: `projects/${this.settings.project}/branches/${options.parentId}`,
      ...(options.ttlMs !== undefined ? { ttl: `${Math.ceil(options.ttlMs / 1000)}s` } : { no_expiry: true }),
      ...(options.at ? { source_branch_time: options.at.toISOString() } : {}),
    };
    const op = await this.client.request('POST', `${this.projectPath}/branches`, { query: { branch_id: options.name }, json: { spec }, schema: Operation });
    const branch = await this.wait(op, Branch, `creating branch ${options.name}`);
    await this.ensureEndpoint(options.name);
    return this.remote(branch);
  }

  async delete(branch: RemoteBranch): Promise<void> {
    const op = await this.client.request('DELETE', `${this.projectPath}/branches/${branch.id}`, { query: { allow_missing: true }, schema: Operation });
    await this.wait(op, undefined, `deleting branch ${branch.name}`);
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
    let token: string | undefined;
    do {
      const page = await this.client.request('GET', `${this.projectPath}/branches/${branchId}/endpoints`, { query: { page_token: token }, schema: ListEndpoints });
      out.push(...(page.endpoints ?? []));
      token = page.next_page_token || undefined;
    } while (token);
    return out;
  }

  /** Branches made through the API get no compute: add the one read-write endpoint. */
  private async ensureEndpoint(branchId: string): Promise<void> {
    if ((await this.endpoints(branchId)).some((e) => type(e) === READ_WRITE)) return;
    const op = await this.client.request('POST', `${this.projectPath}/branches/${branchId}/endpoints`, {
      query: { endpoint_id: 'primary' },
      json: { spec: { endpoint_type: READ_WRITE, autoscaling_limit_min_cu: 0.5, autoscaling_limit_max_cu: 2 } },
      schema: Operation,
    });
    await this.wait(op, Endpoint, `starting the read-write endpoint of ${branchId}`);
  }

  private wait<T>(op: Operation, schema: z.ZodType<T>, what: string): Promise<T>;
  private wait(op: Operation, schema: undefined, what: string): Promise<undefined>;
  private async wait<T>(op: Operation, schema: z.ZodType<T> | undefined, what: string): Promise<T | undefined> {
    const done = op.done
      ? op
      : await pollUntil(async () => {
          const current = await this.client.request('GET', `/api/2.0/postgres/${op.name}`, { schema: Operation });
          return current.done ? { done: true, value: current } : { done: false, detail: 'in progress' };
        }, { what, clock: this.clock, ...(this.options.poll ? { policy: this.options.poll } : {}) });
    if (done.error) throw lakebaseError(this.settings.project, 0, done.error.error_code, done.error.message, what);
    if (!schema) return undefined;
    const parsed = schema.safeParse(done.response);
    if (!parsed.success) throw lakebaseError(this.settings.project, 0, 'UNEXPECTED_RESPONSE', `the finished operation has no valid result (${parsed.error.issues[0]?.message ?? 'invalid'})`, what);
    return parsed.data;
  }

  private user(): Promise<string> {
    const known = this.auth.knownIdentity();
    if (known) return Promise.resolve(known);
    this.identity ??= this.client.request('GET', '/api/2.0/preview/scim/v2/Me', { schema: Me }).then((me) => me.userName);
    return this.identity;
  }

  private credential(endpoint: string): Promise<string> {
    let token = this.credentials.get(endpoint);
    if (!token) {
      token = new RefreshingToken(async () => {
        const c = await this.client.request('POST', '/api/2.0/postgres/credentials', { json: { endpoint }, schema: Credential });
        return { value: c.token, expiresAt: Date.parse(c.expire_time) };
      }, this.clock, this.options.credentialMarginMs);
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
