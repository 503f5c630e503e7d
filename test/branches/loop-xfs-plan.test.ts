/** The loop-mounted XFS plan: from the probed facts to the exact commands, or why not and the fix. */
import {
  dataDirOn,
  imageSize,
  MIN_IMAGE_BYTES,
  planLoopXfs,
  planLoopXfsTeardown,
  type LoopXfsFacts,
} from '../../src/branches/local/loop-xfs-plan.js';

const GiB = 1024 ** 3;
const paths = { image: '/home/runner/work/_temp/consort-xfs.img', mountPoint: '/home/runner/work/_temp/consort-xfs' };
/** A GitHub-hosted Ubuntu runner: user runner (1001:118), passwordless sudo, xfsprogs present. */
const runner: LoopXfsFacts = {
  platform: 'linux',
  uid: 1001,
  gid: 118,
  sudo: true,
  mkfsXfs: '/usr/sbin/mkfs.xfs',
  aptGet: true,
  loopDevices: true,
  mounted: 'none',
  freeBytes: 20 * GiB,
};
const argvs = (plan: ReturnType<typeof planLoopXfs>) =>
  plan.kind === 'mount' ? plan.steps.map((s) => s.argv.join(' ')) : plan;
const size = String(imageSize(20 * GiB));

describe('planLoopXfs', () => {
  it('on a hosted runner: image and format as the user, mount and chown with sudo -n', () => {
    const plan = planLoopXfs('auto', runner, paths);
    expect(argvs(plan)).toEqual([
      `truncate -s ${size} ${paths.image}`,
      `/usr/sbin/mkfs.xfs -q -f -m reflink=1 -L consort ${paths.image}`,
      `mkdir -p ${paths.mountPoint}`,
      `sudo -n mount -t xfs -o loop,noatime ${paths.image} ${paths.mountPoint}`,
      `sudo -n chown 1001:118 ${paths.mountPoint}`,
    ]);
    expect(plan).toMatchObject({
      kind: 'mount',
      dataDir: `${paths.mountPoint}/data`,
      sizeBytes: Number(size),
      teardown: [
        { argv: ['sudo', '-n', 'umount', paths.mountPoint] },
        { argv: ['rm', '-f', paths.image] },
        { argv: ['rmdir', paths.mountPoint] },
      ],
    });
  });

  it('as root: no sudo, and no chown (the postgres OS user only traverses the mount, mode 0755)', () => {
    const plan = planLoopXfs('true', { ...runner, uid: 0, gid: 0, sudo: false }, paths);
    expect(argvs(plan)).toEqual([
      `truncate -s ${size} ${paths.image}`,
      `/usr/sbin/mkfs.xfs -q -f -m reflink=1 -L consort ${paths.image}`,
      `mkdir -p ${paths.mountPoint}`,
      `mount -t xfs -o loop,noatime ${paths.image} ${paths.mountPoint}`,
    ]);
    expect(plan.kind === 'mount' && plan.teardown[0]!.argv).toEqual(['umount', paths.mountPoint]);
  });

  it('true installs xfsprogs first (apt-get update only when the install fails); auto says how instead', () => {
    const missing = { ...runner, mkfsXfs: null };
    const plan = planLoopXfs('true', missing, paths);
    expect(plan.kind === 'mount' && plan.steps[0]).toEqual({
      argv: ['sudo', '-n', 'env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', 'install', '-y', '-q', 'xfsprogs'],
      why: 'install xfsprogs (mkfs.xfs)',
      retryAfter: { argv: ['sudo', '-n', 'apt-get', 'update', '-q'], why: 'refresh the package lists' },
    });
    expect(plan.kind === 'mount' && plan.steps[2]!.argv[0]).toBe('/usr/sbin/mkfs.xfs');
    expect(planLoopXfs('auto', missing, paths)).toEqual({
      kind: 'unavailable',
      reason: 'mkfs.xfs is not installed (package xfsprogs)',
      hint: 'Install it in an earlier step (sudo apt-get install -y xfsprogs), or set reflink: true to have Consort install it.',
    });
    expect(planLoopXfs('true', { ...missing, aptGet: false }, paths)).toMatchObject({
      kind: 'unavailable',
      hint: 'Install xfsprogs with your package manager in an earlier step.',
    });
  });

  it.each<[string, Partial<LoopXfsFacts>, RegExp, RegExp]>([
    ['no sudo', { sudo: false }, /no passwordless sudo/, /sudo -n.*CONSORT_DATA_DIR/],
    ['no loop devices', { loopDevices: false }, /\/dev\/loop-control is missing/, /--privileged/],
    ['another filesystem mounted there', { mounted: 'other' }, /already a mount point/, /sudo umount/],
    ['a full disk', { freeBytes: 1.5 * GiB }, /only 1\.5 GB free/, /at least 2\.5 GB free/],
    ['Windows', { platform: 'win32' }, /needs Linux \(this is win32\)/, /ubuntu-latest/],
  ])('refuses with the fix: %s', (_name, change, reason, hint) => {
    for (const request of ['auto', 'true'] as const) {
      const plan = planLoopXfs(request, { ...runner, ...change }, paths);
      expect(plan.kind).toBe('unavailable');
      if (plan.kind !== 'unavailable') return;
      expect(plan.reason).toMatch(reason);
      expect(plan.hint).toMatch(hint);
    }
  });

  it('reuses a reflink XFS already mounted there (an earlier step of the job) and leaves it to that step', () => {
    expect(planLoopXfs('auto', { ...runner, mounted: 'reflink-xfs', sudo: false }, paths)).toEqual({
      kind: 'reuse',
      dataDir: dataDirOn(paths.mountPoint),
    });
  });

  it('has nothing to do on macOS, whose APFS clones already', () => {
    expect(planLoopXfs('true', { ...runner, platform: 'darwin' }, paths)).toMatchObject({ kind: 'unneeded' });
  });

  it('sizes the sparse image to most of the free disk, in whole MiB, and needs at least 2 GiB of it', () => {
    expect(imageSize(10 * GiB)).toBe(8 * GiB);
    expect(imageSize(10 * GiB + 123) % (1024 * 1024)).toBe(0);
    expect(planLoopXfs('auto', { ...runner, freeBytes: MIN_IMAGE_BYTES / 0.8 }, paths).kind).toBe('mount');
    expect(planLoopXfs('auto', { ...runner, freeBytes: MIN_IMAGE_BYTES / 0.8 - 2 ** 21 }, paths).kind).toBe(
      'unavailable',
    );
  });
});

describe('planLoopXfsTeardown', () => {
  it('unmounts (freeing the loop device) and removes the image and the mount point', () => {
    expect(planLoopXfsTeardown(paths, false).map((c) => c.argv.join(' '))).toEqual([
      `sudo -n umount ${paths.mountPoint}`,
      `rm -f ${paths.image}`,
      `rmdir ${paths.mountPoint}`,
    ]);
  });
});
