/**
 * The reflink input on this machine, as the Action runs it: mount a loop XFS (as root, with
 * xfsprogs: .ci/run installs it), open the local provider there, make a branch (a clone), then the
 * post step stops the server and unmounts. Without root, loop devices or mkfs.xfs the same call
 * must say why and how to fix it; on CI that fails instead, so the mount is never silently untested.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { reflinkDataDir, reflinkPaths, runPost } from '../../src/action/reflink.js';
import { STATE } from '../../src/action/state.js';
import { mountedAt, mountLoopXfs, runTeardown } from '../../src/branches/local/loop-xfs.js';
import { planLoopXfsTeardown } from '../../src/branches/local/loop-xfs-plan.js';
import { createLocalProvider } from '../../src/branches/local/provider.js';
import { EmbeddedServer } from '../../src/branches/local/server.js';
import { ownDataDir, query } from '../helpers/servers.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;

const capable =
  process.platform === 'linux' &&
  process.getuid?.() === 0 &&
  ['/usr/sbin/mkfs.xfs', '/sbin/mkfs.xfs', '/usr/bin/mkfs.xfs'].some((f) => existsSync(f)) &&
  existsSync('/dev/loop-control');

let temp: string;
const saved = { GITHUB_STATE: process.env.GITHUB_STATE, state: process.env[`STATE_${STATE.reflinkMount}`] };

beforeAll(async () => {
  temp = await mkdtemp(path.join(os.tmpdir(), 'consort-reflink-'));
  await chmod(temp, 0o755); // as root the server runs as the postgres OS user, which must reach the mount
});

afterAll(async () => {
  const paths = reflinkPaths(temp);
  if ((await mountedAt(paths.mountPoint)) !== 'none') {
    await new EmbeddedServer(path.join(paths.mountPoint, 'data')).stop().catch(() => undefined);
    await runTeardown(planLoopXfsTeardown(paths, true), () => undefined);
  }
  for (const [key, value] of [
    ['GITHUB_STATE', saved.GITHUB_STATE],
    [`STATE_${STATE.reflinkMount}`, saved.state],
  ] as const) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  await rm(temp, { recursive: true, force: true });
});

/** The state file the runner gives a step (`name<<delimiter`, value, delimiter), as the post step's STATE_ variables. */
function stateOf(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/^(.+?)<<(\S+)\n([\s\S]*?)\n\2$/gm)) out[m[1]!] = m[3]!;
  return out;
}

describe('reflink on this machine', () => {
  it('mounts a loop XFS, clones branches there, and the post step stops the server and unmounts', async () => {
    if (!capable) {
      if (process.env.CI)
        throw new Error('CI must run this as root with xfsprogs and loop devices (.ci/run installs xfsprogs)');
      // Not root, no loop devices or no xfsprogs: the Action says which, and the fix.
      const result = await mountLoopXfs('auto', reflinkPaths(temp), () => undefined);
      expect(result).toMatchObject({ kind: 'skipped', reason: expect.any(String), hint: expect.any(String) });
      return;
    }
    const paths = reflinkPaths(temp);
    process.env.GITHUB_STATE = path.join(temp, 'state');
    await writeFile(process.env.GITHUB_STATE, ''); // the runner makes it for each step
    const dataDir = await reflinkDataDir('auto', 'local', temp);
    expect(dataDir).toBe(path.join(paths.mountPoint, 'data'));
    expect(await mountedAt(paths.mountPoint)).toBe('reflink-xfs');
    // A second open in the same run (the TDD lane opens its provider again) reuses the mount.
    expect(await reflinkDataDir('auto', 'local', temp)).toBe(dataDir);

    // The run's initialised cluster instead of a first-use initdb (cp -a keeps the postgres OS user's ownership).
    const template = await ownDataDir();
    await mkdir(dataDir!, { mode: 0o755 });
    await exec('cp', ['-a', `${template}/.`, dataDir!]);
    await rm(template, { recursive: true, force: true });
    const { provider } = await createLocalProvider({ dataDir: dataDir! });
    try {
      const caps = await provider.capabilities();
      expect(caps.mode).toBe('clone');
      await query(
        await provider.connectionUri('main'),
        'CREATE TABLE items AS SELECT g AS id, repeat($$x$$, 200) AS label FROM generate_series(1, 20000) g',
      );
      const branch = await provider.create({ name: 'feature' });
      expect(branch.copyStrategy).toBe('file_copy');
      const rows = await query<{ n: string }>(
        await provider.connectionUri('feature'),
        'SELECT count(*) AS n FROM items',
      );
      expect(rows[0]!.n).toBe('20000');
    } finally {
      await provider.close();
    }

    // The post step, with the state the main step saved, as the runner hands it over.
    const state = stateOf(await readFile(process.env.GITHUB_STATE, 'utf8'));
    expect(JSON.parse(state[STATE.reflinkMount]!)).toEqual({ dataDir, ...paths });
    process.env[`STATE_${STATE.reflinkMount}`] = state[STATE.reflinkMount]!;
    await runPost();
    expect(await mountedAt(paths.mountPoint)).toBe('none');
    expect(existsSync(paths.image)).toBe(false);
    expect(existsSync(paths.mountPoint)).toBe(false);
  });
});
