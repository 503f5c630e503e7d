/**
 * A service's branches seen the way Consort names them: the default branch is `main`, staging
 * branches (where `prepare` runs before a branch is published) are hidden, and a published
 * branch's parent is the branch its staging branch was forked from.
 */
import { ROOT_BRANCH } from '../../core/names.js';
import type { RemoteBranch } from './service.js';

export const STAGE_PREFIX = 'consort-stage-';

export class Tree {
  private readonly byId = new Map<string, RemoteBranch>();

  constructor(private readonly branches: readonly RemoteBranch[]) {
    for (const b of branches) this.byId.set(b.id, b);
  }

  isStage(branch: RemoteBranch): boolean {
    return !branch.isDefault && branch.name.startsWith(STAGE_PREFIX);
  }

  visible(): RemoteBranch[] {
    return this.branches.filter((b) => !this.isStage(b) && (b.isDefault || b.name !== ROOT_BRANCH));
  }

  stages(): RemoteBranch[] {
    return this.branches.filter((b) => this.isStage(b));
  }

  nameOf(branch: RemoteBranch): string {
    return branch.isDefault ? ROOT_BRANCH : branch.name;
  }

  /** The visible branch Consort calls `name` (a service branch literally named `main` is shadowed by the default). */
  find(name: string): RemoteBranch | undefined {
    return this.visible().find((b) => this.nameOf(b) === name);
  }

  private parentOf(branch: RemoteBranch): RemoteBranch | undefined {
    return branch.parentId ? this.byId.get(branch.parentId) : undefined;
  }

  /** The staging branch `branch` was published from, if any. */
  stageParent(branch: RemoteBranch): RemoteBranch | undefined {
    const parent = this.parentOf(branch);
    return parent && this.isStage(parent) ? parent : undefined;
  }

  /** Consort's parent: the nearest ancestor that is not a staging branch. */
  parentName(branch: RemoteBranch): string | null {
    if (branch.isDefault) return null;
    let parent = this.parentOf(branch);
    while (parent && this.isStage(parent)) parent = this.parentOf(parent);
    return parent ? this.nameOf(parent) : null;
  }

  /** Direct children as the service sees them (staging branches included). */
  children(branch: RemoteBranch): RemoteBranch[] {
    return this.branches.filter((b) => b.parentId === branch.id);
  }

  /** Children as Consort sees them: through staging branches. */
  visibleChildren(branch: RemoteBranch): RemoteBranch[] {
    return this.children(branch).flatMap((c) => (this.isStage(c) ? this.visibleChildren(c) : [c]));
  }

  /** `branch` and everything forked from it, parents before children. */
  subtree(branch: RemoteBranch): RemoteBranch[] {
    const out: RemoteBranch[] = [branch];
    for (let i = 0; i < out.length; i++) out.push(...this.visibleChildren(out[i]!));
    return out;
  }
}
