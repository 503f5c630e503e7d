/**
 * Put the embedded server on a loop-mounted reflink XFS (the plan is loop-xfs-plan.ts): probe the
 * machine, run the plan's commands, and check that the result really clones. Every command gets an
 * allow-listed environment (core/child-env.ts).
 */
import { execFile } from 'node:child_process';
import { access, statfs } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { childEnv } from '../../core/child-env.js';
import { ConsortError } from '../../core/errors.js';
import {
  planLoopXfs,
  type Command,
  type LoopXfsFacts,
  type LoopXfsPaths,
  type LoopXfsPlan,
  type LoopXfsRequest,
} from './loop-xfs-plan.js';
import { supportsReflink } from './reflink.js';

const exec = promisify(execFile);
type Log = (message: string) => void;

/**
 * Where every program of the mount and its teardown is found (sbin included: mkfs.xfs, findmnt
 * live there), and nowhere else: not the user's PATH. The post step (src/action/post.ts) is a
 * process started after the main step ran a pull request's suite, agents' turns and migrations,
 * which can write every folder the user can (`~/.local/bin`, ahead of /usr/bin on GitHub's
 * runners): a `sudo` or `rm` planted there would be what this process's PATH names, even when it
 * started (src/process/host-programs.ts), and would run as this user, with passwordless sudo.
 */
const SYSTEM_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'].join(
  path.delimiter,
);

/** Programs started with this environment are looked up in its PATH (libuv searches the child's). */
function commandEnv(): NodeJS.ProcessEnv {
  return childEnv({ LC_ALL: 'C', PATH: SYSTEM_PATH });
}

async function succeeds(file: string, args: string[]): Promise<boolean> {
  return exec(file, args, { env: commandEnv(), timeout: 15_000 }).then(
    () => true,
    () => false,
  );
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

async function which(name: string): Promise<string | null> {
  for (const dir of (commandEnv().PATH ?? '').split(path.delimiter)) {
    const file = path.join(dir, name);
    if (dir && (await exists(file))) return file;
  }
  return null;
}

async function nearestExisting(dir: string): Promise<string> {
  let d = path.resolve(dir);
  while (!(await exists(d)) && d !== path.dirname(d)) d = path.dirname(d);
  return d;
}

/** What is mounted at `dir`: nothing, a reflink XFS, or something else. */
export async function mountedAt(dir: string): Promise<LoopXfsFacts['mounted']> {
  if (!(await exists(dir))) return 'none';
  const { stdout } = await exec('findmnt', ['-n', '-o', 'FSTYPE,OPTIONS', '--mountpoint', dir], {
    env: commandEnv(),
  }).catch(() => ({ stdout: '' }));
  const [fstype] = stdout.trim().split(/\s+/);
  if (!fstype) return 'none';
  if (fstype !== 'xfs') return 'other';
  return (await supportsReflink(dir).catch(() => ({ reflink: false }))).reflink ? 'reflink-xfs' : 'other';
}

export async function probeLoopXfs(paths: LoopXfsPaths): Promise<LoopXfsFacts> {
  const uid = process.getuid?.() ?? -1;
  const linux = process.platform === 'linux';
  const free = await statfs(await nearestExisting(path.dirname(paths.image)));
  return {
    platform: process.platform,
    uid,
    gid: process.getgid?.() ?? -1,
    sudo: linux && uid !== 0 && (await which('sudo')) !== null && (await succeeds('sudo', ['-n', 'true'])),
    mkfsXfs: linux ? await which('mkfs.xfs') : null,
    aptGet: linux && (await which('apt-get')) !== null,
    loopDevices: linux && (await exists('/dev/loop-control')),
    mounted: linux ? await mountedAt(paths.mountPoint) : 'none',
    freeBytes: free.bavail * free.bsize,
  };
}

async function runCommand(command: Command, log: Log): Promise<void> {
  log(`${command.why}: ${command.argv.join(' ')}`);
  const [file, ...args] = command.argv as [string, ...string[]];
  try {
    await exec(file, args, { env: commandEnv(), timeout: 300_000, maxBuffer: 16 * 1024 * 1024 });
  } catch (e) {
    if (!command.retryAfter) throw e;
    await runCommand(command.retryAfter, log);
    await exec(file, args, { env: commandEnv(), timeout: 300_000, maxBuffer: 16 * 1024 * 1024 });
  }
}

function failure(e: unknown): string {
  const err = e as { stderr?: string; message?: string };
  return (err.stderr?.trim() || err.message || String(e)).split('\n').slice(-4).join(' ');
}

/** Run each command, best effort (a teardown goes on after a step fails); returns what failed. */
export async function runTeardown(commands: readonly Command[], log: Log): Promise<string[]> {
  const failed: string[] = [];
  for (const command of commands) {
    await runCommand(command, log).catch((e: unknown) => failed.push(`${command.argv.join(' ')}: ${failure(e)}`));
  }
  return failed;
}

export type LoopXfsResult =
  | { kind: 'mounted'; dataDir: string; sizeBytes: number; teardown: Command[] }
  | { kind: 'reused'; dataDir: string }
  | { kind: 'skipped'; reason: string; hint?: string };

/**
 * Probe, plan and mount. Returns where the server's data directory goes (and how to undo it), or
 * why not: the caller decides whether that is fatal (`true`) or a notice (`auto`). A command
 * that fails midway is undone and thrown as a ConsortError with its output.
 */
export async function mountLoopXfs(request: LoopXfsRequest, paths: LoopXfsPaths, log: Log): Promise<LoopXfsResult> {
  const facts = await probeLoopXfs(paths);
  const plan: LoopXfsPlan = planLoopXfs(request, facts, paths);
  if (plan.kind === 'unneeded') return { kind: 'skipped', reason: plan.reason };
  if (plan.kind === 'unavailable') return { kind: 'skipped', reason: plan.reason, hint: plan.hint };
  if (plan.kind === 'reuse') return { kind: 'reused', dataDir: plan.dataDir };
  try {
    for (const step of plan.steps) await runCommand(step, log);
    const probe = await supportsReflink(paths.mountPoint);
    if (!probe.reflink) throw new Error(`the mounted XFS does not clone files (${probe.reason})`);
  } catch (e) {
    await runTeardown(plan.teardown, () => undefined);
    throw new ConsortError('data-dir', `Could not put the embedded server on a loop-mounted XFS: ${failure(e)}`, {
      hint: 'Leave reflink off (branches are then full copies), or mount a reflink XFS yourself and set CONSORT_DATA_DIR to a directory on it.',
      cause: e,
    });
  }
  return { kind: 'mounted', dataDir: plan.dataDir, sizeBytes: plan.sizeBytes, teardown: plan.teardown };
}
