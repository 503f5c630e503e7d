/**
 * The pin (src/git/pinned-config.ts) works through GIT_CONFIG_GLOBAL (git 2.32) and
 * GIT_CONFIG_COUNT (git 2.31). An older git ignores both and reads ~/.gitconfig live: the run
 * would go on with a pin that holds nothing. It refuses instead.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pinGlobalConfig } from '../../src/git/pinned-config.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
let root: string;
const pinnedPath = process.env.PATH;
const pinnedHome = process.env.HOME;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'consort-pin-version-'));
  await mkdir(path.join(root, 'home'));
  process.env.HOME = path.join(root, 'home');
});
afterEach(async () => {
  process.env.PATH = pinnedPath;
  process.env.HOME = pinnedHome;
  await rm(root, { recursive: true, force: true });
});

/** A git that says it is `version` and otherwise is the real one. */
async function gitSaying(version: string): Promise<void> {
  const { stdout } = await exec('sh', ['-c', 'command -v git']);
  const bin = path.join(root, `bin-${version}`);
  await mkdir(bin);
  await writeFile(
    path.join(bin, 'git'),
    `#!/bin/sh\nfor a; do [ "$a" = version ] && { echo 'git version ${version}'; exit 0; }; done\nexec '${stdout.trim()}' "$@"\n`,
  );
  await chmod(path.join(bin, 'git'), 0o755);
  process.env.PATH = `${bin}${path.delimiter}${pinnedPath}`;
}

it('refuses to pin with a git older than 2.32', async () => {
  const dir = path.join(root, 'repo');
  await exec('git', ['init', '-q', '-b', 'main', dir]);
  await gitSaying('2.30.2');
  await expect(pinGlobalConfig(dir)).rejects.toThrow(/needs git 2\.32 or newer \(git 2\.30 found\)/);
  await gitSaying('2.32.0');
  const release = await pinGlobalConfig(dir);
  await release();
});
