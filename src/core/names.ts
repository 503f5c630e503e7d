/**
 * Every naming rule in one place: database branch names, the PR lane's branch names and the TDD
 * lane's feature slugs.
 *
 * Branch-name rules shared by every provider. They are the strictest the cloud providers enforce
 * (Lakebase/Neon: lowercase letters, digits and '-', at most 63 characters, starting with a letter),
 * so a name valid for `local` stays valid when a team moves to a managed service.
 */
import { ConsortError } from './errors.js';

export const MAX_BRANCH_NAME = 63;
export const ROOT_BRANCH = 'main';
const VALID = /^[a-z][a-z0-9-]{0,62}$/;

/** Turn any string (a git branch, "PR #12") into the closest valid branch name. */
export function sanitizeBranchName(input: string): string {
  let name = input
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[^a-z]+/, '')
    .slice(0, MAX_BRANCH_NAME)
    .replace(/-+$/, '');
  if (name === '') name = 'branch';
  return name;
}

export function branchNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'is empty';
  if (name.length > MAX_BRANCH_NAME) return `is longer than ${MAX_BRANCH_NAME} characters`;
  if (!/^[a-z]/.test(name)) return 'must start with a lowercase letter';
  if (!VALID.test(name)) return 'may contain only lowercase letters, digits and "-"';
  if (name.endsWith('-')) return 'must not end with "-"';
  return undefined;
}

export function assertBranchName(name: string): string {
  const problem = branchNameProblem(name);
  if (problem) {
    throw new ConsortError('invalid-input', `Invalid branch name "${name}": it ${problem}.`, {
      hint: `Use "${sanitizeBranchName(name)}" instead.`,
    });
  }
  return name;
}

/**
 * The PR lane's branch names: the PR branch (`pr-<n>`, or `check-<sha>` for a run
 * that is not a pull request's) and the two temporary children a run makes — `<branch>-rev` (a
 * child of the baseline, where reversibility is proven) and `<branch>-suite` (a child of the PR
 * branch, where the suite runs). The lane, the Action and the App all name branches through it.
 */
export const REVERSIBILITY_SUFFIX = '-rev';
export const SUITE_SUFFIX = '-suite';

export function prBranchName(pr: number | null, headSha: string | null): string {
  return pr !== null ? `pr-${pr}` : `check-${headSha ? headSha.slice(0, 7) : 'worktree'}`;
}

/**
 * Whether a branch is one the PR lane names: `pr-<n>`, `check-<sha>` / `check-worktree`, or a run's
 * temporary child. Such a branch records the git branch it checked (`gitBranch`), but it is the
 * lane's, never a pairing (src/pairing): it holds a run's state, uncommitted migrations included.
 */
export function isCheckLaneBranch(name: string): boolean {
  const own = name.endsWith(REVERSIBILITY_SUFFIX)
    ? name.slice(0, -REVERSIBILITY_SUFFIX.length)
    : name.endsWith(SUITE_SUFFIX)
      ? name.slice(0, -SUITE_SUFFIX.length)
      : name;
  return /^pr-\d+$/.test(own) || /^check-(?:[0-9a-f]{7}|worktree)$/.test(own);
}

export interface RunBranches {
  /** The PR branch: a fresh copy of the baseline, kept for inspection. */
  branch: string;
  /** A child of the baseline: up/down/up of the new migrations. */
  reversibility: string;
  /** The suite's database: a child of the baseline with the new migrations applied (or of the PR branch). */
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

/** The pull request a branch belongs to (`pr-12`, `pr-12-rev`, `pr-12-suite`), or null. */
export function pullNumberOf(name: string): number | null {
  const n = /^pr-(\d+)(?:-|$)/.exec(name)?.[1];
  return n === undefined ? null : Number(n);
}

/**
 * A feature's slug: lowercase letters and digits in "-"-separated words, starting with a letter, at
 * most 40 characters. Its folder is `<NNN>-<slug>`.
 */
export const FEATURE_SLUG = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
export const MAX_FEATURE_SLUG = 40;

export function isFeatureSlug(slug: string): boolean {
  return FEATURE_SLUG.test(slug) && slug.length <= MAX_FEATURE_SLUG;
}

/** A feature slug from a git branch name (`feat/Customer_Phones` → `customer-phones`); '' when none can be made. */
export function featureSlugFromBranch(ref: string): string {
  return ref
    .split('/')
    .pop()!
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^[^a-z]+|-+$/g, '')
    .slice(0, MAX_FEATURE_SLUG);
}
