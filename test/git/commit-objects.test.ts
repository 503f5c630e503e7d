/**
 * The conductor's commit written without `git commit` (src/git/commit-objects.ts) must be the
 * commit git would have made from the same index: the same tree (`git write-tree`), the same commit
 * id for fixed dates, the same reflog lines, a repository `git fsck --strict` accepts and `git
 * status` calls clean; and wherever it cannot be sure, it leaves the commit to git.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { commitIndex, type CommitOutcome } from '../../src/git/commit-objects.js';
import { amendPaths, commitPaths, openWorkspace, workspaceHead } from '../../src/git/workspace.js';
import { execFileAsync } from '../helpers/exec-file.js';

const run = execFileAsync;
let root: string;

/** git with an allow-listed environment (the home folder the code under test reads too). */
function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
  };
  if (process.env.TZ !== undefined) base.TZ = process.env.TZ;
  return { ...base, ...extra };
}
const git = async (cwd: string, ...args: string[]): Promise<string> =>
  (await run('git', args, { cwd, env: env() })).stdout.trim();

const SECONDS = 1_800_000_000;
const DATE = { seconds: SECONDS, offset: 90 };
const GIT_DATE = { GIT_AUTHOR_DATE: `${SECONDS} +0130`, GIT_COMMITTER_DATE: `${SECONDS} +0130` };

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'consort-commit-objects-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

let n = 0;
/** A repository with one commit: nested folders, an executable, a symlink. */
async function repo(options: { init?: string[] } = {}): Promise<string> {
  const dir = path.join(root, `repo-${++n}`);
  await run('git', ['init', '-q', '-b', 'main', ...(options.init ?? []), dir], { env: env() });
  await git(dir, 'config', 'user.email', 'tëst@example.com');
  await git(dir, 'config', 'user.name', 'Tëst Üser');
  await mkdir(path.join(dir, 'src/deep/er'), { recursive: true });
  await mkdir(path.join(dir, 'docs'), { recursive: true });
  await writeFile(path.join(dir, 'src/a.js'), 'a\n');
  await writeFile(path.join(dir, 'src/a-b.js'), 'a-b\n');
  await writeFile(path.join(dir, 'src/deep/er/x.js'), 'x\n');
  await writeFile(path.join(dir, 'src/deep.js'), 'deep file beside the folder\n');
  await writeFile(path.join(dir, 'docs/gone.md'), 'gone\n');
  await writeFile(path.join(dir, 'thing'), 'a file that becomes a folder\n');
  await writeFile(path.join(dir, 'run.sh'), '#!/bin/sh\n');
  await chmod(path.join(dir, 'run.sh'), 0o755);
  await symlink('src/a.js', path.join(dir, 'link'));
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'base');
  return dir;
}

/** Edits of every kind, staged. */
async function change(dir: string): Promise<void> {
  await writeFile(path.join(dir, 'src/deep/er/x.js'), 'x changed\n');
  await writeFile(path.join(dir, 'src/deep/er/y.js'), 'y new\n');
  await mkdir(path.join(dir, 'src/new/one'), { recursive: true });
  await writeFile(path.join(dir, 'src/new/one/z.js'), 'z\n');
  await rm(path.join(dir, 'docs/gone.md'));
  await rm(path.join(dir, 'thing'));
  await mkdir(path.join(dir, 'thing'));
  await writeFile(path.join(dir, 'thing/inside.txt'), 'now a folder\n');
  await chmod(path.join(dir, 'src/a.js'), 0o755);
  await rm(path.join(dir, 'link'));
  await symlink('src/a-b.js', path.join(dir, 'link'));
  await symlink('run.sh', path.join(dir, 'link2'));
  await git(dir, 'add', '-A');
}

const looseObjects = async (dir: string): Promise<number> => {
  let count = 0;
  for (const d of await readdir(path.join(dir, '.git/objects')))
    if (/^[0-9a-f]{2}$/.test(d)) count += (await readdir(path.join(dir, '.git/objects', d))).length;
  return count;
};

async function expectHealthy(dir: string): Promise<void> {
  await git(dir, 'fsck', '--strict', '--no-dangling');
  expect(await git(dir, 'status', '--porcelain')).toBe('');
}

const committed = (o: CommitOutcome): string => {
  if (o.kind !== 'committed') throw new Error(`expected a commit, got ${JSON.stringify(o)}`);
  return o.commit;
};

it('makes the commit git makes from the same index: tree, id, reflogs, fsck, status', async () => {
  const dir = await repo();
  await git(dir, 'update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},sub`);
  await change(dir);
  const copy = `${dir}-git`;
  await cp(dir, copy, { recursive: true, verbatimSymlinks: true });
  const message = 'consort: turn  3\t(green)   \n\n\n  body line \n# not a comment with -m\nlast\n\n';

  const ws = await openWorkspace(dir);
  const before = await looseObjects(dir);
  const id = committed(await commitIndex(ws, message, { date: DATE }));
  await run('git', ['commit', '-q', '--no-verify', '-m', message], { cwd: copy, env: env(GIT_DATE) });

  expect(id).toBe(await git(copy, 'rev-parse', 'HEAD'));
  expect(await git(dir, 'rev-parse', 'HEAD')).toBe(id);
  expect(await git(dir, 'rev-parse', 'HEAD^{tree}')).toBe(await git(dir, 'write-tree'));
  expect(await git(dir, 'cat-file', '-p', 'HEAD')).toBe(await git(copy, 'cat-file', '-p', 'HEAD'));
  expect(await git(dir, 'log', '--format=%H %P %an %ae %ad %s', '--date=raw')).toBe(
    await git(copy, 'log', '--format=%H %P %an %ae %ad %s', '--date=raw'),
  );
  for (const log of ['logs/HEAD', 'logs/refs/heads/main'])
    expect(await readFile(path.join(dir, '.git', log), 'utf8')).toBe(
      await readFile(path.join(copy, '.git', log), 'utf8'),
    );
  expect(await git(dir, 'reflog', '-1', '--format=%H %gs')).toBe(`${id} commit: consort: turn 3 (green)`);
  // The new trees (root, src, src/deep, src/deep/er, src/new, src/new/one, thing) and the commit.
  expect((await looseObjects(dir)) - before).toBe(8);
  expect(await readdir(path.join(dir, '.git/refs/heads'))).toEqual(['main']);
  await expectHealthy(dir);
});

it('says there is nothing to commit when the tree is HEAD’s, and writes nothing', async () => {
  const dir = await repo();
  const ws = await openWorkspace(dir);
  const head = await git(dir, 'rev-parse', 'HEAD');
  const before = await looseObjects(dir);
  expect(await commitIndex(ws, 'nothing', { date: DATE })).toEqual({ kind: 'nothing' });
  expect(await commitPaths(ws, ['src'], 'nothing')).toBeNull();
  expect(await git(dir, 'rev-parse', 'HEAD')).toBe(head);
  expect(await looseObjects(dir)).toBe(before);
  expect(await git(dir, 'reflog', '--format=%H')).toBe(head);
});

it('commits through commitPaths with the current time as git writes it', async () => {
  const dir = await repo();
  const ws = await openWorkspace(dir);
  await writeFile(path.join(dir, 'src/a.js'), 'a2\n');
  const start = Math.floor(Date.now() / 1000);
  const id = await commitPaths(ws, ['src'], 'consort: now');
  expect(id).toBe(await git(dir, 'rev-parse', 'HEAD'));
  const [, date] = /^committer Tëst Üser <tëst@example.com> (\d+ [+-]\d{4})$/m.exec(
    await git(dir, 'cat-file', '-p', id!),
  )!;
  // The offset git itself reads from the same TZ.
  const ident = await git(dir, 'var', 'GIT_COMMITTER_IDENT');
  expect(date!.split(' ')[1]).toBe(ident.split(' ').at(-1));
  expect(Number(date!.split(' ')[0])).toBeGreaterThanOrEqual(start);
  expect(Number(date!.split(' ')[0])).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
  await expectHealthy(dir);
});

it('amends as git commit --amend --no-edit does', async () => {
  const dir = await repo();
  await writeFile(path.join(dir, 'src/a.js'), 'a2\n');
  await git(dir, 'add', '-A');
  await run('git', ['commit', '-q', '-m', 'first turn\n\nbody'], {
    cwd: dir,
    env: env({ GIT_AUTHOR_DATE: '1700000000 -0500' }),
  });
  await writeFile(path.join(dir, 'src/a.js'), 'a3\n');
  await git(dir, 'add', '-A');
  const copy = `${dir}-git`;
  await cp(dir, copy, { recursive: true, verbatimSymlinks: true });
  const ws = await openWorkspace(dir);
  const id = committed(await commitIndex(ws, '', { amend: true, date: DATE }));
  await run('git', ['commit', '-q', '--amend', '--no-edit', '--no-verify', '--allow-empty'], {
    cwd: copy,
    env: env({ GIT_COMMITTER_DATE: GIT_DATE.GIT_COMMITTER_DATE }),
  });
  expect(id).toBe(await git(copy, 'rev-parse', 'HEAD'));
  for (const log of ['logs/HEAD', 'logs/refs/heads/main'])
    expect(await readFile(path.join(dir, '.git', log), 'utf8')).toBe(
      await readFile(path.join(copy, '.git', log), 'utf8'),
    );
  // Nothing staged: amended all the same (--allow-empty), through amendPaths.
  const again = await amendPaths(ws, []);
  expect(again).toBe(await git(dir, 'rev-parse', 'HEAD'));
  expect(await git(dir, 'rev-parse', `${again}^{tree}`)).toBe(await git(dir, 'rev-parse', `${id}^{tree}`));
  await expectHealthy(dir);
});

it('commits in a linked worktree, on its branch and detached, leaving the main worktree alone', async () => {
  const dir = await repo();
  const mainHead = await git(dir, 'rev-parse', 'HEAD');
  const linked = path.join(root, `linked-${n}`);
  await git(dir, 'worktree', 'add', '-q', '-b', 'side', linked);
  await change(linked);
  const ws = await openWorkspace(linked);
  const id = committed(await commitIndex(ws, 'in the worktree', { date: DATE }));
  const tree = await git(linked, 'write-tree');
  const expected = (
    await run('git', ['commit-tree', tree, '-p', mainHead, '-m', 'in the worktree'], {
      cwd: linked,
      env: env(GIT_DATE),
    })
  ).stdout.trim();
  expect(id).toBe(expected);
  expect(await git(linked, 'rev-parse', 'HEAD')).toBe(id);
  expect(await git(dir, 'rev-parse', 'side')).toBe(id);
  expect(await git(dir, 'rev-parse', 'HEAD')).toBe(mainHead);
  expect(await git(linked, 'reflog', '-1', '--format=%H %gs', 'HEAD')).toBe(`${id} commit: in the worktree`);
  expect(await git(dir, 'reflog', '-1', '--format=%H %gs', 'side')).toBe(`${id} commit: in the worktree`);
  expect(await git(dir, 'reflog', '-1', '--format=%H', 'HEAD')).toBe(mainHead);
  await expectHealthy(linked);

  await git(linked, 'checkout', '-q', '--detach');
  await writeFile(path.join(linked, 'src/a.js'), 'detached\n');
  await git(linked, 'add', '-A');
  const detached = committed(await commitIndex(ws, 'detached', { date: DATE }));
  expect(await readFile(path.join(dir, '.git/worktrees', path.basename(linked), 'HEAD'), 'utf8')).toBe(`${detached}\n`);
  expect(await git(dir, 'rev-parse', 'side')).toBe(id);
  expect(await git(linked, 'reflog', '-1', '--format=%H %gs', 'HEAD')).toBe(`${detached} commit: detached`);
  await expectHealthy(linked);
});

it('commits on a detached HEAD and on a branch only packed-refs holds', async () => {
  const dir = await repo();
  await git(dir, 'pack-refs', '--all');
  expect(await readdir(path.join(dir, '.git/refs/heads'))).toEqual([]);
  await writeFile(path.join(dir, 'src/a.js'), 'packed\n');
  await git(dir, 'add', '-A');
  const ws = await openWorkspace(dir);
  const id = committed(await commitIndex(ws, 'on a packed branch', { date: DATE }));
  expect(await readFile(path.join(dir, '.git/refs/heads/main'), 'utf8')).toBe(`${id}\n`);
  expect(await git(dir, 'rev-parse', 'main')).toBe(id);
  await expectHealthy(dir);

  await git(dir, 'checkout', '-q', '--detach');
  await writeFile(path.join(dir, 'src/a.js'), 'detached\n');
  await git(dir, 'add', '-A');
  const detached = committed(await commitIndex(ws, 'detached', { date: DATE }));
  expect(await readFile(path.join(dir, '.git/HEAD'), 'utf8')).toBe(`${detached}\n`);
  expect(await git(dir, 'rev-parse', 'main')).toBe(id);
  expect(await git(dir, 'log', '--format=%s', '-3')).toBe('detached\non a packed branch\nbase');
  await expectHealthy(dir);
});

it('does not write again what a pack holds, and keeps reflogs as core.logAllRefUpdates says', async () => {
  const dir = await repo();
  await git(dir, 'repack', '-adq');
  await git(dir, 'prune-packed');
  // HEAD's commit in a pack: git commits.
  await writeFile(path.join(dir, 'src/a.js'), 'one\n');
  await git(dir, 'add', '-A');
  const ws = await openWorkspace(dir);
  expect(await commitIndex(ws, 'x', { date: DATE })).toEqual({
    kind: 'fallback',
    reason: 'HEAD is not a loose commit',
  });
  await git(dir, 'commit', '-qm', 'loose head');
  await git(dir, 'config', 'core.logAllRefUpdates', 'false');
  await rm(path.join(dir, '.git/logs/refs/heads/main'));
  await writeFile(path.join(dir, 'src/deep/er/x.js'), 'two\n');
  await git(dir, 'add', '-A');
  const before = await looseObjects(dir);
  committed(await commitIndex(ws, 'y', { date: DATE }));
  // root, src, src/deep, src/deep/er and the commit; docs, thing and the blobs are in the pack.
  expect((await looseObjects(dir)) - before).toBe(5);
  await expect(readFile(path.join(dir, '.git/logs/refs/heads/main'))).rejects.toThrow(/ENOENT/);
  expect((await readFile(path.join(dir, '.git/logs/HEAD'), 'utf8')).trim().split('\n')).toHaveLength(3);
  await expectHealthy(dir);
});

/** A repository with a change staged, then `make` done to it: what a commit that gives up must leave as it was. */
async function stagedThen(make: (dir: string) => Promise<unknown>) {
  const dir = await repo();
  await writeFile(path.join(dir, 'src/a.js'), 'changed\n');
  await git(dir, 'add', '-A');
  await make(dir);
  const head = await git(dir, 'rev-parse', 'HEAD');
  return { dir, head, ws: await openWorkspace(dir), before: await looseObjects(dir) };
}
describe('leaves the commit to git', () => {
  const cases: [string, (dir: string) => Promise<void>, RegExp][] = [
    ['an index of version 4', (dir) => git(dir, 'update-index', '--index-version', '4').then(), /index version 4/],
    [
      'a split index',
      (dir) => git(dir, 'update-index', '--split-index').then(),
      /index extension link|a path git would refuse/,
    ],
    [
      'a sparse index',
      (dir) => git(dir, 'sparse-checkout', 'set', '--cone', '--sparse-index', 'src').then(),
      /a sparse directory entry/,
    ],
    [
      'an unmerged entry',
      async (dir) => {
        const blob = await git(dir, 'rev-parse', 'HEAD:run.sh');
        const child = execFile('git', ['update-index', '--index-info'], { cwd: dir, env: env() });
        child.stdin!.end(`0 ${'0'.repeat(40)}\trun.sh\n100644 ${blob} 1\trun.sh\n100644 ${blob} 2\trun.sh\n`);
        await new Promise((resolve) => child.on('exit', resolve));
      },
      /unmerged entry/,
    ],
    [
      'an intent-to-add entry',
      (dir) => writeFile(path.join(dir, 'n.txt'), 'n\n').then(() => git(dir, 'add', '-N', 'n.txt').then()),
      /intent-to-add/,
    ],
    [
      'a merge in progress',
      (dir) => writeFile(path.join(dir, '.git/MERGE_HEAD'), `${'2'.repeat(40)}\n`),
      /MERGE_HEAD exists/,
    ],
    ['a ref lock', (dir) => writeFile(path.join(dir, '.git/refs/heads/main.lock'), ''), /main\.lock exists/],
    ['an index lock', (dir) => writeFile(path.join(dir, '.git/index.lock'), ''), /index\.lock exists/],
    [
      'reftable (extensions.refStorage)',
      (dir) => git(dir, 'config', 'extensions.refStorage', 'reftable').then(),
      /extensions\.refstorage is set/,
    ],
    ['core.sharedRepository', (dir) => git(dir, 'config', 'core.sharedRepository', 'group').then(), /sharedrepository/],
    ['a name git would trim', (dir) => git(dir, 'config', 'user.name', 'T. ').then(), /no plain author identity/],
  ];
  it.each(cases)('%s', async (_, make, reason) => {
    const { dir, head, ws, before } = await stagedThen(make);
    const outcome = await commitIndex(ws, 'fallback', { date: DATE });
    expect(outcome).toEqual({ kind: 'fallback', reason: expect.stringMatching(reason) });
    expect(await git(dir, 'rev-parse', 'HEAD')).toBe(head);
    expect(await looseObjects(dir)).toBe(before);
    expect((await readdir(path.join(dir, '.git'))).filter((f) => f.endsWith('.lock') && f !== 'index.lock')).toEqual(
      [],
    );
  });

  it('an index holding a file and a folder of one name (not side by side: a, a.txt, a/b)', async () => {
    const dir = await repo();
    const ws = await openWorkspace(dir);
    const head = await git(dir, 'rev-parse', 'HEAD');
    const blob = await git(dir, 'rev-parse', 'HEAD:src/a.js');
    // git update-index refuses such an entry; an agent writes the index's bytes itself.
    const entries = ['src/a', 'src/a.txt', 'src/a/b'];
    const parts: Buffer[] = [Buffer.from('DIRC'), Buffer.from([0, 0, 0, 2, 0, 0, 0, entries.length])];
    for (const name of entries) {
      const entry = Buffer.alloc(62);
      entry.writeUInt32BE(0o100644, 24);
      Buffer.from(blob, 'hex').copy(entry, 40);
      entry.writeUInt16BE(name.length, 60);
      parts.push(entry, Buffer.from(name), Buffer.alloc(8 - ((62 + name.length) % 8)));
    }
    const body = Buffer.concat(parts);
    await writeFile(path.join(dir, '.git/index'), Buffer.concat([body, createHash('sha1').update(body).digest()]));
    const before = await looseObjects(dir);
    // Not even git's: git 2.39 commits this index as a tree with `a` twice (fsck: duplicateEntries).
    expect(await commitIndex(ws, 'both', { date: DATE })).toEqual({
      kind: 'refused',
      reason: 'the index holds src/a both as a file and as a folder',
    });
    expect(await looseObjects(dir)).toBe(before);
    expect(await git(dir, 'rev-parse', 'HEAD')).toBe(head);
  });

  it('a branch packed-refs names twice: git reads the last line, so the commit’s parent is git’s', async () => {
    const dir = await repo();
    const base = await git(dir, 'rev-parse', 'HEAD');
    // The agent's commit, never judged, named first; git reads the last line (the base) and status is clean.
    const forged = await git(dir, 'commit-tree', '-m', 'approved by Grace Hopper', `${base}^{tree}`);
    await git(dir, 'pack-refs', '--all');
    await writeFile(path.join(dir, '.git/packed-refs'), `${forged} refs/heads/main\n${base} refs/heads/main\n`);
    expect(await git(dir, 'rev-parse', 'HEAD')).toBe(base);
    const ws = await openWorkspace(dir);
    expect(await workspaceHead(ws)).toBe(base);
    await writeFile(path.join(dir, 'src/a.js'), 'changed\n');
    await git(dir, 'add', '-A');
    expect(await commitIndex(ws, 'twice', { date: DATE })).toEqual({
      kind: 'fallback',
      reason: 'packed-refs names refs/heads/main more than once',
    });
    const id = await commitPaths(ws, ['src'], 'on the base');
    expect(await git(dir, 'rev-parse', `${id}^`)).toBe(base);
  });

  it('an amend of a commit whose message is not UTF-8, which amendPaths then leaves to git', async () => {
    const dir = await repo();
    // git commit would convert the byte (as Latin-1): the object is written as it is.
    const head = await git(dir, 'cat-file', 'commit', 'HEAD');
    await writeFile(
      path.join(dir, 'msg'),
      Buffer.concat([Buffer.from(`${head.split('\n\n')[0]}\n\ncaf`), Buffer.from([0xe9, 0x0a])]),
    );
    const odd = await git(dir, 'hash-object', '-t', 'commit', '-w', 'msg');
    await git(dir, 'update-ref', 'HEAD', odd);
    const ws = await openWorkspace(dir);
    expect(await commitIndex(ws, '', { amend: true, date: DATE })).toEqual({
      kind: 'fallback',
      reason: 'HEAD commit is not UTF-8',
    });
    const id = await amendPaths(ws, ['msg']);
    expect(await git(dir, 'rev-parse', 'HEAD')).toBe(id);
    expect(await git(dir, 'ls-tree', '--name-only', 'HEAD', 'msg')).toBe('msg');
    await expectHealthy(dir);
  });

  it('a lock taken while it commits: left to its holder, and nothing moved', async () => {
    const dir = await repo();
    await writeFile(path.join(dir, 'src/a.js'), 'changed\n');
    await git(dir, 'add', '-A');
    const ws = await openWorkspace(dir);
    const head = await git(dir, 'rev-parse', 'HEAD');
    // The lock appears after the first checks: another git takes it between them and the update.
    const lock = path.join(dir, '.git/refs/heads/main.lock');
    const done = commitIndex(ws, 'raced', { date: DATE });
    await writeFile(lock, 'theirs');
    const outcome = await done;
    expect(outcome.kind).toBe('fallback');
    expect(await readFile(lock, 'utf8')).toBe('theirs');
    expect(await git(dir, 'rev-parse', 'HEAD')).toBe(head);
    await expect(readFile(path.join(dir, '.git/HEAD.lock'))).rejects.toThrow(/ENOENT/);
  });

  it('a SHA-256 repository, and commitPaths still commits there through git', async () => {
    const dir = await repo({ init: ['--object-format=sha256'] });
    await writeFile(path.join(dir, 'src/a.js'), 'changed\n');
    await git(dir, 'add', '-A');
    const ws = await openWorkspace(dir);
    expect(await commitIndex(ws, 'x', { date: DATE })).toEqual({
      kind: 'fallback',
      reason: 'extensions.objectformat is set',
    });
    const id = await commitPaths(ws, ['src'], 'through git');
    // As before this module: the summary line's id, which core.abbrev=40 cuts to 40 of its 64 digits.
    expect((await git(dir, 'rev-parse', 'HEAD')).startsWith(id!)).toBe(true);
    expect(await git(dir, 'log', '-1', '--format=%s')).toBe('through git');
    await expectHealthy(dir);
  });

  it('an index version 4: commitPaths commits through git, and "nothing to commit" stays null', async () => {
    const dir = await repo();
    await git(dir, 'update-index', '--index-version', '4');
    const ws = await openWorkspace(dir);
    expect(await commitPaths(ws, ['src'], 'nothing')).toBeNull();
    await writeFile(path.join(dir, 'src/a.js'), 'v4\n');
    const id = await commitPaths(ws, ['src'], 'v4');
    expect(await git(dir, 'log', '-1', '--format=%H %s')).toBe(`${id} v4`);
    await expectHealthy(dir);
  });
});

describe('refuses to commit at all (git would write through it)', () => {
  const cases: [string, (dir: string) => Promise<void>, RegExp][] = [
    [
      'a folder of the refs that is a symlink',
      async (dir) => {
        const outside = path.join(root, `outside-${n}`);
        await mkdir(outside);
        await git(dir, 'checkout', '-q', '-b', 'feature/x');
        await cp(path.join(dir, '.git/refs/heads/feature'), outside, { recursive: true });
        await rm(path.join(dir, '.git/refs/heads/feature'), { recursive: true });
        await symlink(outside, path.join(dir, '.git/refs/heads/feature'));
      },
      /refs\/heads\/feature is a symbolic link/,
    ],
    [
      'a reflog folder that is a symlink',
      async (dir) => {
        const outside = path.join(root, `outside-logs-${n}`);
        await cp(path.join(dir, '.git/logs/refs'), outside, { recursive: true });
        await rm(path.join(dir, '.git/logs/refs'), { recursive: true });
        await symlink(outside, path.join(dir, '.git/logs/refs'));
      },
      /logs\/refs is a symbolic link/,
    ],
  ];
  it.each(cases)('%s', async (_, make, reason) => {
    const { dir, head, ws, before } = await stagedThen(make);
    expect(await commitIndex(ws, 'refused', { date: DATE })).toEqual({
      kind: 'refused',
      reason: expect.stringMatching(reason),
    });
    await expect(commitPaths(ws, ['src'], 'refused')).rejects.toThrow(reason);
    expect(await git(dir, 'rev-parse', 'HEAD')).toBe(head);
    expect(await looseObjects(dir)).toBe(before);
  });
});
