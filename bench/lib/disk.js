/** Free space, mount points and the reflink XFS scratch filesystem for clone mode. */
import { createHash } from 'node:crypto';
import { access, readdir, statfs } from 'node:fs/promises';
import path from 'node:path';
import { BENCH_DIR, DEFAULT_XFS_DIR } from './options.js';
import { bash, run } from './exec.js';

const GiB = 1024 ** 3;

/** Bytes available to unprivileged users on the filesystem holding `dir` (or its nearest existing parent). */
export async function freeBytes(dir) {
  const s = await statfs(await nearestExisting(dir));
  return s.bavail * s.bsize;
}

async function nearestExisting(dir) {
  let d = path.resolve(dir);
  while (!(await exists(d))) d = path.dirname(d);
  return d;
}

export async function exists(p) {
  return access(p).then(() => true, () => false);
}

/** The filesystem holding `dir`: { source, fstype, target }. */
export async function filesystemOf(dir) {
  const { stdout } = await run('findmnt', ['-n', '-o', 'SOURCE,FSTYPE,TARGET', '-T', await nearestExisting(dir)]);
  const [source, fstype, target] = stdout.trim().split(/\s+/);
  return { source, fstype, target };
}

async function isMountPoint(dir) {
  return run('mountpoint', ['-q', dir]).then(() => true, () => false);
}

async function isReflinkXfs(dir) {
  if (!(await isMountPoint(dir))) return false;
  const fs = await filesystemOf(dir);
  if (fs.fstype !== 'xfs') return false;
  const { stdout } = await run('xfs_info', [dir]).catch(() => ({ stdout: '' }));
  return /reflink=1/.test(stdout);
}

/** Disk a clone-mode run needs on the scratch fs: the largest parent, WAL during its load, slack. */
export function cloneBytesNeeded(maxSizeMb) {
  return Math.ceil(maxSizeMb * 1024 * 1024 * 3 + 1 * GiB);
}

/**
 * Make sure a reflink XFS is mounted at `dir` with at least `needBytes` free.
 * Returns { ok: true, dir, created, note, undo } or { ok: false, reason }.
 * `undo` (when the benchmark mounted or created something) unmounts it and deletes what it created.
 */
export async function ensureReflinkScratch(dir, needBytes, log) {
  const script = path.join(BENCH_DIR, 'scratch-xfs.sh');
  let mounted = await isReflinkXfs(dir);
  if (!mounted && (await isMountPoint(dir))) {
    const fs = await filesystemOf(dir);
    return { ok: false, reason: `${dir} is a ${fs.fstype} mount without reflink, not a reflink XFS` };
  }
  if (mounted && (await freeBytes(dir)) >= needBytes) return { ok: true, dir, created: false, note: `using mounted reflink XFS ${dir}` };
  if (process.getuid?.() !== 0) {
    return {
      ok: false,
      reason: mounted
        ? `${dir} has ${gb(await freeBytes(dir))} free, ${gb(needBytes)} needed, and only root can make a bigger scratch filesystem`
        : `${dir} is not a reflink XFS mount and only root can create one (run bench/scratch-xfs.sh as root)`,
    };
  }
  let target = dir;
  let note;
  if (mounted) {
    // Too small: the script never reformats an image, so make a bigger one at a new path.
    const sizeGb = Math.ceil((needBytes * 1.25) / GiB) + 1;
    target = `${dir}-bench-${sizeGb}g`;
    note = `${dir} has only ${gb(await freeBytes(dir))} free (${gb(needBytes)} needed): created a ${sizeGb}G scratch XFS at ${target}`;
    mounted = await isReflinkXfs(target);
    if (mounted && (await freeBytes(target)) >= needBytes) return { ok: true, dir: target, created: false, note: `using mounted reflink XFS ${target}` };
    if (mounted) return { ok: false, reason: `${target} is mounted but too small too (${gb(await freeBytes(target))} free)` };
  }
  if (!(await isEmptyOrMissing(target))) {
    return { ok: false, reason: `${target} is not a mount point and not empty: refusing to mount a scratch filesystem over it` };
  }
  const sizeGb = Math.max(6, Math.ceil((needBytes * 1.25) / GiB) + 1);
  const image = target === DEFAULT_XFS_DIR ? '/var/tmp/consort-xfs.img'
    : `/var/tmp/consort-xfs-${createHash('sha256').update(target).digest('hex').slice(0, 8)}.img`;
  const imageExisted = await exists(image);
  log(`clone mode: mounting a reflink XFS at ${target} (bench/scratch-xfs.sh, ${sizeGb}G sparse image ${image})`);
  try {
    await bash('"$1" "$2" "$3" "$4"', [script, target, `${sizeGb}G`, image]);
  } catch (e) {
    const line = String(e.stderr ?? e.message).trim().split('\n').filter((l) => l.startsWith('scratch-xfs:')).at(-1) ?? e.message;
    return { ok: false, reason: line.replace(/^scratch-xfs:\s*/, 'scratch-xfs.sh: ') };
  }
  if ((await freeBytes(target)) < needBytes) {
    return { ok: false, reason: `${target} has ${gb(await freeBytes(target))} free after mounting, ${gb(needBytes)} needed (existing image ${image} is too small)` };
  }
  const undo = imageExisted
    ? () => run('umount', [target])
    : () => run(script, ['--remove', target, image]);
  return {
    ok: true,
    dir: target,
    created: true,
    note: note ?? `mounted ${imageExisted ? 'existing' : 'new'} ${sizeGb}G reflink XFS image ${image} on ${target}`,
    undo,
  };
}

async function isEmptyOrMissing(dir) {
  return readdir(dir).then((entries) => entries.length === 0, (e) => e.code === 'ENOENT');
}

export function gb(bytes) {
  return `${(bytes / GiB).toFixed(1)} GB`;
}
