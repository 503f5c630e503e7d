/**
 * Where a pull request's code runs: the branch's own confined role (src/branches/branch-role.ts)
 * where the provider makes one, or the provider's own credentials, said in the stage's summary.
 */
import type { BranchProvider } from '../../ports/branch-provider.js';
import { docsUrl } from '../../core/docs-url.js';

/**
 * The URL a pull request's code runs with on a branch: the branch's own role where the provider
 * makes one. Where it cannot (an admin without CREATEROLE, a provider without roles), the admin's
 * URL, and the branch goes into `unconfined` so the stage's summary says so.
 */
export async function confined(
  provider: BranchProvider,
  name: string,
  url: string,
  unconfined: Set<string>,
): Promise<string> {
  const role = provider.confinedUri ? await provider.confinedUri(name) : null;
  if (role !== null) return role;
  unconfined.add(name);
  return url;
}

/** Said in a stage's summary when the pull request's code there ran with the provider's own credentials. */
export function unconfinedNote(provider: string): string {
  return `; ran with the ${provider} provider's own credentials (it could not make a role confined to the branch, see ${docsUrl('security.md')})`;
}
