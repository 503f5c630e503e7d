/**
 * Base and head of a check in a workflow run. The head is always the checked-out working tree
 * (GITHUB_WORKSPACE); the base depends on the event:
 *
 *  - pull_request: the commit GitHub merged the PR onto when the checkout is its merge ref
 *    (refs/pull/N/merge, the default), else the merge-base of the PR's base and head;
 *  - merge_group: the group's base_sha;
 *  - push: `before`, or HEAD's parent for a new branch;
 *  - anything else: the merge-base with the default branch, or HEAD's parent on that branch.
 *
 * A base commit missing from a shallow checkout is fetched (one commit deep) and said so.
 */
import type { ConsortConfig } from '../config/schema.js';
import { ConsortError } from '../core/errors.js';
import type { CheckSide } from '../lanes/check/plan.js';
import type { GitRepo } from '../ports/git.js';
import { commitSide, EMPTY_SIDE, withLeftBehind, workingTreeSide } from '../lanes/check/sides.js';
import type { ActionContext } from './context.js';

export interface ActionSides {
  base: CheckSide;
  head: CheckSide;
  /** The pull request, which names the database branch pr-<n>. */
  pr: number | null;
}

type Log = (message: string) => void;

export async function actionSides(
  ctx: Pick<ActionContext, 'workspace' | 'event'>,
  config: ConsortConfig,
  log: Log,
  git: GitRepo,
  /** The `config` input: the base's copy of this file is where its settings are read. */
  configPath?: string,
): Promise<ActionSides> {
  const sides = await eventSides(ctx, config, log, git, configPath);
  return { ...sides, head: await withLeftBehind(git, sides.base, sides.head, config.migrations.dir) };
}

async function eventSides(
  ctx: Pick<ActionContext, 'workspace' | 'event'>,
  config: ConsortConfig,
  log: Log,
  git: GitRepo,
  configPath?: string,
): Promise<ActionSides> {
  const root = ctx.workspace;
  const head = await git.headCommit(root);
  if (head === null) {
    throw new ConsortError('invalid-input', `${root} is not a git checkout.`, {
      hint: 'Add `- uses: actions/checkout@v4` with `fetch-depth: 0` before Consort.',
    });
  }
  const ev = ctx.event;
  const at = async (ref: string, sha: string | null): Promise<CheckSide> => {
    if (sha === null) {
      log('No base commit to compare with: every migration counts as new.');
      return EMPTY_SIDE;
    }
    await ensureCommit(git, root, sha, log);
    return commitSide(git, root, ref, sha, config, configPath);
  };
  switch (ev.kind) {
    case 'pull_request': {
      const parents = await git.commitParents(root, head);
      let base: string;
      if (head !== ev.head.sha && parents.length === 2 && parents[1] === ev.head.sha) {
        base = parents[0]!;
        if (base !== ev.base.sha)
          log(
            `The checkout merges the PR into ${ev.base.ref} at ${base.slice(0, 7)}: comparing with that commit, so only this PR's migrations count as new.`,
          );
      } else {
        await ensureCommit(git, root, ev.base.sha, log);
        base = (await git.mergeBase(root, ev.base.sha, head)) ?? ev.base.sha;
      }
      return {
        base: await at(ev.base.ref, base),
        head: await workingTreeSide(root, ev.head.ref, ev.head.sha, config, git),
        pr: ev.number,
      };
    }
    case 'merge_group':
      return {
        base: await at(ev.base.ref, ev.base.sha),
        head: await workingTreeSide(root, ev.head.ref, ev.head.sha, config, git),
        pr: null,
      };
    case 'push': {
      const before = ev.before !== null && (await tryEnsureCommit(git, root, ev.before, log)) ? ev.before : null;
      const base = before ?? (await git.commitParents(root, head))[0] ?? null;
      return {
        base: await at(before ? 'before push' : 'HEAD^', base),
        head: await workingTreeSide(root, ev.ref, head, config, git),
        pr: null,
      };
    }
    case 'other':
    case 'workflow_dispatch':
    case 'issue_comment': {
      const d = await git.defaultBase(root).catch(() => undefined);
      const base = d && d.sha !== head ? d : { ref: 'HEAD^', sha: (await git.commitParents(root, head))[0] ?? null };
      return {
        base: await at(base.ref, base.sha),
        head: await workingTreeSide(root, 'HEAD', head, config, git),
        pr: null,
      };
    }
  }
}

async function tryEnsureCommit(git: GitRepo, root: string, sha: string, log: Log): Promise<boolean> {
  return ensureCommit(git, root, sha, log).then(
    () => true,
    (e: unknown) => {
      log(`${(e as Error).message} Falling back to HEAD's parent.`);
      return false;
    },
  );
}

/** actions/checkout fetches one commit unless told `fetch-depth: 0`; fetch the base if it is missing. */
export async function ensureCommit(
  git: Pick<GitRepo, 'hasCommit' | 'fetchCommit'>,
  root: string,
  sha: string,
  log: Log,
): Promise<void> {
  if (await git.hasCommit(root, sha)) return;
  log(
    `Base commit ${sha} is not in the checkout (shallow clone?): running git fetch --no-tags --depth=1 origin ${sha}. Use actions/checkout with fetch-depth: 0 to skip this.`,
  );
  try {
    await git.fetchCommit(root, sha);
  } catch (cause) {
    throw new ConsortError(
      'invalid-input',
      `Base commit ${sha} is not in the checkout and could not be fetched: ${(cause as Error).message}`,
      {
        hint: 'Use actions/checkout with fetch-depth: 0.',
        cause,
      },
    );
  }
}
