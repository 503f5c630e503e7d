/**
 * The `reflink` input: on a Linux runner with root or passwordless sudo (GitHub-hosted runners),
 * the local provider's data directory goes on a loop-mounted reflink XFS under RUNNER_TEMP, so
 * branches are copy-on-write clones there too (branches/local/loop-xfs.ts). The post step
 * (post.ts, `runs.post` in action.yml) stops the server and unmounts at the end of the job, after
 * every later step could still use the branch the check kept.
 */
import * as core from '@actions/core';
import path from 'node:path';
import { z } from 'zod';
import { planLoopXfsTeardown, type LoopXfsPaths } from '../branches/local/loop-xfs-plan.js';
import { mountLoopXfs, runTeardown } from '../branches/local/loop-xfs.js';
import { EmbeddedServer } from '../branches/local/server.js';
import { ConsortError } from '../core/errors.js';
import type { ProviderName } from '../ports/branch-provider.js';
import type { ReflinkInput } from './inputs.js';
import { STATE } from './state.js';

/** The post step's state (STATE.reflinkMount): what to stop and unmount; the commands are planned again there, never read back. */
const MountState = z.object({
  dataDir: z.string().startsWith('/'),
  image: z.string().startsWith('/'),
  mountPoint: z.string().startsWith('/'),
});

export function reflinkPaths(runnerTemp: string): LoopXfsPaths {
  return { image: path.join(runnerTemp, 'consort-xfs.img'), mountPoint: path.join(runnerTemp, 'consort-xfs') };
}

let prepared: Promise<string | undefined> | undefined;

/**
 * Where the local provider's data directory goes: on the XFS, or undefined for the usual place.
 * Mounted once per run (the TDD lane opens its provider more than once).
 */
export function reflinkDataDir(
  reflink: ReflinkInput,
  provider: ProviderName,
  runnerTemp: string,
): Promise<string | undefined> {
  if (reflink === 'false') return Promise.resolve(undefined);
  if (provider !== 'local') {
    if (reflink === 'true')
      throw new ConsortError(
        'invalid-input',
        `Invalid input "reflink": it puts the local provider's data directory on a loop-mounted XFS, and the configuration's provider is ${provider}.`,
        { hint: 'Remove reflink, or use provider: local.' },
      );
    core.info(`reflink: auto does nothing with the ${provider} provider.`);
    return Promise.resolve(undefined);
  }
  prepared ??= core.group('Reflink (loop-mounted XFS)', () => prepare(reflink, reflinkPaths(runnerTemp)));
  return prepared;
}

async function prepare(request: 'auto' | 'true', paths: LoopXfsPaths): Promise<string | undefined> {
  const result = await mountLoopXfs(request, paths, (m) => core.info(m));
  if (result.kind === 'skipped') {
    if (result.hint === undefined) {
      core.info(`reflink: ${result.reason}.`);
      return undefined;
    }
    if (request === 'true')
      throw new ConsortError('data-dir', `reflink: true, but ${result.reason}.`, { hint: result.hint });
    core.warning(`reflink: ${result.reason}, so branches are full copies. ${result.hint}`);
    return undefined;
  }
  if (result.kind === 'reused') {
    core.info(`reflink: ${paths.mountPoint} is already a reflink XFS (an earlier step): using it.`);
    return result.dataDir;
  }
  core.saveState(STATE.reflinkMount, JSON.stringify({ dataDir: result.dataDir, ...paths }));
  core.info(
    `reflink: branches are copy-on-write clones in ${result.dataDir} (a ${(result.sizeBytes / 1024 ** 3).toFixed(1)} GB sparse XFS image, unmounted at the end of the job).`,
  );
  return result.dataDir;
}

/** The post step: stop the server on the XFS and unmount it. A warning at worst: the runner is thrown away anyway. */
export async function runPost(): Promise<void> {
  const text = core.getState(STATE.reflinkMount);
  if (!text) return;
  try {
    const state = MountState.parse(JSON.parse(text));
    if (await new EmbeddedServer(state.dataDir, (m) => core.info(m)).stop())
      core.info(`Stopped the embedded PostgreSQL in ${state.dataDir}.`);
    const failed = await runTeardown(planLoopXfsTeardown(state, process.getuid?.() === 0), (m) => core.info(m));
    if (failed.length > 0) core.warning(`reflink: could not clean up everything: ${failed.join('; ')}`);
    else core.info(`reflink: unmounted ${state.mountPoint} and removed ${state.image}.`);
  } catch (e) {
    core.warning(`reflink: could not unmount the XFS: ${e instanceof Error ? e.message : String(e)}`);
  }
}
