/**
 * The programs Consort itself starts by name outside any sandbox (git, bubblewrap, cp, chmod, tar,
 * ps, npm, …), by absolute path. Untrusted code of a run (an agent's turn, a proof's suite, a pull
 * request's migrations) can write every folder the user can, bubblewrap's `--dev-bind / /` included,
 * and PATH commonly holds such a folder ahead of /usr/bin (`~/.local/bin` on Ubuntu and GitHub's
 * runners, `~/bin`, `~/.cargo/bin`, a toolchain's shims). A `cp` or `bwrap` planted there would be
 * the conductor's next one, run outside the sandbox as the conductor's user.
 *
 * So each name is looked up once per PATH and kept: the programs below for the PATH this process
 * started with, when this module loads (before any command of a run); any other name, or another
 * PATH (set by Consort's own code, as tests do), the first time it is started. Relative PATH
 * entries are skipped: they would name a file of whichever repository the command runs in. A name
 * PATH does not hold stays unheld: it maps to a path no folder holds (the spawn fails with ENOENT,
 * as it did), never to the bare name, which the spawn would look up in PATH again at each start
 * and find what untrusted code planted since (or a relative entry's file). Windows: names as PATH
 * finds them.
 */
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

/** What Consort starts by name outside a sandbox; found when this module loads. */
export const HOST_PROGRAMS = [
  'git',
  'bwrap',
  'unshare',
  'cp',
  'chmod',
  'tar',
  'ps',
  'id',
  'npm',
  'sudo',
  'groupadd',
  'useradd',
  'xdg-open',
  'open',
  // The TDD lane asks it which Python modules a turn's new top-level module shadows (harness.ts),
  // or the python a suite command names (`python -m pytest`, `pytest`'s #! line: suite-python.ts).
  'python3',
  'python',
  'pytest',
] as const;

/** Found paths, by PATH then by name (a name PATH lacked maps to `missing(name)`). */
const found = new Map<string, Map<string, string>>();

/** Where a program PATH did not hold is "found": a folder nobody can make (not even root), so nothing runs. */
const missing = (name: string): string => path.join('/proc', 'consort-not-on-PATH', name);

function lookup(name: string, PATH: string): string {
  for (const folder of PATH.split(path.delimiter)) {
    if (!path.isAbsolute(folder)) continue;
    const candidate = path.join(folder, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (!statSync(candidate).isFile()) continue;
    } catch {
      continue;
    }
    return candidate;
  }
  // No PATH at all: the spawn searches the system's default folders, as it did.
  return PATH === '' ? name : missing(name);
}

/**
 * `name`'s absolute path as `PATH` (default: this process's) named it the first time it was asked
 * for with that PATH; `name` itself when it holds a slash, on Windows, or when PATH is empty; a
 * path that does not exist when PATH had no such program then.
 */
export function hostProgram(name: string, PATH: string = process.env.PATH ?? ''): string {
  if (process.platform === 'win32' || name.includes('/')) return name;
  let byName = found.get(PATH);
  if (!byName) {
    byName = new Map();
    found.set(PATH, byName);
  }
  let program = byName.get(name);
  if (program === undefined) {
    program = lookup(name, PATH);
    byName.set(name, program);
  }
  return program;
}

// The PATH Consort started with, before any command of a run: every program above is found now.
for (const name of HOST_PROGRAMS) hostProgram(name);

/** `name`'s absolute path as hostProgram finds it, or null when PATH did not hold it (or on Windows). */
export function foundProgram(name: string, PATH: string = process.env.PATH ?? ''): string | null {
  const program = hostProgram(name, PATH);
  return path.isAbsolute(program) && program !== missing(name) ? program : null;
}
