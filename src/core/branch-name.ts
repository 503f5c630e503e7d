/**
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
