/**
 * The PR lane's branch names, in one place: the PR branch (`pr-<n>`, or `check-<sha>` for a run
 * that is not a pull request's) and the two temporary children a run makes — `<branch>-rev` (a
 * child of the baseline, where reversibility is proven) and `<branch>-suite` (a child of the PR
 * branch, where the suite runs). The lane, the Action and the App all name branches through it.
 */
export const REVERSIBILITY_SUFFIX = '-rev';
export const SUITE_SUFFIX = '-suite';

export function prBranchName(pr: number | null, headSha: string | null): string {
  return pr !== null ? `pr-${pr}` : `check-${headSha ? headSha.slice(0, 7) : 'worktree'}`;
}

export interface RunBranches {
  /** The PR branch: a fresh copy of the baseline, kept for inspection. */
  branch: string;
  /** A child of the baseline: up/down/up of the new migrations. */
  reversibility: string;
  /** A child of the PR branch: the suite's database. */
  suite: string;
}

export function runBranches(branch: string): RunBranches {
  return { branch, reversibility: `${branch}${REVERSIBILITY_SUFFIX}`, suite: `${branch}${SUITE_SUFFIX}` };
}

/** The temporary branches of a run on `branch`, in the order they are removed. */
export function temporaryBranches(branch: string): string[] {
  const b = runBranches(branch);
  return [b.reversibility, b.suite];
}

/** Branches that belong to a pull request: `pr-<n>` and its run's helpers (`pr-<n>-rev`, `pr-<n>-suite`). */
export function isPullBranch(name: string, pr: number): boolean {
  const branch = prBranchName(pr, null);
  return name === branch || temporaryBranches(branch).includes(name);
}
