/**
 * A person's permission on a repository, as the collaborator-permission endpoint tells it — shared by
 * the GitHub adapter (src/github/octokit.ts). `permission` folds maintain into write and triage
 * into read; `role_name` keeps them apart. Someone the endpoint does not know (404) has none.
 */
import { z } from 'zod';
import type { Permission } from '../ports/github.js';

const PERMISSIONS: readonly string[] = ['admin', 'maintain', 'write', 'triage', 'read', 'none'];
const Reply = z.object({ permission: z.string(), role_name: z.string().optional() });

/** `get` is the adapter's `GET /repos/{owner}/{repo}/collaborators/{username}/permission`. */
export async function collaboratorPermission(get: () => Promise<{ data: unknown }>): Promise<Permission> {
  let data: unknown;
  try {
    ({ data } = await get());
  } catch (e) {
    if (typeof e === 'object' && e !== null && 'status' in e && e.status === 404) return 'none';
    throw e;
  }
  const reply = Reply.parse(data);
  const role = PERMISSIONS.includes(reply.role_name ?? '') ? reply.role_name! : reply.permission;
  return (PERMISSIONS.includes(role) ? role : 'none') as Permission;
}

/** The endpoint's answer, down to the fields read (for test/github/openapi.test.ts). */
export { Reply as PermissionReply };
