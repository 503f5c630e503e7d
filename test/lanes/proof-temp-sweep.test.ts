/**
 * A proof's own TMPDIR is named with its process id, and one whose process is gone (a run killed
 * before its proof's `finally`) is removed beside the next run's first proof; a live run's is not.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sweepDeadProofTemps } from '../../src/lanes/tdd/proof.js';

it('removes the proof TMPDIRs of processes that are gone, and only those', async () => {
  const parent = await mkdtemp(path.join(os.tmpdir(), 'consort-sweep-'));
  try {
    const gone = spawnSync(process.execPath, ['-e', '0']).pid; // a process that has exited
    await mkdir(path.join(parent, `consort-proof-tmp-${gone}-aB3dE9`, 'jest_0'), { recursive: true });
    await mkdir(path.join(parent, `consort-proof-tmp-${process.pid}-Zx81Qa`));
    await mkdir(path.join(parent, 'consort-proof-tmp-notapid'));
    await mkdir(path.join(parent, 'someone-elses'));
    await sweepDeadProofTemps(parent);
    expect((await readdir(parent)).sort()).toEqual(
      [`consort-proof-tmp-${process.pid}-Zx81Qa`, 'consort-proof-tmp-notapid', 'someone-elses'].sort(),
    );
  } finally {
    await rm(parent, { recursive: true, force: true });
  }
});
