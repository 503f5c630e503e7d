/** A branch provider's branches as the Branches view shows them (both hosts list them this way). */
import type { BranchProvider } from '../ports/branch-provider.js';
import type { BranchView } from './port.js';

export async function branchViews(
  provider: Pick<BranchProvider, 'list' | 'capabilities' | 'sizes'>,
): Promise<BranchView[]> {
  const noSizes: Record<string, number> = {};
  const [records, caps, sizes] = await Promise.all([
    provider.list(),
    provider.capabilities().catch(() => null),
    provider.sizes?.().catch(() => noSizes) ?? noSizes,
  ]);
  return records.map((b) => ({
    name: b.name,
    parent: b.parent,
    gitBranch: b.gitBranch,
    pr: Number(/(?:^|-)pr-(\d+)(?:-|$)/.exec(b.name)?.[1] ?? NaN) || null,
    createdAt: b.createdAt.toISOString(),
    expiresAt: b.expiresAt?.toISOString() ?? null,
    sizeBytes: sizes[b.name] ?? null,
    mode: caps?.mode ?? null,
  }));
}
