/**
 * A suite (an isolated command, bubblewrap included: `--dev-bind / /`) can write every folder the
 * user can, and PATH commonly holds one ahead of /usr/bin (`~/.local/bin` on Ubuntu and GitHub's
 * runners, `~/bin`, a toolchain's shims). Neither the protected git directory nor the pinned global
 * configuration helps when the conductor's next `git` is a program the suite put there: it runs
 * outside any sandbox, with the conductor's git environment (a push's auth header included).
 * The conductor's git is the one PATH named before any untrusted code ran.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { childEnv } from '../../src/core/child-env.js';
import { git } from '../../src/git/exec.js';
import { localProcessRunner } from '../../src/process/runner.js';

let dir: string;
let bin: string;
const pinnedPath = process.env.PATH;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'consort-planted-git-'));
  bin = path.join(dir, 'user-bin');
  await mkdir(bin);
  await mkdir(path.join(dir, 'repo'));
  // A user-writable folder early on PATH, as ~/.local/bin is.
  process.env.PATH = `${bin}${path.delimiter}${pinnedPath}`;
});
afterEach(async () => {
  process.env.PATH = pinnedPath;
  await rm(dir, { recursive: true, force: true });
});

it("a `git` a suite plants in a folder on PATH is not the conductor's next git", async () => {
  const repo = path.join(dir, 'repo');
  expect((await git(repo, ['init', '-q', '-b', 'main'])).code).toBe(0); // the conductor's git, before the run's code
  const marker = path.join(dir, 'planted-git-ran');
  const fake = path.join(bin, 'git');
  // The suite: writes a `git` that records it ran, then passes through to the real one.
  const script = `#!/bin/sh\ntouch '${marker}'\nPATH='${pinnedPath}' exec git "$@"\n`;
  const r = await localProcessRunner.run({
    command: `cat > '${fake}' <<'EOF'\n${script}EOF\nchmod +x '${fake}'`,
    cwd: repo,
    env: childEnv(),
    isolate: true,
    timeoutMs: 20_000,
    maxOutputBytes: 10_000,
  });
  expect(r.exitCode).toBe(0);
  await chmod(fake, 0o755);
  expect(existsSync(fake)).toBe(true);
  const status = await git(repo, ['status', '--porcelain']);
  expect(status.code).toBe(0);
  expect(existsSync(marker)).toBe(false);
});

it('a git installed after the first call is still not taken (the first resolution holds for that PATH)', async () => {
  const repo = path.join(dir, 'repo');
  expect((await git(repo, ['init', '-q', '-b', 'main'])).code).toBe(0);
  await writeFile(path.join(bin, 'git'), '#!/bin/sh\nexit 42\n');
  await chmod(path.join(bin, 'git'), 0o755);
  expect((await git(repo, ['status'])).code).toBe(0);
});
