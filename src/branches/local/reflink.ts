/**
 * Can this directory's filesystem clone files (XFS with reflink=1, Btrfs, APFS)? Only then is
 * PostgreSQL 18's `file_copy_method = clone` a constant-time copy-on-write; elsewhere it copies.
 * Detected by trying, which is the only test that works for every filesystem.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { childEnv } from '../../core/child-env.js';
import { hostProgram } from '../../process/host-programs.js';

const run = promisify(execFile);

export async function supportsReflink(dir: string): Promise<{ reflink: boolean; reason: string }> {
  const probe = await mkdtemp(path.join(dir, '.reflink-probe-'));
  try {
    const src = path.join(probe, 'a');
    await writeFile(src, 'consort reflink probe\n');
    const args =
      process.platform === 'darwin'
        ? ['-c', src, path.join(probe, 'b')]
        : ['--reflink=always', src, path.join(probe, 'b')];
    await run(hostProgram('cp'), args, { env: childEnv({ LC_ALL: 'C' }) });
    return { reflink: true, reason: `reflinks supported in ${dir}: branches are copy-on-write clones` };
  } catch {
    return {
      reflink: false,
      reason: `no reflinks in ${dir} (e.g. ext4): branches are full file copies; put CONSORT_DATA_DIR on XFS or Btrfs for clones`,
    };
  } finally {
    await rm(probe, { recursive: true, force: true });
  }
}
