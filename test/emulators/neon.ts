/**
 * A local stand-in for one Neon project behind API v2, implementing the documented shapes
 * Consort relies on: branches created with a read-write endpoint (`branch: { parent_id,
 * parent_timestamp?, name, expires_at? }`, `endpoints`, `annotation_value`) answering `branch`,
 * `endpoints`, `operations` and `connection_uris`; cursor-paginated listing with annotations;
 * delete (soft unless `hard_delete=true`: a soft-deleted branch is listed only with
 * `include_deleted=true` and still counts as its parent's child; 204 when already gone); restore from another branch (refused for a branch with children
 * unless `preserve_under_name` keeps the old state, which then takes the children); operations
 * polled until `finished` (slow ones: `opPolls`, `opDelayMs`; a branch is `init` until its create
 * operations finish); `423 Locked` while another operation runs; the connection URI per database
 * and role; `search` by name. It refuses what Neon refuses: a `limit` outside 1..10000, an unknown
 * sort, a `parent_timestamp` ahead of now or before the history retention, an `expires_at` past. Every body it answers follows the schemas of Neon's OpenAPI file
 * (test/branches/neon/openapi.test.ts checks each exchange against it).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { PhysicalDatabases } from './databases.js';
import { HttpReply, JsonServer, type Req, type Res } from './json-server.js';
import { startPgProxy, type PgProxy } from './pg-proxy.js';
import { dropOwnerRole, ownerRole, sqlRoleLogin } from './sql-roles.js';

export interface NeonEmulatorOptions {
  projectId?: string;
  apiKey?: string;
  /** Polls an operation answers `running` before it finishes. */
  opPolls?: number;
  pageSize?: number;
  maxBranches?: number;
  /** Refuse new operations while one runs (423), as Neon does. */
  lock?: boolean;
  /** An operation finishes only once this long has passed, however often it is polled. */
  opDelayMs?: number;
  bug?: 'parent-uri';
  /**
   * Who `neondb_owner` is on the branches' server: `superuser` (default), `createrole` (CREATEROLE
   * and CREATEDB only, as on Neon: a member of `neon_superuser`) or `createdb` (no CREATEROLE).
   * Roles made with SQL log in with their password.
   */
  owner?: 'superuser' | 'createrole' | 'createdb';
}

interface EmuBranch {
  id: string;
  name: string;
  parentId: string | null;
  database: string;
  created: Date;
  expires: string | null;
  annotations: Record<string, string>;
  isDefault: boolean;
  endpoint: { id: string; proxy: PgProxy };
  ops: string[];
}
interface EmuOp {
  id: string;
  branchId: string;
  action: string;
  polls: number;
  started: number;
}

/** The project's history retention (Neon's default on paid plans is a day). */
const HISTORY_RETENTION_SECONDS = 86_400;

const err = (status: number, message: string, code = '') =>
  new HttpReply(status, { code, message, request_id: randomUUID() });

export class NeonEmulator {
  readonly server = new JsonServer((req) => this.route(req));
  readonly dbs = new PhysicalDatabases();
  readonly branches = new Map<string, EmuBranch>();
  /**
   * Branches deleted without `hard_delete=true`: Neon keeps them recoverable for 7 days (listed with
   * `include_deleted=true`, gone from every other answer). The stand-in keeps them until it stops;
   * such a branch still counts as its parent's child (its parent must stay for it to be recovered).
   */
  readonly softDeleted = new Map<string, EmuBranch>();
  private readonly ops = new Map<string, EmuOp>();
  readonly password = randomBytes(12).toString('hex');
  readonly o: Required<Omit<NeonEmulatorOptions, 'bug' | 'owner'>> & NeonEmulatorOptions;
  locked = 0;

  constructor(options: NeonEmulatorOptions = {}) {
    this.o = {
      projectId: 'emu-project-123',
      apiKey: `napi_${randomBytes(16).toString('hex')}`,
      opPolls: 1,
      opDelayMs: 0,
      pageSize: 2,
      maxBranches: 50,
      lock: true,
      ...options,
    };
  }

  env(): NodeJS.ProcessEnv {
    return {
      NEON_API_KEY: this.o.apiKey,
      NEON_PROJECT_ID: this.o.projectId,
      NEON_API_HOST: `${this.server.url}/api/v2`,
    };
  }

  async start(): Promise<this> {
    await this.server.start();
    try {
      if (this.o.owner === 'createrole' || this.o.owner === 'createdb') {
        this.dbs.owner = `${this.dbs.prefix}owner`;
        await ownerRole(this.dbs.owner, this.o.owner === 'createrole');
      }
      await this.addBranch('main', null, await this.dbs.create(), null, {}, true);
    } catch (e) {
      // The caller never gets an emulator to stop: close what is open, or jest never exits.
      await this.stop().catch(() => undefined);
      throw e;
    }
    return this;
  }

  async stop(): Promise<void> {
    try {
      for (const b of [...this.branches.values(), ...this.softDeleted.values()]) await b.endpoint.proxy.close();
    } finally {
      await this.server.close();
    }
    await this.dbs.dropAll();
    if (this.dbs.owner) await dropOwnerRole(this.dbs.owner);
  }

  byName(name: string): EmuBranch | undefined {
    return [...this.branches.values()].find((b) => b.name === name);
  }

  private async route(req: Req): Promise<Res> {
    if (req.headers.authorization !== `Bearer ${this.o.apiKey}`) throw err(401, 'authentication failed');
    const base = `/api/v2/projects/${this.o.projectId}`;
    if (req.path !== base && !req.path.startsWith(`${base}/`)) throw err(404, 'project not found');
    const rest = req.path.slice(base.length).split('/').filter(Boolean);
    if (rest.length === 0) return { status: 200, body: { project: this.projectJson() } };
    if (rest[0] === 'operations' && rest[1]) return this.poll(rest[1]);
    if (rest[0] === 'connection_uri') return this.connectionUri(req);
    if (rest[0] !== 'branches') throw err(404, `no route for ${req.method} ${req.path}`);
    if (rest.length === 1 && req.method === 'GET') return this.list(req);
    if (rest.length === 1 && req.method === 'POST') return this.create(req);
    const branch = this.branches.get(rest[1]!);
    if (rest.length === 2 && req.method === 'DELETE') return this.remove(branch ?? rest[1]!, req);
    if (!branch) throw err(404, 'branch not found');
    if (rest.length === 2 && req.method === 'GET') {
      for (const id of branch.ops) this.advance(id); // operations go on whether or not their caller still polls them
      return { status: 200, body: { branch: this.json(branch), annotation: this.annotationJson(branch) } };
    }
    if (rest[2] === 'endpoints') return { status: 200, body: { endpoints: [this.endpointJson(branch)] } };
    if (rest[2] === 'restore' && req.method === 'POST') return this.restore(branch, req);
    throw err(404, `no route for ${req.method} ${req.path}`);
  }

  private guard(): void {
    if (this.o.lock && [...this.ops.values()].some((op) => !this.finished(op))) {
      this.locked++;
      throw err(
        423,
        'project already has running conflicting operations, scheduling of new ones is prohibited',
        'LOCKED',
      );
    }
  }

  private list(req: Req): Res {
    const search = req.query.get('search');
    const limit = req.query.get('limit');
    if (limit !== null && !(/^\d+$/.test(limit) && Number(limit) >= 1 && Number(limit) <= 10_000))
      throw err(400, `limit must be an integer from 1 to 10000, not "${limit}"`);
    for (const [name, allowed] of [
      ['sort_by', ['name', 'created_at', 'updated_at']],
      ['sort_order', ['asc', 'desc']],
      ['include_deleted', ['true', 'false']],
    ] as const) {
      const v = req.query.get(name);
      if (v !== null && !(allowed as readonly string[]).includes(v))
        throw err(400, `${name} must be one of ${allowed.join(', ')}, not "${v}"`);
    }
    const deleted = req.query.get('include_deleted') === 'true' ? [...this.softDeleted.values()] : [];
    const all = [...this.branches.values(), ...deleted]
      .filter((b) => !search || b.name.includes(search) || b.id.includes(search))
      .sort((a, b) => a.created.getTime() - b.created.getTime());
    const offset = Number(req.query.get('cursor') ?? 0);
    const size = Math.min(Number(req.query.get('limit') ?? 100), this.o.pageSize);
    const page = all.slice(offset, offset + size);
    const annotations = Object.fromEntries(page.map((b) => [b.id, this.annotationJson(b)]));
    const next = offset + size < all.length ? String(offset + size) : undefined;
    return {
      status: 200,
      body: {
        branches: page.map((b) => this.json(b)),
        annotations,
        pagination: next ? { next, sort_by: 'created_at', sort_order: 'asc' } : {},
      },
    };
  }

  private async create(req: Req): Promise<Res> {
    const body = req.body as {
      branch?: { name?: string; parent_id?: string; expires_at?: string; parent_timestamp?: string };
      endpoints?: { type: string }[];
      annotation_value?: Record<string, string>;
    };
    const name = body.branch?.name ?? `br-${randomBytes(3).toString('hex')}`;
    if (this.byName(name)) throw err(409, `branch with name "${name}" already exists`, 'BRANCH_ALREADY_EXISTS');
    if (this.branches.size >= this.o.maxBranches)
      throw err(422, `branches limit exceeded (${this.o.maxBranches})`, 'BRANCHES_LIMIT_EXCEEDED');
    const parent = this.branches.get(body.branch?.parent_id ?? '');
    if (!parent) throw err(404, 'parent branch not found');
    if (!body.endpoints?.some((e) => e.type === 'read_write'))
      throw err(400, 'this emulator expects a read_write endpoint');
    const expires = body.branch?.expires_at ?? null;
    // RFC 3339 "with precision up to seconds", as BranchCreateRequest.expires_at is defined.
    if (expires && !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)$/.test(expires))
      throw err(400, `expires_at "${expires}" must be RFC 3339 with precision up to seconds`);
    if (expires && Date.parse(expires) > Date.now() + 30 * 86_400_000 + 60_000)
      throw err(400, 'expires_at must be at most 30 days in the future');
    if (expires && Date.parse(expires) <= Date.now()) throw err(400, 'expires_at must be in the future');
    // A point in time on the parent: a date-time within the project's history retention, not ahead of now.
    const at = body.branch?.parent_timestamp;
    if (at !== undefined) {
      const t = Date.parse(at);
      if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(at) || Number.isNaN(t))
        throw err(400, `parent_timestamp "${at}" is not an ISO 8601 date-time`);
      if (t > Date.now() + 1000) throw err(400, 'parent_timestamp is in the future');
      if (t < Date.now() - HISTORY_RETENTION_SECONDS * 1000)
        throw err(400, "parent_timestamp is before the project's history retention window");
    }
    this.guard(); // a request Neon refuses is refused before it waits for the project's lock
    const branch = await this.addBranch(
      name,
      parent.id,
      await this.dbs.create(parent.database),
      expires,
      body.annotation_value ?? {},
      false,
    );
    const operations = [this.operation(branch.id, 'create_branch'), this.operation(branch.id, 'start_compute')];
    branch.ops = operations.map((op) => op.id);
    const now = new Date().toISOString();
    return {
      status: 201,
      body: {
        branch: this.json(branch),
        endpoints: [this.endpointJson(branch)],
        operations: operations.map((op) => this.opJson(op)),
        roles: [{ branch_id: branch.id, name: 'neondb_owner', protected: false, created_at: now, updated_at: now }],
        databases: [
          { id: 1, branch_id: branch.id, name: 'neondb', owner_name: 'neondb_owner', created_at: now, updated_at: now },
        ],
        connection_uris: [],
      },
    };
  }

  /** Soft by default, as Neon deletes: `hard_delete=true` removes the branch for good (also one already soft-deleted). */
  private async remove(found: EmuBranch | string, req: Req): Promise<Res> {
    const hard = req.query.get('hard_delete');
    if (hard !== null && hard !== 'true' && hard !== 'false')
      throw err(400, `hard_delete must be true or false, not "${hard}"`);
    const gone = typeof found === 'string' ? this.softDeleted.get(found) : undefined;
    if (gone && hard === 'true') {
      this.softDeleted.delete(gone.id);
      await gone.endpoint.proxy.close();
      await this.dbs.drop(gone.database);
    }
    if (typeof found === 'string') return { status: 204 };
    const branch = found;
    this.guard();
    if (branch.isDefault) throw err(400, 'cannot delete the default branch');
    if ([...this.branches.values(), ...this.softDeleted.values()].some((b) => b.parentId === branch.id))
      throw err(400, 'cannot delete a branch that has children');
    this.branches.delete(branch.id);
    if (hard === 'true') {
      await branch.endpoint.proxy.close();
      await this.dbs.drop(branch.database);
    } else this.softDeleted.set(branch.id, branch);
    return {
      status: 200,
      body: {
        branch: this.json(branch),
        operations: [this.operation(branch.id, 'suspend_compute'), this.operation(branch.id, 'delete_timeline')].map(
          (op) => this.opJson(op),
        ),
      },
    };
  }

  private async restore(branch: EmuBranch, req: Req): Promise<Res> {
    this.guard();
    const body = req.body as { source_branch_id?: string; preserve_under_name?: string };
    const source = this.branches.get(body.source_branch_id ?? '');
    if (!source) throw err(404, 'source branch not found');
    const children = [...this.branches.values(), ...this.softDeleted.values()].filter((b) => b.parentId === branch.id);
    if (children.length > 0 && !body.preserve_under_name)
      throw err(400, 'preserve_under_name is required when the branch has children');
    const operations = [this.operation(branch.id, 'create_timeline'), this.operation(branch.id, 'start_compute')];
    if (body.preserve_under_name) {
      if (this.byName(body.preserve_under_name))
        throw err(409, `branch with name "${body.preserve_under_name}" already exists`, 'BRANCH_ALREADY_EXISTS');
      // The old state becomes a new branch (same parent) and takes the children with it.
      const kept = await this.addBranch(
        body.preserve_under_name,
        branch.parentId,
        await this.dbs.create(branch.database),
        null,
        {},
        false,
      );
      for (const child of children) child.parentId = kept.id;
    }
    await this.dbs.replace(branch.database, source.database);
    return { status: 200, body: { branch: this.json(branch), operations: operations.map((op) => this.opJson(op)) } };
  }

  private connectionUri(req: Req): Res {
    const branch = this.branches.get(req.query.get('branch_id') ?? '');
    if (!branch) throw err(404, 'branch not found');
    if (req.query.get('database_name') !== 'neondb')
      throw err(404, `database "${req.query.get('database_name')}" not found`);
    if (req.query.get('role_name') !== 'neondb_owner') throw err(404, `role "${req.query.get('role_name')}" not found`);
    const shown = this.o.bug === 'parent-uri' && branch.parentId ? this.branches.get(branch.parentId)! : branch;
    return {
      status: 200,
      body: {
        uri: `postgresql://neondb_owner:${this.password}@127.0.0.1:${shown.endpoint.proxy.port}/neondb?sslmode=disable`,
      },
    };
  }

  private operation(branchId: string, action: string): EmuOp {
    const op = { id: randomUUID(), branchId, action, polls: 0, started: Date.now() };
    this.ops.set(op.id, op);
    return op;
  }

  private advance(id: string): EmuOp | undefined {
    const op = this.ops.get(id);
    if (op) op.polls++;
    return op;
  }

  private finished(op: EmuOp): boolean {
    return op.polls >= this.o.opPolls && Date.now() - op.started >= this.o.opDelayMs;
  }

  private poll(id: string): Res {
    const op = this.advance(id);
    if (!op) throw err(404, 'operation not found');
    return { status: 200, body: { operation: this.opJson(op) } };
  }

  private opJson(op: EmuOp): unknown {
    const status = this.finished(op) ? 'finished' : op.polls === 0 ? 'scheduling' : 'running';
    return {
      id: op.id,
      project_id: this.o.projectId,
      branch_id: op.branchId,
      action: op.action,
      status,
      failures_count: 0,
      created_at: new Date(op.started).toISOString(),
      updated_at: new Date().toISOString(),
      total_duration_ms: Date.now() - op.started,
    };
  }

  private annotationJson(b: EmuBranch): unknown {
    return { object: { type: 'console/branch', id: b.id }, value: b.annotations };
  }

  private projectJson(): unknown {
    const at = new Date(0).toISOString();
    return {
      id: this.o.projectId,
      name: 'emulated',
      pg_version: 15,
      platform_id: 'aws',
      region_id: 'aws-us-east-2',
      provisioner: 'k8s-neonvm',
      proxy_host: 'us-east-2.aws.neon.tech',
      branch_logical_size_limit: 0,
      branch_logical_size_limit_bytes: 0,
      store_passwords: true,
      cpu_used_sec: 0,
      active_time: 0,
      creation_source: 'console',
      created_at: at,
      updated_at: at,
      owner_id: 'emulated-owner',
      history_retention_seconds: HISTORY_RETENTION_SECONDS,
      consumption_period_start: at,
      consumption_period_end: at,
      settings: {},
      default_endpoint_settings: {},
      org_id: 'org-emulated',
      active_time_seconds: 0,
      compute_time_seconds: 0,
      written_data_bytes: 0,
      data_transfer_bytes: 0,
      data_storage_bytes_hour: 0,
    };
  }

  private async addBranch(
    name: string,
    parentId: string | null,
    database: string,
    expires: string | null,
    annotations: Record<string, string>,
    isDefault: boolean,
  ): Promise<EmuBranch> {
    const id = `br-${randomBytes(4).toString('hex')}`;
    const proxy = await startPgProxy(async (user, password, db) => {
      const owner = user === 'neondb_owner' && password === this.password;
      if (!owner && (user === 'neondb_owner' || !(await sqlRoleLogin(user, password))))
        return { ok: false, code: '28P01', message: `password authentication failed for user "${user}"` };
      if (db !== 'neondb') return { ok: false, code: '3D000', message: `database "${db}" does not exist` };
      const routed = this.branches.get(id)?.database ?? database;
      return { ok: true, database: routed, ...(owner ? (this.dbs.owner ? { user: this.dbs.owner } : {}) : { user }) };
    });
    const branch: EmuBranch = {
      id,
      name,
      parentId,
      database,
      created: new Date(),
      expires,
      annotations,
      isDefault,
      endpoint: { id: `ep-${randomBytes(4).toString('hex')}`, proxy },
      ops: [],
    };
    this.branches.set(id, branch);
    return branch;
  }

  private endpointJson(b: EmuBranch): unknown {
    const at = b.created.toISOString();
    return {
      id: b.endpoint.id,
      branch_id: b.id,
      project_id: this.o.projectId,
      type: 'read_write',
      host: `127.0.0.1:${b.endpoint.proxy.port}`,
      current_state: 'active',
      region_id: 'aws-us-east-2',
      autoscaling_limit_min_cu: 0.25,
      autoscaling_limit_max_cu: 2,
      pooler_enabled: false,
      pooler_mode: 'transaction',
      disabled: false,
      passwordless_access: true,
      creation_source: 'console',
      created_at: at,
      updated_at: at,
      settings: {},
      proxy_host: '127.0.0.1',
      suspend_timeout_seconds: 0,
      provisioner: 'k8s-neonvm',
    };
  }

  private json(b: EmuBranch): unknown {
    const ready = b.ops.every((id) => {
      const op = this.ops.get(id);
      return !op || this.finished(op);
    });
    return {
      id: b.id,
      project_id: this.o.projectId,
      name: b.name,
      current_state: ready ? 'ready' : 'init',
      state_changed_at: b.created.toISOString(),
      default: b.isDefault,
      protected: false,
      ...(b.parentId ? { parent_id: b.parentId } : {}),
      ...(b.expires ? { expires_at: b.expires } : {}),
      created_at: b.created.toISOString(),
      updated_at: b.created.toISOString(),
      creation_source: 'console',
      cpu_used_sec: 0,
      active_time_seconds: 0,
      compute_time_seconds: 0,
      written_data_bytes: 0,
      data_transfer_bytes: 0,
    };
  }
}
