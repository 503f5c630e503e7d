/**
 * How the conductor calls git when an agent may have written under `.git/`: no hook runs (a
 * planted `pre-commit` or `pre-push` would run with whatever the conductor's git process holds,
 * the push token included), no fsmonitor daemon answers `git status` for it, no `refs/replace/`
 * ref or graft swaps one commit or file for another (GIT_NO_REPLACE_OBJECTS, GIT_GRAFT_FILE), no commit-graph file
 * answers for a commit's parents or tree (core.commitGraph=false: git trusts that file's tree ids),
 * no automatic gc or maintenance rewrites the object store behind a guarded turn, and the process
 * gets only the allow-listed environment. `.git/config` itself is compared before and after every
 * turn (src/git/guard.ts), so includes, filters and aliases an agent adds there never reach these calls.
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
 * git's global configuration as a TDD run found it (src/git/pinned-config.ts), or null: while set,
 * every git call reads these entries instead of the files in the home folder, which untrusted code
 * of the run (a suite, a migration) can write.
 */
const pins: (readonly (readonly [string, string])[])[] = [];

/** Pin the global configuration for every git call of this process until the returned release. */
export function pinGlobalEntries(entries: readonly (readonly [string, string])[]): () => void {
  const pin = [...entries];
  pins.push(pin);
  return () => {
    const at = pins.indexOf(pin);
    if (at >= 0) pins.splice(at, 1);
  };
}

/**
 * The pinned entries as command-scope configuration (GIT_CONFIG_COUNT/KEY_n/VALUE_n), then those a
 * caller passes the same way (a push's auth header), and no global file at all. git applies the
 * entries in index order, so the caller's come last: they override the pinned global settings (a
 * single-valued key; an empty `http.extraHeader`, which clears the list) as they overrode
 * `~/.gitconfig` before the pin.
 */
function pinnedEnv(extra: Record<string, string>): Record<string, string> {
  const pin = pins.at(-1);
  if (pin === undefined) return {};
  const own = Number(extra.GIT_CONFIG_COUNT ?? 0);
  const env: Record<string, string> = { GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_COUNT: String(pin.length + own) };
  pin.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  for (let i = 0; i < own; i++) {
    env[`GIT_CONFIG_KEY_${pin.length + i}`] = extra[`GIT_CONFIG_KEY_${i}`] ?? '';
    env[`GIT_CONFIG_VALUE_${pin.length + i}`] = extra[`GIT_CONFIG_VALUE_${i}`] ?? '';
  }
  return env;
}

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
      GIT_NO_REPLACE_OBJECTS: '1',
      GIT_GRAFT_FILE: '/dev/null',
      ...extra,
      ...(realGlobal ? {} : pinnedEnv(extra)),
    },
    { secrets },
  );
}
