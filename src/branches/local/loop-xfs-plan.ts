/**
 * A copy-on-write home for the embedded server where the disk cannot clone (ext4, as on GitHub's
 * Linux runners): a sparse image file formatted as XFS with reflinks and loop-mounted, so
 * PostgreSQL 18's `file_copy_method = clone` makes every branch in constant time. This module only
 * plans: from what was probed (loop-xfs.ts) to the exact commands, or why it cannot be done and the
 * fix. Only mounting needs root; the image is made and formatted as the user the server runs as.
 */
import path from 'node:path';

/** `auto`: use it when everything is in place, else say why and go on in copy mode; `true`: install xfsprogs if needed, fail when it cannot. */
export type LoopXfsRequest = 'auto' | 'true';

/** What the machine offers, probed once (loop-xfs.ts). */
export interface LoopXfsFacts {
  platform: NodeJS.Platform;
  uid: number;
  gid: number;
  /** `sudo -n true` succeeds (GitHub-hosted runners: passwordless sudo). */
  sudo: boolean;
  /** Absolute path of mkfs.xfs, or null when xfsprogs is not installed. */
  mkfsXfs: string | null;
  aptGet: boolean;
  /** /dev/loop-control exists (not in most unprivileged containers). */
  loopDevices: boolean;
  /** What is at the mount point now. */
  mounted: 'none' | 'reflink-xfs' | 'other';
  /** Bytes free on the filesystem that will hold the image. */
  freeBytes: number;
}

export interface LoopXfsPaths {
  /** The sparse image file (on the runner's disk, e.g. under RUNNER_TEMP). */
  image: string;
  /** Where the XFS is mounted; the server's data directory is `data` inside it. */
  mountPoint: string;
}

export interface Command {
  argv: readonly string[];
  /** Why, for the log. */
  why: string;
  /** When the command fails: run this, then the command once more (apt-get install after apt-get update). */
  retryAfter?: Command;
}

export type LoopXfsPlan =
  | { kind: 'mount'; steps: Command[]; teardown: Command[]; dataDir: string; sizeBytes: number }
  /** The mount point already holds a reflink XFS (an earlier step of the same job): use it, leave it to its owner. */
  | { kind: 'reuse'; dataDir: string }
  /** Nothing to do: the platform's own filesystem clones. */
  | { kind: 'unneeded'; reason: string }
  | { kind: 'unavailable'; reason: string; hint: string };

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
/** Below this there is no room for a server, its WAL and a parent worth cloning. */
export const MIN_IMAGE_BYTES = 2 * GiB;
/** The image may grow to this share of the free disk (sparse: it takes only what is written). */
const FREE_SHARE = 0.8;
/** Where Debian and Ubuntu put it, for the plan made before xfsprogs is installed. */
const DEBIAN_MKFS_XFS = '/usr/sbin/mkfs.xfs';

export function dataDirOn(mountPoint: string): string {
  return path.join(mountPoint, 'data');
}

/** The image's size: most of the free disk, in whole MiB (sparse: it takes only what is written; the rest stays for the job's other files). */
export function imageSize(freeBytes: number): number {
  return Math.floor((freeBytes * FREE_SHARE) / MiB) * MiB;
}

export function planLoopXfs(request: LoopXfsRequest, facts: LoopXfsFacts, paths: LoopXfsPaths): LoopXfsPlan {
  const dataDir = dataDirOn(paths.mountPoint);
  if (facts.platform === 'darwin')
    return { kind: 'unneeded', reason: 'macOS: APFS clones files already, branches are copy-on-write as they are' };
  if (facts.platform !== 'linux')
    return {
      kind: 'unavailable',
      reason: `a loop-mounted XFS needs Linux (this is ${facts.platform})`,
      hint: 'Run the job on a Linux runner (ubuntu-latest), or leave reflink off.',
    };
  if (facts.mounted === 'reflink-xfs') return { kind: 'reuse', dataDir };
  if (facts.mounted === 'other')
    return {
      kind: 'unavailable',
      reason: `${paths.mountPoint} is already a mount point, and not a reflink XFS`,
      hint: `Unmount it (sudo umount ${paths.mountPoint}), or leave reflink off.`,
    };
  const root = facts.uid === 0;
  if (!root && !facts.sudo)
    return {
      kind: 'unavailable',
      reason: 'mounting needs root, and this user has no passwordless sudo',
      hint: 'GitHub-hosted runners have it; on a self-hosted runner allow the runner user `sudo -n` for mount, umount and chown, or mount a reflink XFS yourself and set CONSORT_DATA_DIR to a directory on it.',
    };
  if (!facts.loopDevices)
    return {
      kind: 'unavailable',
      reason: 'no loop devices (/dev/loop-control is missing: a container without them?)',
      hint: 'Run the job on the runner itself rather than in a container, or give the container the host loop devices (--privileged).',
    };
  const sizeBytes = imageSize(facts.freeBytes);
  if (sizeBytes < MIN_IMAGE_BYTES)
    return {
      kind: 'unavailable',
      reason: `only ${(facts.freeBytes / GiB).toFixed(1)} GB free next to ${paths.image}`,
      hint: `Free some disk (the image needs at least ${(MIN_IMAGE_BYTES / FREE_SHARE / GiB).toFixed(1)} GB free), or leave reflink off.`,
    };
  const sudo = (argv: readonly string[]): readonly string[] => (root ? argv : ['sudo', '-n', ...argv]);
  const steps: Command[] = [];
  let mkfs = facts.mkfsXfs;
  if (mkfs === null) {
    if (request === 'auto' || !facts.aptGet)
      return {
        kind: 'unavailable',
        reason: 'mkfs.xfs is not installed (package xfsprogs)',
        hint:
          request === 'auto'
            ? 'Install it in an earlier step (sudo apt-get install -y xfsprogs), or set reflink: true to have Consort install it.'
            : 'Install xfsprogs with your package manager in an earlier step.',
      };
    // Through `env`: sudo drops the caller's variables.
    steps.push({
      argv: sudo(['env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', 'install', '-y', '-q', 'xfsprogs']),
      why: 'install xfsprogs (mkfs.xfs)',
      retryAfter: { argv: sudo(['apt-get', 'update', '-q']), why: 'refresh the package lists' },
    });
    mkfs = DEBIAN_MKFS_XFS;
  }
  steps.push(
    { argv: ['truncate', '-s', String(sizeBytes), paths.image], why: 'make the sparse image file' },
    // -f: an image left by an earlier, unmounted attempt is overwritten (a mounted one was reused above).
    {
      argv: [mkfs, '-q', '-f', '-m', 'reflink=1', '-L', 'consort', paths.image],
      why: 'format it as XFS with reflinks',
    },
    { argv: ['mkdir', '-p', paths.mountPoint], why: 'make the mount point' },
    {
      argv: sudo(['mount', '-t', 'xfs', '-o', 'loop,noatime', paths.image, paths.mountPoint]),
      why: 'loop-mount it',
    },
  );
  // The server runs as this user (as root: as the postgres OS user, which only needs to traverse the root, mode 0755).
  if (!root)
    steps.push({
      argv: sudo(['chown', `${facts.uid}:${facts.gid}`, paths.mountPoint]),
      why: 'give it to this user',
    });
  return { kind: 'mount', steps, teardown: planLoopXfsTeardown(paths, root), dataDir, sizeBytes };
}

/**
 * Undo a mount: unmount (the loop device is freed with it: `mount -o loop` sets autoclear), then
 * remove the image and the mount point. The server on it must be stopped first.
 */
export function planLoopXfsTeardown(paths: LoopXfsPaths, root: boolean): Command[] {
  return [
    { argv: root ? ['umount', paths.mountPoint] : ['sudo', '-n', 'umount', paths.mountPoint], why: 'unmount' },
    { argv: ['rm', '-f', paths.image], why: 'remove the image' },
    { argv: ['rmdir', paths.mountPoint], why: 'remove the mount point' },
  ];
}
