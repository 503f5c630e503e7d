/**
 * A BranchProvider over a managed branching service, with exactly the semantics of `local`:
 * Consort's `main` is the project's default branch, names follow the same rules, `ttlMs` becomes
 * the service's own expiry (clamped to its cap, and said so), every new branch's URL is verified
 * before anything writes to it, and `prepare` runs on a hidden staging branch that is published
 * (forked, copy-on-write) under the real name only once it succeeded — so nobody, in this process
 * or another, ever sees a half-prepared branch, and a run killed mid-way leaves only a staging
 * branch that `gc` removes.
 */
import { randomBytes } from 'node:crypto';
import { assertBranchName, ROOT_BRANCH } from '../../core/names.js';
import { formatDuration } from '../../core/duration.js';
import { ConsortError, isConsortError } from '../../core/errors.js';
import type {
  BranchProvider,
  BranchRecord,
  Capabilities,
  CreateBranchOptions,
  DeleteBranchOptions,
  EnsureOutcome,
  GcResult,
  ProviderName,
} from '../../ports/branch-provider.js';
import { assertNotReserved } from '../database-name.js';
import { cloudRoleName, confineCloudBranch, retireCloudRole } from './confine.js';
import type { BranchService, RemoteBranch } from './service.js';
import { Tree, STAGE_PREFIX } from './tree.js';
import { verifyBranchUrl } from './verify.js';
import { branchExists, rootHasNoParent } from '../errors.js';
import { count } from '../../core/plural.js';

export interface CloudProviderOptions {
  log?: (message: string) => void;
  /** Told every connection string handed out, so a shell can mask it in anything it prints. */
  onSecret?: (connectionString: string) => void;
  /** A staging branch without children older than this is a leftover of a killed run (gc removes it). */
  stageGraceMs?: number;
  now?: () => Date;
}

export class CloudBranchProvider implements BranchProvider {
  readonly name: ProviderName;
  private caps: Promise<Capabilities> | undefined;

  constructor(
    private readonly service: BranchService,
    private readonly options: CloudProviderOptions = {},
  ) {
    this.name = service.provider;
  }

  capabilities(): Promise<Capabilities> {
    this.caps ??= this.service.describe().then(
      (d) => ({
        provider: this.name,
        mode: 'native' as const,
        modeReason: d.modeReason,
        serverVersion: d.serverVersion,
      }),
      (e: unknown) => {
        this.caps = undefined;
        throw e;
      },
    );
    return this.caps;
  }

  private async tree(): Promise<Tree> {
    await this.capabilities();
    return new Tree(await this.service.list());
  }

  async create(options: CreateBranchOptions): Promise<BranchRecord> {
    const name = assertBranchName(options.name);
    assertNotReserved(name);
    if (name.startsWith(STAGE_PREFIX))
      throw new ConsortError(
        'invalid-input',
        `Names starting with "${STAGE_PREFIX}" are reserved for Consort's staging branches.`,
      );
    const tree = await this.tree();
    const found = tree.find(name);
    if (found) throw branchExists(name, tree.parentName(found));
    const parent = this.required(tree, options.parent ?? ROOT_BRANCH);
    const ttlMs = this.clampTtl(name, options.ttlMs);
    const annotations = { 'created-by': 'consort', ...options.annotations };
    const common = { ...(ttlMs !== undefined ? { ttlMs } : {}), annotations };
    if (!options.prepare) {
      const remote = await this.service.create({
        name,
        parentId: parent.id,
        ...common,
        ...(options.at ? { at: options.at } : {}),
        ...(options.gitBranch ? { gitBranch: options.gitBranch } : {}),
      });
      await this.verifyOrDelete(remote, name, parent, tree.nameOf(parent));
      return toRecord(remote, tree.nameOf(parent));
    }
    const stage = await this.service.create({
      name: `${STAGE_PREFIX}${randomBytes(5).toString('hex')}`,
      parentId: parent.id,
      ...common,
      ...(options.at ? { at: options.at } : {}),
    });
    let published: RemoteBranch | undefined;
    try {
      const url = await this.requireUri(stage, name);
      await verifyBranchUrl({
        branch: name,
        url,
        parent: tree.nameOf(parent),
        parentUrl: await this.service.connectionUri(parent),
      });
      // The seed (the project's code) gets a role of the staging branch, dropped before publishing.
      let seedRole: string | undefined;
      await options.prepare(url, async () => {
        const role = cloudRoleName(stage.id);
        const made = await confineCloudBranch(url, role);
        if (made.url === null) {
          this.options.log?.(`${this.name}: no confined role for the seed of "${name}": ${made.reason}.`);
          return url;
        }
        seedRole = role;
        this.options.onSecret?.(made.url);
        return made.url;
      });
      if (seedRole) await retireCloudRole(url, seedRole);
      published = await this.service.create({
        name,
        parentId: stage.id,
        ...common,
        ...(options.gitBranch ? { gitBranch: options.gitBranch } : {}),
      });
      await verifyBranchUrl({
        branch: name,
        url: await this.requireUri(published, name),
        parent: tree.nameOf(parent),
        parentUrl: url,
      });
      return toRecord(published, tree.nameOf(parent));
    } catch (e) {
      if (published) await this.service.delete(published).catch(() => undefined);
      await this.service.delete(stage).catch(() => undefined);
      throw e;
    }
  }

  async ensure(options: CreateBranchOptions): Promise<{ branch: BranchRecord; outcome: EnsureOutcome }> {
    const parent = options.parent ?? ROOT_BRANCH;
    const current = await this.get(options.name);
    if (current && current.parent === parent) return { branch: current, outcome: 'reused' };
    if (current) await this.delete(options.name, { recursive: true });
    try {
      return { branch: await this.create(options), outcome: current ? 'recreated' : 'created' };
    } catch (e) {
      // Another run published the same name first: use theirs, it went through the same prepare.
      const raced = isConsortError(e, 'branch-exists') ? await this.get(options.name) : undefined;
      if (raced && raced.parent === parent) return { branch: raced, outcome: 'reused' };
      throw e;
    }
  }

  async get(name: string): Promise<BranchRecord | undefined> {
    const tree = await this.tree();
    const remote = tree.find(name);
    return remote ? toRecord(remote, tree.parentName(remote)) : undefined;
  }

  async list(): Promise<BranchRecord[]> {
    const tree = await this.tree();
    return tree.visible().map((b) => toRecord(b, tree.parentName(b)));
  }

  async delete(name: string, options: DeleteBranchOptions = {}): Promise<string[]> {
    if (name === ROOT_BRANCH) {
      throw new ConsortError(
        'protected-branch',
        'The root branch "main" (the project\'s default branch) cannot be deleted by Consort.',
        {
          hint: "Delete other branches, or manage the default branch in the service's console.",
        },
      );
    }
    const tree = await this.tree();
    const target = this.required(tree, name);
    const subtree = tree.subtree(target);
    const children = subtree.filter((b) => b !== target);
    if (children.length > 0 && !options.recursive) {
      throw new ConsortError(
        'branch-has-children',
        `Branch "${name}" has ${count(children.length, 'child branch', 'child branches')}: ${children
          .map((c) => tree.nameOf(c))
          .sort()
          .join(', ')}.`,
        {
          hint: `Delete them first, or pass --recursive to delete "${name}" and everything forked from it.`,
        },
      );
    }
    const deleted: string[] = [];
    for (const branch of subtree.reverse()) {
      await this.service.delete(branch);
      deleted.push(tree.nameOf(branch));
      const stage = tree.stageParent(branch);
      if (stage && tree.children(stage).every((c) => subtree.includes(c))) await this.service.delete(stage);
    }
    return deleted;
  }

  async reset(name: string): Promise<BranchRecord> {
    if (name === ROOT_BRANCH)
      throw rootHasNoParent("It is the project's default branch: restore or reset it in the service's console.");
    const tree = await this.tree();
    const target = this.required(tree, name);
    const children = tree.subtree(target).filter((b) => b !== target);
    if (children.length > 0) {
      throw new ConsortError(
        'branch-has-children',
        `Branch "${name}" cannot be reset while it has child branches (${children.map((c) => tree.nameOf(c)).join(', ')}).`,
        {
          hint: 'The service cannot replace a branch under its children: delete them first.',
        },
      );
    }
    const parentName = tree.parentName(target)!;
    const parent = this.required(tree, parentName);
    if (this.service.restore && !tree.stageParent(target)) {
      // Only hidden staging branches can be left under it (a leftover, or another run's prepare in
      // flight); the service will not restore over them, so their old parent is kept, hidden, under
      // a staging name — gc removes it once it has no children left.
      const hidden = tree.children(target);
      const preserveUnderName = hidden.length > 0 ? `${STAGE_PREFIX}${randomBytes(5).toString('hex')}` : undefined;
      if (preserveUnderName)
        this.options.log?.(
          `${this.name}: "${name}" has ${count(hidden.length, 'hidden staging branch', 'hidden staging branches')}; keeping its old state as ${preserveUnderName} for them.`,
        );
      await this.service.restore(target, parent, preserveUnderName ? { preserveUnderName } : {});
      await this.verifyOrDelete(target, name, parent, parentName, false);
      return toRecord(target, parentName);
    }
    // No in-place reset: delete and fork again under the same name, keeping expiry and pairing.
    const remainingTtl = target.expiresAt
      ? Math.max(60_000, target.expiresAt.getTime() - this.now().getTime())
      : undefined;
    await this.delete(name);
    try {
      return await this.create({
        name,
        parent: parentName,
        ...(remainingTtl ? { ttlMs: remainingTtl } : {}),
        ...(target.gitBranch ? { gitBranch: target.gitBranch } : {}),
      });
    } catch (e) {
      throw new ConsortError(
        isConsortError(e) ? e.code : 'service-error',
        `Branch "${name}" was deleted for the reset, but forking it again from "${parentName}" failed: ${(e as Error).message}`,
        {
          hint: `Create it again with \`consort branch create ${name} --from ${parentName}\`.`,
          cause: e,
        },
      );
    }
  }

  async connectionUri(name: string): Promise<string> {
    const tree = await this.tree();
    const url = await this.requireUri(this.required(tree, name), name);
    this.options.onSecret?.(url);
    return url;
  }

  /**
   * A URL for untrusted code: a role of the branch's own, made with SQL through its endpoint
   * (cloud/confine.ts), re-keyed on every call. Null, with the reason logged, when the service's
   * admin role cannot make one: the caller then uses connectionUri and says so.
   */
  async confinedUri(name: string): Promise<string | null> {
    const tree = await this.tree();
    const branch = this.required(tree, name);
    const made = await confineCloudBranch(await this.requireUri(branch, name), cloudRoleName(branch.id));
    if (made.url === null) {
      this.options.log?.(`${this.name}: no confined role for "${name}": ${made.reason}.`);
      return null;
    }
    this.options.onSecret?.(made.url);
    return made.url;
  }

  async verifyUrl(name: string, url: string): Promise<void> {
    const tree = await this.tree();
    const branch = this.required(tree, name);
    const parentName = tree.parentName(branch);
    if (!parentName) return;
    const parent = this.required(tree, parentName);
    await verifyBranchUrl({
      branch: name,
      url,
      parent: parentName,
      parentUrl: await this.service.connectionUri(parent),
    });
  }

  async gc(now: Date = this.now()): Promise<GcResult> {
    const result: GcResult = { deleted: [], repaired: [], kept: [] };
    let tree = await this.tree();
    const grace = this.options.stageGraceMs ?? 6 * 3_600_000;
    for (const stage of tree.stages()) {
      if (tree.children(stage).length === 0 && now.getTime() - stage.createdAt.getTime() > grace) {
        await this.service.delete(stage);
        result.repaired.push(stage.name);
      }
    }
    tree = await this.tree();
    const expired = new Set(tree.visible().filter((b) => b.expiresAt && b.expiresAt <= now));
    const allExpired = (b: RemoteBranch): boolean => expired.has(b) && tree.visibleChildren(b).every(allExpired);
    for (const branch of expired) {
      const name = tree.nameOf(branch);
      if (result.deleted.includes(name)) continue;
      if (!allExpired(branch)) {
        result.kept.push({ name, reason: 'it still has children that have not expired' });
        continue;
      }
      const parent = tree.find(tree.parentName(branch) ?? '');
      if (parent && allExpired(parent)) continue; // deleted with its parent
      try {
        result.deleted.push(...(await this.delete(name, { recursive: true })));
      } catch (e) {
        result.kept.push({ name, reason: e instanceof Error ? e.message : String(e) });
      }
    }
    return result;
  }

  async close(): Promise<void> {
    await this.service.close();
  }

  private required(tree: Tree, name: string): RemoteBranch {
    const branch = tree.find(name);
    if (!branch)
      throw new ConsortError('branch-not-found', `Branch "${name}" does not exist.`, {
        hint: 'List branches with `consort branch list`.',
      });
    return branch;
  }

  private async requireUri(branch: RemoteBranch, name: string): Promise<string> {
    const url = await this.service.connectionUri(branch);
    if (!url) {
      throw new ConsortError('service-error', `Branch "${name}" has no read-write endpoint to connect to.`, {
        hint: 'Add a read-write compute to it in the service console, or delete and create it again with Consort.',
      });
    }
    return url;
  }

  private async verifyOrDelete(
    remote: RemoteBranch,
    name: string,
    parent: RemoteBranch,
    parentName: string,
    deleteOnFailure = true,
  ): Promise<void> {
    try {
      await verifyBranchUrl({
        branch: name,
        url: await this.requireUri(remote, name),
        parent: parentName,
        parentUrl: await this.service.connectionUri(parent),
      });
    } catch (e) {
      if (deleteOnFailure) await this.service.delete(remote).catch(() => undefined);
      throw e;
    }
  }

  private clampTtl(name: string, ttlMs: number | undefined): number | undefined {
    if (ttlMs === undefined || ttlMs <= this.service.maxTtlMs) return ttlMs;
    this.options.log?.(
      `${this.name}: a TTL of ${formatDuration(ttlMs)} for "${name}" is longer than the service allows; using ${formatDuration(this.service.maxTtlMs)}.`,
    );
    return this.service.maxTtlMs;
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }
}

function toRecord(remote: RemoteBranch, parent: string | null): BranchRecord {
  return {
    name: remote.isDefault ? ROOT_BRANCH : remote.name,
    parent: remote.isDefault ? null : parent,
    createdAt: remote.createdAt,
    expiresAt: remote.expiresAt,
    gitBranch: remote.gitBranch,
    database: remote.id,
  };
}
