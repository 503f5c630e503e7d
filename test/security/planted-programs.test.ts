/**
 * Untrusted code of a run (an agent's turn, a proof's suite, a pull request's migrations) can write
 * every folder the user can, and PATH commonly holds one ahead of /usr/bin (`~/.local/bin` on
 * Ubuntu and GitHub's runners). What it plants there must never be a program Consort itself starts
 * outside the sandbox — `cp`, `chmod`, `tar`, git, or bubblewrap, which would end the sandbox
 * altogether — even when Consort starts that program for the first time after the code ran
 * (src/process/host-programs.ts: found for the PATH Consort started with, when it loads).
 *
 * Here the "user's" folder is on PATH before Consort's modules load, empty, as on a fresh runner;
 * every module is imported after that, so it sees this PATH as the one it started with.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const dir = mkdtempSync(path.join(os.tmpdir(), 'consort-planted-programs-'));
const bin = path.join(dir, 'user-bin');
mkdirSync(bin);
// A folder of programs the user installed, after the writable one (as /usr/bin is).
const installed = path.join(dir, 'installed-bin');
mkdirSync(installed);
const startedWith = process.env.PATH;
process.env.PATH = [bin, installed, startedWith].join(path.delimiter);

const { childEnv } = await import('../../src/core/child-env.js');
const { localProcessRunner } = await import('../../src/process/runner.js');
const { isolationKind } = await import('../../src/process/isolate.js');
const { git } = await import('../../src/git/exec.js');
const { extractCommit } = await import('../../src/git/repo.js');

const marker = path.join(dir, 'planted-program-ran');

/** What a suite does: write `names` into the folder on PATH, each recording that it ran. */
async function plantFromSuite(names: readonly string[]): Promise<void> {
  const script = `#!/bin/sh\necho "$0" >> '${marker}'\nexit 97\n`;
  const command = names
    .map((n) => `cat > '${path.join(bin, n)}' <<'EOF'\n${script}EOF\n/bin/chmod +x '${path.join(bin, n)}'`)
    .join('\n');
  const r = await localProcessRunner.run({
    command,
    cwd: dir,
    env: childEnv(),
    isolate: true,
    timeoutMs: 20_000,
    maxOutputBytes: 10_000,
  });
  expect(r.exitCode).toBe(0);
  for (const n of names) expect(existsSync(path.join(bin, n))).toBe(true);
}

const ran = async (): Promise<string> => (existsSync(marker) ? readFile(marker, 'utf8') : '');

afterEach(() => rmSync(marker, { force: true }));
afterAll(() => {
  process.env.PATH = startedWith;
  rmSync(dir, { recursive: true, force: true });
});

it('cp and chmod the conductor starts by name (a proof tree) are not the ones a suite planted', async () => {
  await plantFromSuite(['cp', 'chmod']);
  const from = path.join(dir, 'a.txt');
  const to = path.join(dir, 'b.txt');
  await writeFile(from, 'x\n');
  const commands: [string, ...string[]][] = [
    ['cp', from, to],
    ['chmod', 'a-w', to],
  ];
  for (const command of commands) {
    const r = await localProcessRunner.run({ command, cwd: dir, env: childEnv(), maxOutputBytes: 10_000 });
    expect({ command, exit: r.exitCode, output: r.output }).toEqual({ command, exit: 0, output: '' });
  }
  expect(await readFile(to, 'utf8')).toBe('x\n');
  expect(await ran()).toBe('');
});

it('the next isolated command is not started by a bwrap or unshare a suite planted', async () => {
  await plantFromSuite(['bwrap', 'unshare']);
  const r = await localProcessRunner.run({
    command: 'echo inside',
    cwd: dir,
    env: childEnv(),
    isolate: true,
    timeoutMs: 20_000,
    maxOutputBytes: 10_000,
  });
  expect({ kind: isolationKind(), exit: r.exitCode, output: r.output.trim() }).toEqual({
    kind: isolationKind(),
    exit: 0,
    output: 'inside',
  });
  expect(await ran()).toBe('');
});

it("git and tar started for the first time after a suite planted them are still PATH's first ones", async () => {
  await plantFromSuite(['git', 'tar']);
  const repo = path.join(dir, 'repo');
  mkdirSync(repo);
  const id = ['-c', 'user.name=t', '-c', 'user.email=t@consort.invalid', '-c', 'commit.gpgsign=false'];
  expect((await git(repo, ['init', '-q', '-b', 'main'])).code).toBe(0);
  await writeFile(path.join(repo, 'f.txt'), 'tracked\n');
  expect((await git(repo, ['add', 'f.txt'])).code).toBe(0);
  expect((await git(repo, [...id, 'commit', '-qm', 'one'])).code).toBe(0);
  const out = path.join(dir, 'extracted');
  mkdirSync(out);
  await extractCommit(repo, 'HEAD', out);
  expect(await readFile(path.join(out, 'f.txt'), 'utf8')).toBe('tracked\n');
  expect(await ran()).toBe('');
});

it('a program PATH did not hold when Consort first started it is not the one a suite plants later', async () => {
  // As `ps`, `xdg-open` or `sudo` on a machine without them: the first start finds nothing.
  const name = 'consort-absent-program';
  const start = () =>
    localProcessRunner.run({ command: [name, '--version'], cwd: dir, env: childEnv(), maxOutputBytes: 10_000 });
  expect((await start()).notFound).toBe(true);
  await plantFromSuite([name]);
  expect((await start()).notFound).toBe(true);
  expect(await ran()).toBe('');
});

it('the npm Consort installs tools with runs on this Node, not on a `node` a suite planted', async () => {
  // npm is a script (`#!/usr/bin/env node`): found by its absolute path, it still finds node on PATH.
  const { npmInstall } = await import('../../src/tools/npm-install.js');
  await plantFromSuite(['node']);
  const prefix = path.join(dir, 'tools');
  mkdirSync(prefix);
  // A package that is not there: npm fails at once, without the network.
  await expect(npmInstall(prefix, [`file:${path.join(dir, 'no-such-package')}`], childEnv())).rejects.toThrow();
  expect(await ran()).toBe('');
});

it("a filter the user's global git configuration names by program is not the one a suite plants", async () => {
  // As `git lfs install` writes into ~/.gitconfig: a clean filter by bare name (git-lfs), which an
  // agent's committed .gitattributes can apply to any file the conductor adds.
  const { pinGlobalConfig } = await import('../../src/git/pinned-config.js');
  const filter = 'consort-test-clean-filter';
  await writeFile(path.join(installed, filter), '#!/bin/sh\ncat\n', { mode: 0o755 });
  const home = path.join(dir, 'home');
  mkdirSync(home);
  await writeFile(path.join(home, '.gitconfig'), `[filter "t"]\n\tclean = ${filter}\n\trequired = true\n`);
  const repo = path.join(dir, 'filtered');
  mkdirSync(repo);
  expect((await git(repo, ['init', '-q', '-b', 'main'])).code).toBe(0);
  await writeFile(path.join(repo, '.gitattributes'), '*.t filter=t\n');
  await writeFile(path.join(repo, 'a.t'), 'content\n');
  const realHome = process.env.HOME;
  process.env.HOME = home;
  let release: (() => Promise<void>) | undefined;
  try {
    release = await pinGlobalConfig(repo); // at the run's start
    await plantFromSuite([filter]); // a turn or a suite of the run
    const added = await git(repo, ['add', 'a.t']);
    expect({ code: added.code, stderr: added.stderr }).toEqual({ code: 0, stderr: '' });
  } finally {
    await release?.();
    process.env.HOME = realHome;
  }
  expect(await ran()).toBe('');
});
