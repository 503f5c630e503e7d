/**
 * The pin's copies of git's excludes and attributes files (src/git/pinned-config.ts) sit in a
 * folder under the temporary directory that bubblewrap hides from isolated commands. Without
 * bubblewrap (unshare, or the sweep fallback) a suite runs as the same user and can write them:
 * a pattern added to the excludes copy hides a file from every later `git status`/`git add` of
 * the conductor, for the rest of the run. The suite's guard compares them like git's global files.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { childEnv } from '../../src/core/child-env.js';
import { localWorkspaces } from '../../src/git/local-workspace.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
let root: string;
const saved = { HOME: process.env.HOME, ISO: process.env.CONSORT_ISOLATION };

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'consort-pin-copies-'));
  await mkdir(path.join(root, 'home', '.config', 'git'), { recursive: true });
  process.env.HOME = path.join(root, 'home');
  process.env.CONSORT_ISOLATION = 'sweep';
});
afterEach(async () => {
  for (const [k, v] of [
    ['HOME', saved.HOME],
    ['CONSORT_ISOLATION', saved.ISO],
  ] as const)
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  await rm(root, { recursive: true, force: true });
});

it("without bubblewrap, a suite's write to the pinned excludes copy is put back and reported", async () => {
  const token = `# ${path.basename(root)}`; // this test's copy, among other runs' in the temporary directory
  await writeFile(path.join(root, 'home', '.config', 'git', 'ignore'), `*.log\n${token}\n`);
  const dir = path.join(root, 'repo');
  await exec('git', ['init', '-q', '-b', 'main', dir]);
  await writeFile(path.join(dir, 'a.txt'), 'a\n');
  await exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'one'], {
    cwd: dir,
  });
  const ws = await localWorkspaces.open(dir);
  const unpin = await ws.pinGitConfig!();
  try {
    const guard = await ws.guardGit('suite');
    // The suite: finds the pin's folder and hides a file from the conductor's git.
    const r = await localProcessRunner.run({
      command: `for f in $(grep -l '${token}' '${os.tmpdir()}'/consort-gitconfig-*/excludesfile); do echo a.txt >> "$f"; done`,
      cwd: dir,
      env: childEnv(),
      isolate: true,
      timeoutMs: 20_000,
      maxOutputBytes: 10_000,
    });
    expect([r.exitCode, r.output]).toEqual([0, '']);
    const changes = await guard.restore();
    expect(changes.map((c) => c.status)).toContain('modified');
    expect(await ws.listFiles()).toContain('a.txt');
  } finally {
    await unpin();
  }
});
