/**
 * A proof's worktree made ahead (src/git/prepared-worktree.ts): begun at the turn's base while the
 * agent works, moved to the turn's commit by the proof, and trusted only after every file was
 * checked against that commit. Anything planted in it meanwhile — as an agent without bubblewrap,
 * or a migration, can — makes the proof build its tree afresh; under bubblewrap the folder is not
 * even visible to an isolated command until its proof takes it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { childEnv } from '../../src/core/child-env.js';
import { bindWorkspace } from '../../src/git/local-workspace.js';
import { prepareWorktree, settleWorktree } from '../../src/git/prepared-worktree.js';
import { openWorkspace, type GitWorkspace } from '../../src/git/workspace.js';
import { localProcessRunner } from '../../src/process/runner.js';

let root: string;
let dir: string;
let gws: GitWorkspace;
let base: string;
let head: string;

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' }).trim();

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'consort-prepared-'));
  dir = path.join(root, 'repo');
  await mkdir(path.join(dir, 'src'), { recursive: true });
  await mkdir(path.join(dir, 'test'), { recursive: true });
  await writeFile(path.join(dir, 'src', 'sum.js'), 'export const sum = (a, b) => a + b;\n');
  await writeFile(path.join(dir, 'run.sh'), '#!/bin/sh\necho run\n');
  await chmod(path.join(dir, 'run.sh'), 0o755);
  await symlink('src/sum.js', path.join(dir, 'main.js'));
  await writeFile(path.join(dir, '.gitignore'), 'junit.xml\n');
  git(dir, 'init', '-q');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'base');
  base = git(dir, 'rev-parse', 'HEAD');
  // The turn: a new test, a changed file.
  await writeFile(path.join(dir, 'test', 'sum.test.js'), "import { sum } from '../src/sum.js';\n");
  await writeFile(path.join(dir, 'src', 'sum.js'), 'export const sum = (a, b) => b + a;\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'turn');
  head = git(dir, 'rev-parse', 'HEAD');
  gws = await openWorkspace(dir);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Everything next to the repository and registered with it that a proof's worktree leaves. */
async function leftovers(): Promise<string[]> {
  const folders = (await readdir(root)).filter((f) => !['repo', 'copy.sh', 'evil.git'].includes(f));
  const admin = await readdir(path.join(dir, '.git', 'worktrees')).catch(() => [] as string[]);
  return [...folders, ...admin];
}

/** The commit's files, as a fresh checkout has them, and the tree's (its `.git` file aside). */
async function filesOf(tree: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const f of git(tree, 'ls-files', '--others', '--cached', '--ignored', '--exclude-standard', '-z').split('\0'))
    if (f) out[f] = await readFile(path.join(tree, f), 'utf8').catch((e: NodeJS.ErrnoException) => `<${e.code}>`);
  return out;
}

it('moves a tree made at the base to the commit, file for file what the commit holds', async () => {
  const at = path.join(root, 'proof-1');
  const prepared = prepareWorktree(gws, at, base);
  expect(await settleWorktree(gws, prepared, head)).toBe(true);
  prepared.show();
  expect(git(at, 'rev-parse', 'HEAD')).toBe(head);
  expect(git(at, 'status', '--porcelain', '--untracked-files=all', '--ignored')).toBe('');
  expect(await readFile(path.join(at, 'src', 'sum.js'), 'utf8')).toBe('export const sum = (a, b) => b + a;\n');
  expect(await readFile(path.join(at, 'test', 'sum.test.js'), 'utf8')).toContain('sum');
});

it.each<[string, (tree: string) => Promise<void>]>([
  ['a tracked file rewritten with the same size', (t) => writeFile(path.join(t, 'run.sh'), '#!/bin/sh\necho pwn\n')],
  ['an ignored report planted', (t) => writeFile(path.join(t, 'junit.xml'), '<testsuites/>')],
  ['an untracked file', (t) => writeFile(path.join(t, 'src', 'extra.js'), 'x')],
  ['an empty folder', (t) => mkdir(path.join(t, 'planted'))],
  ['a FIFO', async (t) => void execFileSync('mkfifo', [path.join(t, 'src', 'pipe')])],
  ['an executable bit taken away', (t) => chmod(path.join(t, 'run.sh'), 0o644)],
  [
    'a symlink pointed elsewhere',
    async (t) => {
      await rm(path.join(t, 'main.js'));
      await symlink('/etc/passwd', path.join(t, 'main.js'));
    },
  ],
  [
    'a file made a symlink to the same content',
    async (t) => {
      await writeFile(path.join(root, 'copy.sh'), await readFile(path.join(t, 'run.sh')));
      await rm(path.join(t, 'run.sh'));
      await symlink(path.join(root, 'copy.sh'), path.join(t, 'run.sh'));
    },
  ],
  ['a file grown huge (sparse: not read, its size differs)', (t) => truncate(path.join(t, 'run.sh'), 4 * 1024 ** 3)],
  ['a file removed', (t) => rm(path.join(t, '.gitignore'))],
  [
    "the worktree's .git file pointed at another git directory",
    (t) => writeFile(path.join(t, '.git'), `gitdir: ${path.join(dir, '.git')}\n`),
  ],
  [
    "its registration's commondir rewritten",
    async (t) => {
      const admin = (await readFile(path.join(t, '.git'), 'utf8')).replace(/^gitdir: /, '').trim();
      await writeFile(path.join(admin, 'commondir'), `${root}/elsewhere/.git\n`);
    },
  ],
  [
    'a config.worktree added to its registration',
    async (t) => {
      const admin = (await readFile(path.join(t, '.git'), 'utf8')).replace(/^gitdir: /, '').trim();
      await writeFile(path.join(admin, 'config.worktree'), '[core]\n\tworktree = /\n');
    },
  ],
])('a tree with %s is not trusted: the proof gets a fresh one', async (_what, tamper) => {
  const at = path.join(root, 'proof-1');
  const prepared = prepareWorktree(gws, at, base);
  expect(await prepared.made).not.toBeNull();
  await tamper(at);
  expect(await settleWorktree(gws, prepared, head)).toBe(false);
  prepared.show();
  const ws = bindWorkspace(gws);
  await ws.removeWorktree(at);
  // Through the Workspace port: taken, found wanting, made afresh at the same folder.
  const other = path.join(root, 'proof-2');
  await ws.prepareWorktree!(other, base);
  await tamper(other);
  const proof = await ws.addWorktree(other, head);
  expect(git(other, 'rev-parse', 'HEAD')).toBe(head);
  expect(await filesOf(proof.dir)).toEqual(await filesOf(dir));
  expect(git(other, 'status', '--porcelain', '--untracked-files=all', '--ignored')).toBe('');
  await ws.removeWorktree(other);
  // A prepared tree that never settled stops the workspace preparing more (a filter would fail each).
  await ws.prepareWorktree!(path.join(root, 'proof-3'), base);
  expect(await leftovers()).toEqual([]);
});

it("a registration pointed at a common directory with a filter of its own: the conductor's git never runs it", async () => {
  // The attacker's common directory borrows the repository's objects and brings a smudge filter.
  const evil = path.join(root, 'evil.git');
  const ran = path.join(root, 'filter-ran');
  git(root, 'init', '-q', '--bare', evil);
  await writeFile(path.join(evil, 'objects', 'info', 'alternates'), `${path.join(dir, '.git', 'objects')}\n`);
  await writeFile(path.join(evil, 'info', 'attributes'), '* filter=x\n');
  git(evil, 'config', 'filter.x.smudge', `sh -c 'touch ${ran}; cat'`);
  const at = path.join(root, 'proof-1');
  const prepared = prepareWorktree(gws, at, base);
  expect(await prepared.made).not.toBeNull();
  const admin = (await readFile(path.join(at, '.git'), 'utf8')).replace(/^gitdir: /, '').trim();
  await writeFile(path.join(admin, 'commondir'), `${evil}\n`);
  expect(await settleWorktree(gws, prepared, head)).toBe(false);
  prepared.show();
  await expect(readFile(ran)).rejects.toThrow(/ENOENT/);
  await bindWorkspace(gws).removeWorktree(at);
});

it('a checkout filter that makes files differ from their blobs: correct trees, made afresh', async () => {
  await writeFile(path.join(dir, '.gitattributes'), '*.js text eol=crlf\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'crlf');
  const crlf = git(dir, 'rev-parse', 'HEAD');
  const ws = bindWorkspace(gws);
  const at = path.join(root, 'proof-1');
  void ws.prepareWorktree!(at, head);
  const proof = await ws.addWorktree(at, crlf);
  expect(await readFile(path.join(proof.dir, 'src', 'sum.js'), 'utf8')).toBe('export const sum = (a, b) => b + a;\r\n');
  expect(git(at, 'status', '--porcelain', '--untracked-files=all')).toBe('');
  await ws.removeWorktree(at);
  expect(await leftovers()).toEqual([]);
});

it('a tree never taken is removed with its registration once git has made it', async () => {
  const ws = bindWorkspace(gws);
  const at = path.join(root, 'proof-1');
  void ws.prepareWorktree!(at, base);
  await ws.removeWorktree(at); // at once: git may still be making it
  expect(await leftovers()).toEqual([]);
  expect(git(dir, 'worktree', 'list', '--porcelain')).not.toContain('proof-1');
});

it('removed with folderLater: git forgets it at once, the folder goes in the background, settle waits for it', async () => {
  const ws = bindWorkspace(gws);
  const at = path.join(root, 'proof-1');
  const proof = await ws.addWorktree(at, head);
  // Enough files that their removal is still under way when the call returns.
  for (let i = 0; i < 5000; i++) writeFileSync(path.join(proof.dir, `junk-${i}.txt`), 'x');
  await ws.removeWorktree(at, { folderLater: true });
  expect(existsSync(at)).toBe(true);
  expect(await readdir(path.join(dir, '.git', 'worktrees')).catch(() => [] as string[])).toEqual([]);
  await ws.settle!();
  expect(await leftovers()).toEqual([]);
  expect(git(dir, 'worktree', 'list', '--porcelain')).not.toContain('proof-1');
});

it("a proof of an experiment's attempt (a worktree's own workspace) is settled by the repository's run end too", async () => {
  // An attempt's proof removes its tree through the attempt's workspace (another top, the same
  // git directory); the driver's run end waits on the repository's.
  const ws = bindWorkspace(gws);
  const attempt = await ws.addWorktree(path.join(root, 'repo-consort-t1'), head);
  const at = path.join(root, 'repo-consort-t1-consort-proof-1');
  const proof = await attempt.addWorktree(at, head);
  for (let i = 0; i < 5000; i++) writeFileSync(path.join(proof.dir, `junk-${i}.txt`), 'x');
  await attempt.removeWorktree(at, { folderLater: true });
  await ws.settle!();
  expect(existsSync(at)).toBe(false);
  await ws.removeWorktree(path.join(root, 'repo-consort-t1'));
  expect(await leftovers()).toEqual([]);
});

it('is hidden from isolated commands until its proof takes it (bubblewrap), then shown', async () => {
  const ws = bindWorkspace(gws);
  const at = path.join(root, 'proof-1');
  await ws.prepareWorktree!(at, base);
  const pinned = process.env.CONSORT_ISOLATION;
  process.env.CONSORT_ISOLATION = 'bwrap';
  const write = () =>
    localProcessRunner.run({
      command: `echo "listed: $(ls -A ${at} | tr '\\n' ' ')"; echo planted 2>/dev/null > ${at}/src/sum.js; echo done`,
      cwd: root,
      env: childEnv(),
      isolate: true,
      timeoutMs: 20_000,
      maxOutputBytes: 10_000,
    });
  try {
    const during = await write();
    // An empty folder in its place: nothing listed, nothing to write into.
    expect(during.output.split('\n')[0]).toBe('listed: ');
    expect(during.output).toContain('done');
    const proof = await ws.addWorktree(at, head);
    expect(await readFile(path.join(proof.dir, 'src', 'sum.js'), 'utf8')).toBe('export const sum = (a, b) => b + a;\n');
    // Taken: the proof's suite sees it.
    expect((await write()).output).toMatch(/^listed: .*src/);
    expect(await readFile(path.join(proof.dir, 'src', 'sum.js'), 'utf8')).toBe('planted\n');
  } finally {
    if (pinned === undefined) delete process.env.CONSORT_ISOLATION;
    else process.env.CONSORT_ISOLATION = pinned;
    await ws.removeWorktree(at);
  }
});
