/**
 * How the conductor calls git when an agent may have written under `.git/`: no hook runs (a
 * planted `pre-commit` or `pre-push` would run with whatever the conductor's git process holds,
 * the push token included), no fsmonitor daemon answers `git status` for it, no `refs/replace/`
 * ref or graft swaps one commit or file for another (GIT_NO_REPLACE_OBJECTS, GIT_GRAFT_FILE), no commit-graph file
 * answers for a commit's parents or tree (core.commitGraph=false: git trusts that file's tree ids),
 * no automatic gc or maintenance rewrites the object store behind a guarded turn, and the process
 * gets only the allow-listed environment. `.git/config` itself is compared before and after every
 * turn (src/git/guard.ts), so includes, filters and aliases an agent adds there never reach these calls.
 * Nor do git's system files: neither `/etc/gitconfig` (GIT_CONFIG_NOSYSTEM) nor `/etc/gitattributes`
 * (GIT_ATTR_NOSYSTEM), which no guard compares and an agent run as root writes under bubblewrap too
 * (`/` is shared, and dropping every capability does not stop a file's owner): a rule there
 * (`ident`, `eol`, `working-tree-encoding` need no configuration) made a proof's checkout of the
 * driver's file differ from its blob (test/security/system-attributes.test.ts).
 */
import { childEnv } from '../core/child-env.js';

/** Everything but the hooks: no fsmonitor daemon, no untracked cache. */
export const NO_FSMONITOR_ARGS: readonly string[] = [
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.untrackedCache=false',
  '-c',
  'core.commitGraph=false',
  '-c',
  'gc.auto=0',
  '-c',
  'maintenance.auto=false',
];

export const SAFE_GIT_ARGS: readonly string[] = ['-c', 'core.hooksPath=/dev/null', ...NO_FSMONITOR_ARGS];

/**
 * The global configuration files pinned for a TDD run (src/git/pinned-config.ts), innermost last:
 * while one is held, every git call reads it (GIT_CONFIG_GLOBAL) instead of the home folder's
 * files, which untrusted code of the run (a suite, a migration) can write. It is still global
 * scope: the repository's config and a caller's command-scope entries (the push's auth header)
 * override it as they overrode `~/.gitconfig`, and `safe.directory` counts there on every git.
 */
const pins: string[] = [];

/** Pin `file` as the global configuration of every git call of this process until the returned release. */
export function pinGlobalFile(file: string): () => void {
  pins.push(file);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const at = pins.lastIndexOf(file);
    if (at >= 0) pins.splice(at, 1);
  };
}

const pinnedEnv = (): Record<string, string> => {
  const file = pins.at(-1);
  return file === undefined ? {} : { GIT_CONFIG_GLOBAL: file };
};

/**
 * LC_ALL=C: git's messages are matched (nothing to commit) whatever the user's language.
 * `realGlobal`: read the home folder's global files even while they are pinned (the guard, which
 * compares them, and the pin itself).
 */
export function gitEnv(
  extra: Record<string, string> = {},
  secrets: readonly string[] = [],
  realGlobal = false,
): NodeJS.ProcessEnv {
  return childEnv(
    {
      LC_ALL: 'C',
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_ATTR_NOSYSTEM: '1',
      GIT_NO_REPLACE_OBJECTS: '1',
      GIT_GRAFT_FILE: '/dev/null',
      ...extra,
      ...(realGlobal ? {} : pinnedEnv()),
    },
    { secrets },
  );
}
