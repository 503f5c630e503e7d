/**
 * Which database branch a git branch pairs with (pure). The name comes from the shared branch-name
 * rules; when that name is already used by a branch paired with another git branch (two git names
 * that sanitize alike: `feat/A` and `feat-a`), or by something that is not a pairing at all, a short
 * hash of the git name keeps them apart instead of hijacking it.
 */
import { createHash } from 'node:crypto';
import { isCheckLaneBranch, MAX_BRANCH_NAME, sanitizeBranchName } from '../core/names.js';
import { RESERVED_BRANCH_NAMES } from '../branches/database-name.js';

export interface KnownBranch {
  name: string;
  gitBranch: string | null;
}

export type PairTarget =
  { kind: 'root'; name: string } | { kind: 'existing'; name: string } | { kind: 'new'; name: string };

export interface PairingRules {
  /** The branch root git branches pair with (config `database.parent`). */
  root: string;
  /** Git branches paired with `root` itself (config `pairing.rootGitBranches`). */
  rootGitBranches: readonly string[];
}

function hashed(gitBranch: string, base: string): string {
  const suffix = createHash('sha256').update(gitBranch).digest('hex').slice(0, 6);
  return `${base.slice(0, MAX_BRANCH_NAME - suffix.length - 1).replace(/-+$/, '')}-${suffix}`;
}

/** The branch paired with `gitBranch`: a PR lane's branch that checked it (`pr-12`) is not one. */
function pairedWith(gitBranch: string, branches: readonly KnownBranch[]): KnownBranch | undefined {
  return branches.find((b) => b.gitBranch === gitBranch && !isCheckLaneBranch(b.name));
}

export function pairTarget(gitBranch: string, branches: readonly KnownBranch[], rules: PairingRules): PairTarget {
  if (rules.rootGitBranches.includes(gitBranch)) return { kind: 'root', name: rules.root };
  const paired = pairedWith(gitBranch, branches);
  if (paired) return { kind: 'existing', name: paired.name };
  const base = sanitizeBranchName(gitBranch);
  const taken = new Set(branches.map((b) => b.name));
  const clash = taken.has(base) || base === rules.root || base === 'main' || RESERVED_BRANCH_NAMES.has(base);
  return { kind: 'new', name: clash ? hashed(gitBranch, base) : base };
}

/** The database branch a new pairing forks from: the one `from` is paired with, else the root. */
export function pairParent(from: string | undefined, branches: readonly KnownBranch[], rules: PairingRules): string {
  if (from === undefined || rules.rootGitBranches.includes(from)) return rules.root;
  return pairedWith(from, branches)?.name ?? rules.root;
}
