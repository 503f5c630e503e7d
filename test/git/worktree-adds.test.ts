/**
 * Worktrees of one repository (src/git/workspace.ts): adds run side by side — a proof's tree and
 * RED's tree beside it are made at once, not one after the other — while a removal runs alone.
 * Seen through a checkout filter that every add runs in its own new tree: it notes that tree's
 * start, then waits (a few seconds at most) until every add it expects has started too.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { addWorktree, openWorkspace, removeWorktree, type GitWorkspace } from '../../src/git/workspace.js';

let root: string;
let marks: string;
let ws: GitWorkspace;
let base: string;

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' }).trim();

/** The filter: `<marks>/<tree>` on start; then, after up to 4 s for `want` marks, how many it saw. */
async function waitingFilter(want: number): Promise<void> {
  const script = path.join(root, 'smudge.sh');
  await writeFile(
    script,
    [
      '#!/bin/sh',
      `touch "${marks}/$(basename "$PWD")"`,
      'i=0',
      `while [ "$(ls "${marks}" | wc -l)" -lt ${want} ] && [ $i -lt 40 ]; do sleep 0.1; i=$((i+1)); done`,
      `ls "${marks}" | wc -l > "${root}/saw-$(basename "$PWD")"`,
      'cat',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  git(ws.top, 'config', 'filter.waits.smudge', script);
}

const saw = async (tree: string): Promise<number> =>
  Number((await readFile(path.join(root, `saw-${tree}`), 'utf8')).trim());

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'consort-worktree-adds-'));
  marks = path.join(root, 'marks');
  await mkdir(marks);
  const dir = path.join(root, 'repo');
  await mkdir(dir);
  await writeFile(path.join(dir, 'a.txt'), 'a\n');
  await writeFile(path.join(dir, '.gitattributes'), '*.txt filter=waits\n');
  git(dir, 'init', '-q');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'base');
  base = git(dir, 'rev-parse', 'HEAD');
  ws = await openWorkspace(dir);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

it('makes two trees of one repository at once, not one after the other', async () => {
  await waitingFilter(2);
  const trees = ['one', 'two'].map((t) => path.join(root, t));
  await Promise.all(trees.map((t) => addWorktree(ws, t, base)));
  // Each checkout saw the other begun: with adds one at a time the first waited for a second in vain.
  expect(await saw('one')).toBe(2);
  expect(await saw('two')).toBe(2);
  for (const t of trees) expect(await readFile(path.join(t, 'a.txt'), 'utf8')).toBe('a\n');
  expect(git(ws.top, 'worktree', 'list').split('\n')).toHaveLength(3);
});

it('starts an add queued after a removal only once the removal has ended', async () => {
  await waitingFilter(1);
  const first = path.join(root, 'first');
  await addWorktree(ws, first, base);
  await rm(path.join(marks, 'first'));
  const removed = removeWorktree(ws, first);
  const second = path.join(root, 'second');
  const added = addWorktree(ws, second, base);
  // The removal is queued first: its folder and registration are gone before the add's checkout runs.
  let removalDone = false;
  void removed.then(() => (removalDone = true));
  await added;
  expect(removalDone).toBe(true);
  expect(existsSync(first)).toBe(false);
  expect(await readdir(marks)).toEqual(['second']);
  expect(git(ws.top, 'worktree', 'list').split('\n')).toHaveLength(2);
});

it('replaces a leftover folder at the path (a crashed run) with a fresh tree', async () => {
  await waitingFilter(1);
  const tree = path.join(root, 'left');
  await mkdir(tree);
  await writeFile(path.join(tree, 'stale.txt'), 'from a crashed run\n');
  await addWorktree(ws, tree, base);
  expect(existsSync(path.join(tree, 'stale.txt'))).toBe(false);
  expect(await readFile(path.join(tree, 'a.txt'), 'utf8')).toBe('a\n');
});
