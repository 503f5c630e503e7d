/**
 * A turn ends completely. Commands that run untrusted code (an agent's turn, the suite of a proof)
 * start in their own PID namespace where one is available — bubblewrap, else util-linux `unshare`
 * — so that (1) when the command's shell exits, the kernel ends every process it left behind,
 * `setsid` daemons and double forks included, and (2) the command sees a /proc of its own and
 * cannot read the environment of Consort's process or of the runner above it
 * (`/proc/<ppid>/environ` holds the runner's tokens however clean the child's own environment is).
 *
 * Where neither works (no user namespaces, macOS), every child carries a random marker in its
 * environment and, after the command, every process still carrying it is killed: a weaker sweep,
 * since a process that re-executes itself with `env -i` sheds the marker.
 */
import { execFileSync } from 'node:child_process';
import { childEnv } from '../core/child-env.js';
import { hostProgram } from './host-programs.js';
import { randomUUID } from 'node:crypto';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export type IsolationKind = 'bwrap' | 'unshare' | 'sweep';

export const MARKER_VAR = 'CONSORT_TURN_MARKER';

const PREFIX: Record<Exclude<IsolationKind, 'sweep'>, string[]> = {
  // --dev-bind / /: the same files; --proc /proc: a /proc showing only this namespace. --cap-drop ALL:
  // run as root, bwrap keeps every capability, and a command could unmount the tmpfs that hides a
  // folder or remount a read-only bind writable (CAP_SYS_ADMIN), or open a file by its handle past
  // both (CAP_DAC_READ_SEARCH); as another user it has none anyway.
  bwrap: [
    'bwrap',
    '--dev-bind',
    '/',
    '/',
    '--proc',
    '/proc',
    '--unshare-pid',
    '--die-with-parent',
    '--cap-drop',
    'ALL',
    '--',
  ],
  unshare: ['unshare', '--pid', '--fork', '--kill-child', '--mount-proc'],
};

let detected: IsolationKind | undefined;

/**
 * Directories no isolated command may see, for as long as this process lives: the `local`
 * provider's data directory (server.json holds the embedded server's superuser password). Under
 * bubblewrap each is covered by an empty tmpfs; without it nothing hides them (docs/security.md).
 */
const hiddenDirs = new Set<string>();

let privateDir: string | undefined;

/**
 * A folder of this process's own, made (and hidden) before its first isolated command: files
 * Consort writes there and later runs or reads outside any sandbox (the Codex launcher script) are
 * out of reach of every isolated command under bubblewrap, one started before they were written
 * (the migration child, which lives across turns) included. Removed when the process exits.
 */
export function isolatedPrivateDir(): string {
  if (privateDir === undefined) {
    removeDeadPrivateDirs();
    const dir = mkdtempSync(path.join(os.tmpdir(), `consort-private-${process.pid}-`));
    privateDir = dir;
    hiddenDirs.add(dir);
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return privateDir;
}

/** Private folders of processes that ended without their exit handler (killed by a signal). */
function removeDeadPrivateDirs(): void {
  let names: string[];
  try {
    names = readdirSync(os.tmpdir());
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^consort-private-(\d+)-/.exec(name)?.[1]);
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
      continue; // alive (or another user's): not ours to remove
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ESRCH') continue;
    }
    try {
      rmSync(path.join(os.tmpdir(), name), { recursive: true, force: true });
    } catch {
      // Another user's, in a sticky /tmp.
    }
  }
}

/**
 * Hide `dir` (absolute) from every command this process isolates from now on, until the returned
 * release (a proof's worktree made ahead of its proof is shown to that proof's suite).
 */
export function hideFromIsolated(dir: string): () => void {
  const key = path.resolve(dir);
  hiddenDirs.add(key);
  return () => {
    hiddenDirs.delete(key);
  };
}

/**
 * Proofs' worktrees while they are proven: covered, like `hiddenDirs`, for every isolated command
 * but one given the folder (its own suite, in `writable`; the migration child that applies its
 * migrations from it, in `seesProofTree`). Two proofs run side by side (GREEN's, and RED's tree
 * proven again beside it; competing attempts): the code one proof runs — its suite, or a JS
 * migration of its own — must not reach the other's tree: its JUnit report, which decides that
 * proof, is the suite's to write, and a file left there can decide how its tests run.
 */
const proofTreeDirs = new Set<string>();

/** Hide a proof's tree (absolute) from every other isolated command until the returned release. */
export function hideProofTreeFromIsolated(dir: string): () => void {
  const key = path.resolve(dir);
  proofTreeDirs.add(key);
  return () => {
    proofTreeDirs.delete(key);
  };
}

/**
 * Paths every isolated command sees read-only while they are protected (held): the TDD lane's
 * repository git directory during a run. Untrusted code runs there (agents' turns, the suites of
 * proofs, the migration child applying agents' migrations), and what it could plant in `.git` — a
 * clean filter in `config` — would run in the conductor's next `git add`, outside any sandbox.
 * Bound under bubblewrap only; elsewhere the lane's guard compares them (src/git/guard.ts).
 */
const protectedPaths = new Map<string, number>();

/** Bind `p` (absolute) read-only into every command this process isolates until the returned release. */
export function protectFromIsolated(p: string): () => void {
  const key = path.resolve(p);
  protectedPaths.set(key, (protectedPaths.get(key) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (protectedPaths.get(key) ?? 1) - 1;
    if (left > 0) protectedPaths.set(key, left);
    else protectedPaths.delete(key);
  };
}

const inside = (p: string, dir: string) => p === dir || p.startsWith(`${dir}${path.sep}`);

function works(argv: string[]): boolean {
  try {
    // Not through runProcess: a synchronous probe, once per process, before the first isolated run.
    // unshare --fork makes the shell pid 1; bwrap keeps pid 1 for its own init, so the shell is 2.
    execFileSync(hostProgram(argv[0]!), [...argv.slice(1), '/bin/sh', '-c', 'test $$ -le 2'], {
      stdio: 'ignore',
      timeout: 5000,
      env: childEnv(),
    });
    return true;
  } catch {
    return false;
  }
}

/**
 * The strongest isolation this machine offers, probed once. CONSORT_ISOLATION=bwrap|unshare|sweep
 * pins it (tests; a host where namespaces are known to be unavailable).
 */
export function isolationKind(env: NodeJS.ProcessEnv = process.env): IsolationKind {
  const pinned = env.CONSORT_ISOLATION;
  if (pinned === 'bwrap' || pinned === 'unshare' || pinned === 'sweep') return pinned;
  if (detected !== undefined) return detected;
  if (process.platform !== 'linux') detected = 'sweep';
  else if (works(['bwrap', ...PREFIX.bwrap.slice(1)])) detected = 'bwrap';
  else if (works(PREFIX.unshare)) detected = 'unshare';
  else detected = 'sweep';
  return detected;
}

export interface Isolation {
  kind: IsolationKind;
  /** The program and arguments that run `/bin/sh -c command` inside the isolation. */
  argv: (command: string) => [string, string[]];
  /** The program and arguments that run a program directly (no shell) inside the isolation. */
  wrap: (argv: readonly [string, ...string[]]) => [string, string[]];
  /** Variables the child must carry (the sweep's marker). */
  env: Record<string, string>;
  /** After the command: end whatever it left running (no-op inside a PID namespace, which the kernel ends). */
  sweep: () => number;
}

export interface IsolationOptions {
  /**
   * Folders the command may read but not change (a proof's dependency copy, the pristine install):
   * bound read-only under bubblewrap, which stops root too. Elsewhere their files' modes
   * (src/lanes/tdd/clean-tree.ts) are all that stands, and root ignores those.
   */
  readOnly?: readonly string[];
  /** Folders inside `readOnly` that stay writable (caches a runner writes, e.g. node_modules/.vite). */
  writable?: readonly string[];
  /** `source` shown at `target` (read-only unless `writable`), after the above: bubblewrap only, refused elsewhere. */
  binds?: readonly { source: string; target: string; writable?: boolean }[];
  /** Shown empty, after the above (a folder as an empty tmpfs, a file as /dev/null): bubblewrap only, refused elsewhere. */
  masks?: readonly string[];
  /** Paths inside `masks` shown again, read-only, after them (a dependency install kept in the git directory). */
  reshown?: readonly string[];
  /**
   * The one folder of those being proven this command may see (the migration child applying that
   * proof's migrations from its tree): every other proof's tree stays covered. A folder that is no
   * proof's tree (a sandbox's workspace, the check lane's scratch folder) changes nothing.
   */
  seesProofTree?: string;
}

export function isolation(kind: IsolationKind = isolationKind(), options: IsolationOptions = {}): Isolation {
  const marker = randomUUID();
  if (kind !== 'bwrap' && ((options.binds?.length ?? 0) > 0 || (options.masks?.length ?? 0) > 0))
    throw new Error(`binds need bubblewrap, and isolation here is ${kind}`);
  // Hidden from this command on, so from every command that could be running when it is used.
  if (kind === 'bwrap') isolatedPrivateDir();
  if (kind === 'sweep') {
    return {
      kind,
      env: { [MARKER_VAR]: marker },
      argv: (command) => ['/bin/sh', ['-c', command]],
      wrap: ([program, ...args]) => [program, args],
      sweep: () => sweepMarked(marker),
    };
  }
  // Never a directory holding what the command is given, where it may start, the temporary
  // directory or home (a data directory set to /tmp or ~): that would hide them too.
  const shown = [
    ...(options.readOnly ?? []),
    ...(options.writable ?? []),
    ...(options.binds ?? []).flatMap((b) => [b.source, b.target]),
    ...(options.seesProofTree === undefined ? [] : [options.seesProofTree]),
    process.cwd(),
    os.tmpdir(),
    os.homedir(),
  ].map((p) => path.resolve(p));
  const hidden = [...hiddenDirs, ...proofTreeDirs].filter((d) => existsSync(d) && !shown.some((p) => inside(p, d)));
  const guarded = [...protectedPaths.keys()].filter((p) => existsSync(p));
  const binds =
    kind === 'bwrap'
      ? [
          ...hidden.flatMap((d) => ['--tmpfs', d]),
          ...guarded.flatMap((p) => ['--ro-bind', p, p]),
          ...(options.readOnly ?? []).flatMap((p) => ['--ro-bind', p, p]),
          ...(options.writable ?? []).flatMap((p) => ['--bind', p, p]),
          ...(options.binds ?? []).flatMap((b) => [b.writable ? '--bind' : '--ro-bind', b.source, b.target]),
          ...(options.masks ?? [])
            .filter((p) => existsSync(p))
            .flatMap((p) => (lstatSync(p).isDirectory() ? ['--tmpfs', p] : ['--ro-bind', '/dev/null', p])),
          ...(options.reshown ?? [])
            .filter((p) => existsSync(p) && (options.masks ?? []).some((m) => inside(p, m)))
            .flatMap((p) => ['--ro-bind', p, p]),
        ]
      : [];
  // bwrap's own options end with `--`: the binds go before it.
  const [name, ...options_] = binds.length > 0 ? [...PREFIX.bwrap.slice(0, -1), ...binds, '--'] : PREFIX[kind];
  // bwrap and unshare by the path PATH named before any untrusted code ran (host-programs.ts).
  const prefix = [hostProgram(name!), ...options_];
  return {
    kind,
    env: { [MARKER_VAR]: marker },
    argv: (command) => [prefix[0]!, [...prefix.slice(1), '/bin/sh', '-c', command]],
    wrap: (argv) => [prefix[0]!, [...prefix.slice(1), ...argv]],
    // The namespace is gone with its first process; the sweep still catches anything that escaped it.
    sweep: () => sweepMarked(marker),
  };
}

/** SIGKILL every process whose environment carries the marker; returns how many. */
export function sweepMarked(marker: string): number {
  if (process.platform !== 'linux') return 0;
  const needle = `${MARKER_VAR}=${marker}`;
  let killed = 0;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return 0;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${entry}/environ`, 'latin1');
    } catch {
      continue;
    }
    if (!environ.split('\0').includes(needle)) continue;
    try {
      process.kill(Number(entry), 'SIGKILL');
      killed += 1;
    } catch {
      // Already gone.
    }
  }
  return killed;
}
