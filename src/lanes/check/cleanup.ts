/**
 * Removing a pull request's branches, shared by the Action's `mode: cleanup` and the App. The
 * reversibility branch is a child of the baseline, not of `pr-<n>`, so deleting `pr-<n>`
 * recursively would miss it: every name comes from src/core/names.ts.
 */
import type { BranchProvider } from '../../ports/branch-provider.js';
import { isPullBranch, temporaryBranches } from '../../core/names.js';

/** Delete a pull request's branches (helpers first); returns the names deleted. */
export async function cleanupPull(provider: BranchProvider, pr: number): Promise<string[]> {
  const names = (await provider.list()).map((b) => b.name).filter((n) => isPullBranch(n, pr));
  const deleted: string[] = [];
  for (const name of names.sort((a, b) => b.length - a.length)) {
    if (!(await provider.get(name))) continue; // gone with a parent deleted recursively
    deleted.push(...(await provider.delete(name, { recursive: true, terminateConnections: true })));
  }
  return [...new Set(deleted)];
}

/**
 * Temporary branches a killed run left behind (the lane creates them fresh and would trip over
 * them). Called by a run that holds the branch's run lock, so no live run owns them.
 */
export async function removeLeftovers(
  provider: BranchProvider,
  branch: string,
  log: (line: string) => void = () => undefined,
): Promise<string[]> {
  const removed: string[] = [];
  for (const name of temporaryBranches(branch)) {
    if (!(await provider.get(name))) continue;
    removed.push(...(await provider.delete(name, { recursive: true, terminateConnections: true })));
  }
  if (removed.length > 0) log(`Removed ${removed.join(', ')}: left by an earlier run that did not finish.`);
  return removed;
}
