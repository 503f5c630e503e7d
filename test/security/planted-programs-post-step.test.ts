/**
 * The Action's post step (src/action/post.ts) is a process of its own, started at the end of the
 * job: after the main step ran a pull request's suite, an agent's turns and migrations. Whatever that
 * code planted in a folder on PATH (`~/.local/bin` on GitHub's runners) is already there when the
 * post step's modules load, so "the PATH it started with" names the planted programs too. The
 * teardown it runs (sudo, umount, rm, rmdir), and the main step's mount (findmnt, mkfs.xfs, mount),
 * must not start them.
 *
 * Here the planted programs are on PATH, in the "user's" folder ahead of the system's, before any
 * module loads.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const dir = mkdtempSync(path.join(os.tmpdir(), 'consort-planted-post-'));
const bin = path.join(dir, 'user-bin');
mkdirSync(bin);
const marker = path.join(dir, 'planted-program-ran');
const PLANTED = ['sudo', 'umount', 'rm', 'rmdir', 'findmnt', 'mount', 'truncate', 'mkdir', 'env'];
for (const name of PLANTED)
  writeFileSync(path.join(bin, name), `#!/bin/sh\necho "$0" >> '${marker}'\nexit 0\n`, { mode: 0o755 });
const startedWith = process.env.PATH;
process.env.PATH = `${bin}${path.delimiter}${startedWith}`;

const { mountedAt, runTeardown } = await import('../../src/branches/local/loop-xfs.js');
const { planLoopXfsTeardown } = await import('../../src/branches/local/loop-xfs-plan.js');

const ran = (): string => (existsSync(marker) ? readFileSync(marker, 'utf8') : '');

afterEach(() => rmSync(marker, { force: true }));
afterAll(() => {
  process.env.PATH = startedWith;
  rmSync(dir, { recursive: true, force: true });
});

it("the post step's teardown does not start programs planted on PATH before it started", async () => {
  const image = path.join(dir, 'consort-xfs.img');
  const mountPoint = path.join(dir, 'consort-xfs');
  writeFileSync(image, 'image');
  mkdirSync(mountPoint);
  // As the post step plans it (root or not: both name their programs by bare name).
  for (const root of [true, false])
    await runTeardown(planLoopXfsTeardown({ image, mountPoint }, root), () => undefined);
  expect(ran()).toBe('');
  // The system's rm and rmdir did the work.
  expect({ image: existsSync(image), mountPoint: existsSync(mountPoint) }).toEqual({ image: false, mountPoint: false });
});

it('probing a mount does not start a findmnt planted on PATH', async () => {
  expect(await mountedAt(dir)).not.toBe('reflink-xfs');
  expect(ran()).toBe('');
});
