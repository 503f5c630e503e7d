/**
 * A local stand-in for a Databricks workspace with one Lakebase project, implementing the
 * documented shapes Consort relies on: OAuth M2M at /oidc/v1/token (client credentials, tokens
 * that expire), SCIM /Me, the Postgres API's projects, branches (paginated, `spec.source_branch`,
 * exactly one of ttl/expire_time/no_expiry), endpoints, long-running operations polled until
 * `done`, and /credentials (short-lived login tokens). Each branch is a real database; each
 * endpoint a proxy that checks the login token and reaches that database. It refuses what the
 * SDKs' docs rule out: `no_expiry: false`, a `source_branch_time` ahead of now or before the history
 * retention, a past `expire_time`, a negative `page_size`, an EndpointSpec outside its bounds.
 *
 * Like the service (and the SDKs' `DeleteBranchRequest`): DeleteBranch soft-deletes unless
 * `purge=true` — the branch leaves the default listing (`show_deleted=true` shows it) but its id
 * stays taken and it still counts against the branch limit until purged. The per-user rate limit
 * answers 429 `RESOURCE_EXHAUSTED`; operations can be slow (`opPolls`, `opDelayMs`); ambiguous
 * answers (created, then 500/504 or a dropped connection) come from `server.fail({ afterHandling })`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { PhysicalDatabases } from './databases.js';
import { HttpReply, JsonServer, type Req, type Res } from './json-server.js';
import { startPgProxy, type PgProxy } from './pg-proxy.js';
import { sqlRoleLogin } from './sql-roles.js';

export interface LakebaseEmulatorOptions {
  project?: string;
  token?: string;
  clientId?: string;
  clientSecret?: string;
  userName?: string;
  oauthTtlSec?: number;
  credentialTtlSec?: number;
  /** Polls an operation answers `done: false` before it completes. */
  opPolls?: number;
  pageSize?: number;
  maxBranches?: number;
  /** An operation is done only once this long has passed since it started, however often it is polled. */
  opDelayMs?: number;
  /** Per-identity token bucket: beyond it requests get 429 RESOURCE_EXHAUSTED, as Databricks rate-limits each user. */
  rateLimit?: { burst: number; perSecond: number };
  /** Inject the bugs verification must catch. */
  bug?: 'parent-host' | 'parent-database' | 'repeat-page-token';
  /** False: only Databricks identities' tokens log in, not native Postgres roles' passwords (default true). */
  nativeLogin?: boolean;
  /**
   * The service's clock (epoch ms; default Date.now): token and login expiry, operation delays, the
   * rate limit's refill, create and delete times. A test shares a virtual clock (test/emulators/clock.ts)
   * with the client, so simulated seconds pass without waiting for them.
   */
  now?: () => number;
}

interface EmuBranch {
  id: string;
  source: string | null;
  database: string;
  created: Date;
  expires: Date | null;
  ready: boolean;
  isDefault: boolean;
  deleted?: Date;
  op?: string;
}
interface EmuEndpoint {
  id: string;
  branch: string;
  proxy: PgProxy;
}
interface EmuOp {
  name: string;
  polls: number;
  started: number;
  result: () => unknown;
}

/** The project's history retention (ProjectStatus.history_retention_duration). */
const HISTORY_RETENTION_SECONDS = 86_400;

const err = (status: number, error_code: string, message: string) => new HttpReply(status, { error_code, message });

export class LakebaseEmulator {
  readonly server = new JsonServer((req) => this.route(req));
  readonly dbs = new PhysicalDatabases();
  readonly branches = new Map<string, EmuBranch>();
  readonly endpoints = new Map<string, EmuEndpoint>();
  private readonly ops = new Map<string, EmuOp>();
  private readonly oauth = new Map<string, number>();
  private readonly logins = new Map<string, { expires: number; user: string }>();
  o: Required<
    Omit<LakebaseEmulatorOptions, 'bug' | 'token' | 'clientId' | 'clientSecret' | 'rateLimit' | 'nativeLogin'>
  > &
    LakebaseEmulatorOptions;
  expiredTokenHits = 0;
  /** Requests refused with 429 RESOURCE_EXHAUSTED. */
  rateLimited = 0;
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(options: LakebaseEmulatorOptions = {}) {
    this.o = LakebaseEmulator.settle(options);
  }

  private static settle(options: LakebaseEmulatorOptions): LakebaseEmulator['o'] {
    return {
      project: 'consort-emu',
      userName: 'ci@example.com',
      oauthTtlSec: 3600,
      credentialTtlSec: 3600,
      opPolls: 1,
      opDelayMs: 0,
      pageSize: 2,
      maxBranches: 50,
      now: () => Date.now(),
      ...options,
    };
  }

  private now(): number {
    return this.o.now();
  }

  /** Branches that are not deleted. */
  live(): string[] {
    return [...this.branches.values()].filter((b) => !b.deleted).map((b) => b.id);
  }

  /** Soft-deleted branches: gone from the listing, ids still taken. */
  softDeleted(): string[] {
    return [...this.branches.values()].filter((b) => b.deleted).map((b) => b.id);
  }

  get host(): string {
    return this.server.url;
  }

  env(kind: 'token' | 'm2m' = this.o.token ? 'token' : 'm2m'): NodeJS.ProcessEnv {
    const auth =
      kind === 'token'
        ? { DATABRICKS_TOKEN: this.o.token }
        : { DATABRICKS_CLIENT_ID: this.o.clientId, DATABRICKS_CLIENT_SECRET: this.o.clientSecret };
    return { DATABRICKS_HOST: this.host, CONSORT_LAKEBASE_PROJECT: this.o.project, ...auth };
  }

  async start(): Promise<this> {
    await this.server.start();
    try {
      const database = await this.dbs.create();
      this.branches.set('production', {
        id: 'production',
        source: null,
        database,
        created: new Date(this.now()),
        expires: null,
        ready: true,
        isDefault: true,
      });
      await this.addEndpoint('production');
    } catch (e) {
      // The caller never gets an emulator to stop: close what is open, or jest never exits.
      await this.stop().catch(() => undefined);
      throw e;
    }
    return this;
  }

  /**
   * Back to the state `start` leaves, with new options, without a new server or project: every
   * branch but the default one (and its database and endpoints) removed, tokens, logins, operations,
   * rate-limit buckets, counters, the request log and unserved faults forgotten. For a file whose
   * tests each want a fresh service but need not pay for a new default branch's database each; the
   * default branch's data is kept, so tests sharing an emulator must not write to it. The project
   * cannot change (it is in the default branch's names).
   */
  async reset(options: LakebaseEmulatorOptions = {}): Promise<this> {
    const project = this.o.project;
    this.o = LakebaseEmulator.settle(options);
    if (this.o.project !== project) throw new Error('reset cannot change the project');
    for (const [key, e] of this.endpoints)
      if (e.branch !== 'production') {
        await e.proxy.close();
        this.endpoints.delete(key);
      }
    for (const [id, b] of this.branches)
      if (!b.isDefault) {
        this.branches.delete(id);
        await this.dbs.drop(b.database);
      }
    const production = this.branches.get('production');
    if (!production || this.endpoints.size !== 1) throw new Error('the default branch or its endpoint is gone');
    production.created = new Date(this.now());
    this.ops.clear();
    this.oauth.clear();
    this.logins.clear();
    this.buckets.clear();
    this.expiredTokenHits = 0;
    this.rateLimited = 0;
    this.server.reset();
    return this;
  }

  async stop(): Promise<void> {
    try {
      for (const e of this.endpoints.values()) await e.proxy.close();
    } finally {
      await this.server.close();
    }
    await this.dbs.dropAll();
  }

  private identity(req: Req): string {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (token && token === this.o.token) return this.o.userName;
    const expires = token ? this.oauth.get(token) : undefined;
    if (expires !== undefined && expires > this.now()) return this.o.clientId!;
    if (expires !== undefined) this.expiredTokenHits++;
    throw err(401, 'UNAUTHENTICATED', expires !== undefined ? 'Token expired' : 'Invalid access token');
  }

  private async route(req: Req): Promise<Res> {
    if (req.method === 'POST' && req.path === '/oidc/v1/token') return this.issueOAuth(req);
    const user = this.identity(req);
    this.throttle(user);
    const base = `/api/2.0/postgres/projects/${this.o.project}`;
    if (req.path === '/api/2.0/preview/scim/v2/Me') return { status: 200, body: { userName: user } };
    if (req.method === 'POST' && req.path === '/api/2.0/postgres/credentials') return this.issueLogin(req, user);
    if (req.method === 'GET' && /\/operations\/[^/]+$/.test(req.path))
      return this.poll(req.path.slice('/api/2.0/postgres/'.length));
    if (!req.path.startsWith('/api/2.0/postgres/projects/')) throw err(404, 'NOT_FOUND', `No API at ${req.path}`);
    if (req.path !== base && !req.path.startsWith(`${base}/`))
      throw err(404, 'RESOURCE_DOES_NOT_EXIST', `Project ${req.path.split('/')[5]} does not exist`);
    const rest = req.path.slice(base.length).split('/').filter(Boolean);
    if (rest.length === 0)
      return {
        status: 200,
        body: {
          name: `projects/${this.o.project}`,
          status: {
            pg_version: 15,
            history_retention_duration: `${HISTORY_RETENTION_SECONDS}s`,
            display_name: 'Emulated',
            default_branch: `projects/${this.o.project}/branches/production`,
          },
        },
      };
    if (rest.length === 1 && req.method === 'GET') return this.listBranches(req);
    if (rest.length === 1 && req.method === 'POST') return this.createBranch(req);
    const branch = this.branches.get(rest[1]!);
    if (rest.length === 2 && req.method === 'DELETE')
      return this.deleteBranch(rest[1]!, req.query.get('allow_missing') === 'true', req.query.get('purge') === 'true');
    if (!branch) throw err(404, 'RESOURCE_DOES_NOT_EXIST', `Branch ${rest[1]} does not exist`);
    if (rest.length === 2 && req.method === 'GET') {
      if (!branch.ready && branch.op) this.poll(branch.op); // the operation goes on whether or not its caller still polls it
      return { status: 200, body: this.branchJson(branch) }; // soft-deleted ones too, with delete_time
    }
    if (branch.deleted) throw err(404, 'RESOURCE_DOES_NOT_EXIST', `Branch ${rest[1]} is deleted`);
    if (rest.length === 3 && rest[2] === 'endpoints' && req.method === 'GET') {
      return {
        status: 200,
        body: {
          endpoints: [...this.endpoints.values()]
            .filter((e) => e.branch === branch.id)
            .map((e) => this.endpointJson(e)),
        },
      };
    }
    if (rest.length === 3 && rest[2] === 'endpoints' && req.method === 'POST') {
      const spec = (req.body as { spec?: EndpointSpecBody }).spec;
      if (spec?.endpoint_type !== 'ENDPOINT_TYPE_READ_WRITE')
        throw err(400, 'INVALID_PARAMETER_VALUE', 'endpoint_type is required');
      const endpointId = req.query.get('endpoint_id') ?? '';
      if (!/^[a-z][a-z0-9-]{0,62}$/.test(endpointId))
        throw err(400, 'INVALID_PARAMETER_VALUE', `Invalid endpoint_id "${endpointId}"`);
      const refusal = endpointSpecRefusal(spec);
      if (refusal) throw err(400, 'INVALID_PARAMETER_VALUE', refusal);
      if ([...this.endpoints.values()].some((e) => e.branch === branch.id))
        throw err(409, 'ALREADY_EXISTS', 'A branch can only have one READ_WRITE endpoint');
      const endpoint = await this.addEndpoint(branch.id, endpointId);
      return this.operation(`projects/${this.o.project}/branches/${branch.id}/endpoints/${endpoint.id}`, () =>
        this.endpointJson(endpoint),
      );
    }
    throw err(404, 'NOT_FOUND', `No route for ${req.method} ${req.path}`);
  }

  private throttle(user: string): void {
    const limit = this.o.rateLimit;
    if (!limit) return;
    const now = this.now();
    const b = this.buckets.get(user) ?? { tokens: limit.burst, at: now };
    b.tokens = Math.min(limit.burst, b.tokens + ((now - b.at) / 1000) * limit.perSecond);
    b.at = now;
    this.buckets.set(user, b);
    if (b.tokens < 1) {
      this.rateLimited++;
      throw new HttpReply(
        429,
        { error_code: 'RESOURCE_EXHAUSTED', message: `Rate limit exceeded for ${user}: too many requests.` },
        { 'retry-after': '1' },
      );
    }
    b.tokens -= 1;
  }

  private issueOAuth(req: Req): Res {
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const [id, secret] = basic ? Buffer.from(basic, 'base64').toString().split(':').map(decodeURIComponent) : [];
    const form = new URLSearchParams(req.rawBody);
    if (form.get('grant_type') !== 'client_credentials' || id !== this.o.clientId || secret !== this.o.clientSecret) {
      throw new HttpReply(401, { error: 'invalid_client', error_description: 'Client authentication failed' });
    }
    const token = `dapi-oauth-${randomBytes(12).toString('hex')}`;
    this.oauth.set(token, this.now() + this.o.oauthTtlSec * 1000);
    return {
      status: 200,
      body: { access_token: token, token_type: 'Bearer', expires_in: this.o.oauthTtlSec, scope: 'all-apis' },
    };
  }

  private issueLogin(req: Req, user: string): Res {
    const name = (req.body as { endpoint?: string }).endpoint ?? '';
    if (![...this.endpoints.values()].some((e) => this.endpointName(e) === name))
      throw err(404, 'RESOURCE_DOES_NOT_EXIST', `Endpoint ${name} does not exist`);
    const token = `lb-login-${randomBytes(16).toString('hex')}`;
    const expires = this.now() + this.o.credentialTtlSec * 1000;
    this.logins.set(token, { expires, user });
    return { status: 200, body: { token, expire_time: new Date(expires).toISOString() } };
  }

  private listBranches(req: Req): Res {
    const all = [...this.branches.values()]
      .filter((b) => !b.deleted || req.query.get('show_deleted') === 'true')
      .sort((a, b) => a.created.getTime() - b.created.getTime());
    const offset = Number(req.query.get('page_token') ?? 0);
    const asked = req.query.get('page_size');
    // ListBranchesRequest.page_size: "Upper bound for items returned. Cannot be negative."
    if (asked !== null && !/^\d+$/.test(asked))
      throw err(400, 'INVALID_PARAMETER_VALUE', `page_size must be a non-negative integer, not "${asked}"`);
    const size = Math.min(Number(asked ?? 100) || 100, this.o.pageSize);
    const page = all.slice(offset, offset + size);
    // The 'repeat-page-token' bug: the last page points back at the one before it, for ever.
    const next =
      offset + size < all.length
        ? String(offset + size)
        : this.o.bug === 'repeat-page-token' && offset > 0
          ? String(Math.max(0, offset - size))
          : undefined;
    return {
      status: 200,
      body: { branches: page.map((b) => this.branchJson(b)), ...(next ? { next_page_token: next } : {}) },
    };
  }

  private async createBranch(req: Req): Promise<Res> {
    const id = req.query.get('branch_id') ?? '';
    const spec =
      (
        req.body as {
          spec?: {
            source_branch?: string;
            source_branch_time?: string;
            ttl?: string;
            expire_time?: string;
            no_expiry?: boolean;
          };
        }
      ).spec ?? {};
    if (!/^[a-z][a-z0-9-]{0,62}$/.test(id)) throw err(400, 'INVALID_PARAMETER_VALUE', `Invalid branch_id "${id}"`);
    if ([spec.ttl, spec.expire_time, spec.no_expiry].filter((v) => v !== undefined).length !== 1) {
      throw err(400, 'INVALID_PARAMETER_VALUE', 'Exactly one of ttl, expire_time or no_expiry must be set');
    }
    // BranchSpec.no_expiry: "If set to false, the request is invalid; provide either ttl or expire_time instead."
    if (spec.no_expiry === false)
      throw err(400, 'INVALID_PARAMETER_VALUE', 'no_expiry must be true when set; give ttl or expire_time instead');
    if (this.branches.has(id)) throw err(409, 'ALREADY_EXISTS', `Branch ${id} already exists`);
    if (this.branches.size >= this.o.maxBranches)
      throw err(
        400,
        'RESOURCE_LIMIT_EXCEEDED',
        `Project has reached the maximum number of branches (${this.o.maxBranches})`,
      );
    // A resource name, `projects/{project_id}/branches/{branch_id}`, as BranchSpec.source_branch is defined.
    const sourceId = /^projects\/([^/]+)\/branches\/([^/]+)$/.exec(spec.source_branch ?? '');
    if (!sourceId)
      throw err(
        400,
        'INVALID_PARAMETER_VALUE',
        `source_branch "${spec.source_branch}" is not of the form projects/{project_id}/branches/{branch_id}`,
      );
    const source = sourceId[1] === this.o.project ? this.branches.get(sourceId[2]!) : undefined;
    if (!source) throw err(404, 'RESOURCE_DOES_NOT_EXIST', `Source branch ${spec.source_branch} does not exist`);
    // A point in time on the source: a timestamp within the project's history retention, not ahead of now.
    if (spec.source_branch_time !== undefined) {
      const t = Date.parse(spec.source_branch_time);
      if (Number.isNaN(t))
        throw err(400, 'INVALID_PARAMETER_VALUE', `source_branch_time "${spec.source_branch_time}" is not a timestamp`);
      if (t > this.now() + 1000) throw err(400, 'INVALID_PARAMETER_VALUE', 'source_branch_time is in the future');
      if (t < this.now() - HISTORY_RETENTION_SECONDS * 1000)
        throw err(400, 'INVALID_PARAMETER_VALUE', "source_branch_time is before the project's history retention");
    }
    if (spec.expire_time !== undefined && !(Date.parse(spec.expire_time) > this.now()))
      throw err(400, 'INVALID_PARAMETER_VALUE', 'expire_time must be in the future');
    const ttl = spec.ttl ? Number(/^(\d+)s$/.exec(spec.ttl)?.[1]) : undefined;
    if (ttl !== undefined && !(ttl > 0 && ttl <= 30 * 86_400))
      throw err(400, 'INVALID_PARAMETER_VALUE', 'ttl must be between 1s and 30 days');
    const database = await this.dbs.create(source.database);
    const created = new Date(this.now());
    const expires = ttl
      ? new Date(created.getTime() + ttl * 1000)
      : spec.expire_time
        ? new Date(spec.expire_time)
        : null;
    const branch: EmuBranch = { id, source: source.id, database, created, expires, ready: false, isDefault: false };
    this.branches.set(id, branch);
    const res = this.operation(`projects/${this.o.project}/branches/${id}`, () => {
      branch.ready = true;
      return this.branchJson(branch);
    });
    branch.op = (res.body as { name: string }).name;
    return res;
  }

  private async deleteBranch(id: string, allowMissing: boolean, purge: boolean): Promise<Res> {
    const branch = this.branches.get(id);
    if (!branch || (branch.deleted && !purge)) {
      if (allowMissing)
        return {
          status: 200,
          body: {
            name: `projects/${this.o.project}/branches/${id}/operations/${randomUUID()}`,
            done: true,
            response: {},
          },
        };
      throw err(404, 'RESOURCE_DOES_NOT_EXIST', `Branch ${id} does not exist`);
    }
    if (branch.isDefault) throw err(400, 'INVALID_STATE', 'The default branch cannot be deleted');
    // A soft-deleted child still reads its parent's history: it blocks the parent too.
    if ([...this.branches.values()].some((b) => b.source === id))
      throw err(400, 'INVALID_STATE', `Branch ${id} has child branches`);
    for (const [key, e] of this.endpoints)
      if (e.branch === id) {
        await e.proxy.close();
        this.endpoints.delete(key);
      }
    if (purge) {
      this.branches.delete(id);
      await this.dbs.drop(branch.database);
    } else {
      branch.deleted = new Date(this.now());
    }
    return this.operation(`projects/${this.o.project}/branches/${id}`, () => ({}));
  }

  private operation(resource: string, result: () => unknown): Res {
    const name = `${resource}/operations/${randomUUID()}`;
    this.ops.set(name, { name, polls: 0, started: this.now(), result });
    return { status: 200, body: { name, done: false, metadata: {} } };
  }

  private poll(name: string): Res {
    const op = this.ops.get(name);
    if (!op) throw err(404, 'RESOURCE_DOES_NOT_EXIST', `Operation ${name} does not exist`);
    op.polls++;
    if (op.polls < this.o.opPolls || this.now() - op.started < this.o.opDelayMs)
      return { status: 200, body: { name, done: false } };
    return { status: 200, body: { name, done: true, response: op.result() } };
  }

  private async addEndpoint(branchId: string, id = 'primary'): Promise<EmuEndpoint> {
    const proxy = await startPgProxy(async (user, password, database) => {
      const login = this.logins.get(password);
      // A Databricks identity's token, or the password of a native Postgres role made with SQL.
      const token = login !== undefined && login.expires > this.now() && login.user === user;
      if (!token && !(this.o.nativeLogin !== false && (await sqlRoleLogin(user, password))))
        return { ok: false, code: '28P01', message: `password authentication failed for user "${user}"` };
      if (database !== 'databricks_postgres')
        return { ok: false, code: '3D000', message: `database "${database}" does not exist` };
      const branch = this.branches.get(branchId)!;
      const routed = this.o.bug === 'parent-database' && branch.source ? this.branches.get(branch.source)! : branch;
      return { ok: true, database: routed.database, ...(token ? {} : { user }) };
    });
    const endpoint = { id, branch: branchId, proxy };
    this.endpoints.set(`${branchId}/${id}`, endpoint);
    return endpoint;
  }

  private endpointName(e: EmuEndpoint): string {
    return `projects/${this.o.project}/branches/${e.branch}/endpoints/${e.id}`;
  }

  private endpointJson(e: EmuEndpoint): unknown {
    const source = this.branches.get(e.branch)?.source;
    const shown =
      this.o.bug === 'parent-host' && source ? ([...this.endpoints.values()].find((x) => x.branch === source) ?? e) : e;
    return {
      name: this.endpointName(e),
      endpoint_id: e.id,
      status: {
        endpoint_type: 'ENDPOINT_TYPE_READ_WRITE',
        current_state: 'ACTIVE',
        hosts: { host: `127.0.0.1:${shown.proxy.port}` },
      },
    };
  }

  private branchJson(b: EmuBranch): unknown {
    const source = b.source ? `projects/${this.o.project}/branches/${b.source}` : undefined;
    return {
      name: `projects/${this.o.project}/branches/${b.id}`,
      branch_id: b.id,
      parent: `projects/${this.o.project}`,
      create_time: b.created.toISOString(),
      status: {
        current_state: b.deleted ? 'DELETED' : b.ready ? 'READY' : 'INIT',
        ...(b.deleted
          ? {
              delete_time: b.deleted.toISOString(),
              purge_time: new Date(b.deleted.getTime() + 7 * 86_400_000).toISOString(),
            }
          : {}),
        default: b.isDefault,
        ...(source ? { source_branch: source } : {}),
        ...(b.expires ? { expire_time: b.expires.toISOString() } : {}),
      },
    };
  }
}

interface EndpointSpecBody {
  endpoint_type?: string;
  autoscaling_limit_min_cu?: number;
  autoscaling_limit_max_cu?: number;
  no_suspension?: boolean;
  suspend_timeout_duration?: string;
}

/** EndpointSpec's documented bounds (the SDKs' postgres.EndpointSpec), or undefined when it keeps them. */
function endpointSpecRefusal(spec: EndpointSpecBody): string | undefined {
  const min = spec.autoscaling_limit_min_cu;
  const max = spec.autoscaling_limit_max_cu;
  if (min !== undefined && min < 0.5) return `autoscaling_limit_min_cu ${min} is below 0.5`;
  if (max !== undefined && max > 64) return `autoscaling_limit_max_cu ${max} is above 64`;
  if (min !== undefined && max !== undefined && min > max)
    return 'autoscaling_limit_min_cu is above autoscaling_limit_max_cu';
  if (min !== undefined && max !== undefined && max - min > 16)
    return 'autoscaling_limit_max_cu - autoscaling_limit_min_cu must not exceed 16';
  if (spec.no_suspension === false) return 'no_suspension must be true when set';
  if (spec.no_suspension !== undefined && spec.suspend_timeout_duration !== undefined)
    return 'no_suspension and suspend_timeout_duration are mutually exclusive';
  if (spec.suspend_timeout_duration !== undefined) {
    const seconds = Number(/^(\d+(?:\.\d+)?)s$/.exec(spec.suspend_timeout_duration)?.[1]);
    if (!(seconds >= 60 && seconds <= 604_800)) return 'suspend_timeout_duration must be between 60s and 604800s';
  }
  return undefined;
}
