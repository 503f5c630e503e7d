/**
 * The webhook payloads the App acts on, validated once at the edge down to the fields it uses.
 * Everything else GitHub sends is ignored (zod strips unknown keys), so a payload shape GitHub
 * extends later keeps working, and one missing a field the App needs is refused loudly.
 */
import { z } from 'zod';

const Sha = z.string().regex(/^[0-9a-f]{40}$/, { error: 'expected a 40-character commit SHA' });
const Installation = z.object({ id: z.number().int().positive() });
const Repository = z.object({
  id: z.number().int().positive(),
  name: z.string(),
  full_name: z.string(),
  owner: z.object({ login: z.string() }),
});
const User = z.object({ login: z.string(), type: z.string() });

export const PullRequestPayload = z.object({
  action: z.string(),
  installation: Installation,
  /** The default branch: the one whose database the parent branch is, and the only one a merge promotes to it. */
  repository: Repository.extend({ default_branch: z.string() }),
  pull_request: z.object({
    number: z.number().int().positive(),
    merged: z.boolean().nullish(),
    merge_commit_sha: Sha.nullish(),
    /** When the pull request last changed: GitHub delivers out of order, and this says which event is newer. */
    updated_at: z.iso.datetime({ offset: true }),
    head: z.object({ sha: Sha, ref: z.string(), repo: z.object({ full_name: z.string() }).nullable() }),
    base: z.object({ sha: Sha, ref: z.string(), repo: z.object({ full_name: z.string() }) }),
  }),
  /** `edited` only: what changed. A changed base is the one edit that changes what the check compares. */
  changes: z.object({ base: z.object({ ref: z.object({ from: z.string() }) }).optional() }).optional(),
});
export type PullRequestPayload = z.infer<typeof PullRequestPayload>;

export const MergeGroupPayload = z.object({
  action: z.string(),
  installation: Installation,
  repository: Repository,
  merge_group: z.object({ head_sha: Sha, head_ref: z.string(), base_sha: Sha, base_ref: z.string() }),
});
export type MergeGroupPayload = z.infer<typeof MergeGroupPayload>;

export const CheckRunPayload = z.object({
  action: z.string(),
  installation: Installation,
  repository: Repository,
  check_run: z.object({ id: z.number().int().positive(), head_sha: Sha, external_id: z.string().nullish() }),
});
export type CheckRunPayload = z.infer<typeof CheckRunPayload>;

/** "Re-run all checks": GitHub sends it to the App that owns the suite, for the suite's head commit. */
export const CheckSuitePayload = z.object({
  action: z.string(),
  installation: Installation,
  repository: Repository,
  check_suite: z.object({ id: z.number().int().positive(), head_sha: Sha }),
});
export type CheckSuitePayload = z.infer<typeof CheckSuitePayload>;

export const IssueCommentPayload = z.object({
  action: z.string(),
  installation: Installation,
  repository: Repository,
  issue: z.object({ number: z.number().int().positive(), pull_request: z.object({ url: z.string() }).nullish() }),
  comment: z.object({
    id: z.number().int().positive(),
    body: z.string().nullable(),
    /** GitHub's description: `User | null` (a deleted account), its `type` optional. */
    user: z.object({ login: z.string(), type: z.string().optional() }).nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  }),
  changes: z.object({ body: z.object({ from: z.string() }).optional() }).optional(),
  /** Who did this: the comment's author when it was created, whoever edited it for an edit. */
  sender: User,
});
export type IssueCommentPayload = z.infer<typeof IssueCommentPayload>;

/**
 * The App uninstalled (`installation.deleted`) or some repositories taken from it
 * (`installation_repositories.removed`): GitHub sends both to every App, subscribed or not.
 */
export const InstallationPayload = z.object({
  action: z.string(),
  installation: Installation,
  repositories_removed: z.array(z.object({ id: z.number().int().positive() })).optional(),
});
export type InstallationPayload = z.infer<typeof InstallationPayload>;

/** A fork's pull request: its head lives in another repository (or one since deleted). */
export function isFork(pr: PullRequestPayload['pull_request']): boolean {
  return pr.head.repo === null || pr.head.repo.full_name !== pr.base.repo.full_name;
}

export const repoRef = (p: { installation: { id: number }; repository: z.infer<typeof Repository> }) => ({
  repositoryId: p.repository.id,
  installationId: p.installation.id,
  owner: p.repository.owner.login,
  repo: p.repository.name,
});
