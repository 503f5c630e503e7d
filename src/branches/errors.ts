/**
 * Errors every provider raises the same way, so `branch create main` or `branch reset main` says
 * the same thing, with a next step that works, on local, postgres, lakebase and neon.
 */
import { ConsortError } from '../core/errors.js';
import { ROOT_BRANCH } from '../core/names.js';

/** `name` exists already; `parent` is its parent (null: it is the root, which cannot be reset). */
export function branchExists(name: string, parent: string | null): ConsortError {
  if (parent === null || name === ROOT_BRANCH)
    return new ConsortError(
      'branch-exists',
      `Branch "${name}" already exists: it is the root every branch is forked from.`,
      {
        hint: `Use it as is, or create the branch under another name (\`consort branch create <name>\`).`,
      },
    );
  return new ConsortError('branch-exists', `Branch "${name}" already exists (from "${parent}").`, {
    hint: `Use it as is, reset it with \`consort branch reset ${name}\`, or delete it first.`,
  });
}

/** `branch reset main`: the root has no parent. `hint`: how this provider starts it afresh. */
export function rootHasNoParent(hint: string): ConsortError {
  return new ConsortError('protected-branch', `The root branch "${ROOT_BRANCH}" has no parent to reset to.`, { hint });
}
