/**
 * What an agent whose turn ran before the conductor's commit can leave in the repository for that
 * commit (src/git/commit-objects.ts, and `git commit` where it gives up) to trip over, without
 * bubblewrap: nothing `.git`'s guard compares (src/git/guard.ts), only the folders and files a
 * commit writes — reflogs, loose-object folders, ref folders, `COMMIT_EDITMSG` — and the index.
 *
 * - A reflog hard-linked to a file outside the repository: the in-process commit appended its line
 *   there (O_NOFOLLOW does not see a hard link).
 * - A reflog, an object folder, a ref folder or `COMMIT_EDITMSG` that is a symlink: the in-process
 *   commit gave up on it and `git commit` wrote through it (appended a line, wrote the objects,
 *   created the ref, overwrote the file with the message). Forcing that fallback is one index
 *   rewrite away (version 4), so each is played with and without it.
 * - A new file staged and then deleted from the working tree: `git status` says `AD`, which the
 *   scope check took for "nothing changed", and the next commit carried the staged file.
 *
 * Each now stops the commit (the run), with nothing written outside and HEAD where it was; the
 * staged file is unstaged before the scope check.
 */
import { link, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { amendPaths, changesSince, commitPaths, openWorkspace } from '../../src/git/workspace.js';
import { execFileAsync } from '../helpers/exec-file.js';

const run = execFileAsync;
let root: string;

function env(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, LC_ALL: 'C', GIT_CONFIG_NOSYSTEM: '1' };
}
const git = async (cwd: string, ...args: string[]): Promise<string> =>
  (await run('git', args, { cwd, env: env() })).stdout.trim();

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'consort-conductor-commit-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

let n = 0;
async function repo(): Promise<{ dir: string; victim: string; outside: string }> {
  const dir = path.join(root, `repo-${++n}`);
  await run('git', ['init', '-q', '-b', 'main', dir], { env: env() });
  await git(dir, 'config', 'user.email', 'a@example.com');
  await git(dir, 'config', 'user.name', 'A B');
  await mkdir(path.join(dir, 'src'));
  await writeFile(path.join(dir, 'src/a.js'), 'a\n');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'base');
  const victim = path.join(root, `victim-${n}`);
  await writeFile(victim, 'precious\n');
  const outside = path.join(root, `outside-${n}`);
  await mkdir(outside);
  return { dir, victim, outside };
}

/** The index rewritten as version 4: the in-process commit leaves such a commit to `git commit`. */
const forceFallback = (dir: string): Promise<void> => git(dir, 'update-index', '--index-version', '4').then();

const plants: [string, (r: { dir: string; victim: string; outside: string }) => Promise<void>][] = [
  [
    'logs/HEAD hard-linked to a file outside',
    async ({ dir, victim }) => {
      await rm(path.join(dir, '.git/logs/HEAD'));
      await link(victim, path.join(dir, '.git/logs/HEAD'));
    },
  ],
  [
    "the branch's reflog hard-linked to a file outside",
    async ({ dir, victim }) => {
      await rm(path.join(dir, '.git/logs/refs/heads/main'));
      await link(victim, path.join(dir, '.git/logs/refs/heads/main'));
    },
  ],
  [
    "the branch's reflog a symlink to a file outside",
    async ({ dir, victim }) => {
      await rm(path.join(dir, '.git/logs/refs/heads/main'));
      await symlink(victim, path.join(dir, '.git/logs/refs/heads/main'));
    },
  ],
  [
    'every loose-object folder a symlink to a folder outside',
    async ({ dir, outside }) => {
      for (let i = 0; i < 256; i++) {
        const name = i.toString(16).padStart(2, '0');
        const folder = path.join(dir, '.git/objects', name);
        await rm(folder, { recursive: true, force: true });
        await symlink(outside, folder);
      }
    },
  ],
  [
    'COMMIT_EDITMSG a symlink to a file outside',
    async ({ dir, victim }) => {
      await rm(path.join(dir, '.git/COMMIT_EDITMSG'), { force: true });
      await symlink(victim, path.join(dir, '.git/COMMIT_EDITMSG'));
    },
  ],
  [
    'COMMIT_EDITMSG hard-linked to a file outside',
    async ({ dir, victim }) => {
      await rm(path.join(dir, '.git/COMMIT_EDITMSG'), { force: true });
      await link(victim, path.join(dir, '.git/COMMIT_EDITMSG'));
    },
  ],
  [
    "the branch's ref folder a symlink to a folder outside",
    async ({ dir, outside }) => {
      await git(dir, 'checkout', '-q', '-b', 'feature/x');
      // The branch's value in packed-refs, its loose folder a link: git makes `feature/x.lock` through it.
      await git(dir, 'pack-refs', '--all');
      await rm(path.join(dir, '.git/refs/heads/feature'), { recursive: true, force: true });
      await symlink(outside, path.join(dir, '.git/refs/heads/feature'));
      await rm(path.join(dir, '.git/logs/refs/heads/feature'), { recursive: true });
    },
  ],
];

describe.each([
  ['in-process', false],
  ['forced to git commit', true],
])('a commit (%s) writes nothing through', (_, fallback) => {
  it.each(plants)('%s', async (__, plant) => {
    const r = await repo();
    const { dir, victim, outside } = r;
    await plant(r);
    if (fallback) await forceFallback(dir);
    const ws = await openWorkspace(dir);
    const head = await git(dir, 'rev-parse', 'HEAD');
    await writeFile(path.join(dir, 'src/a.js'), 'changed\n');
    await expect(commitPaths(ws, ['src'], 'the conductor')).rejects.toThrow(/link/);
    await expect(amendPaths(ws, ['src'])).rejects.toThrow(/link/);
    expect(await readFile(victim, 'utf8')).toBe('precious\n');
    expect(await readdir(outside)).toEqual([]);
    expect(await git(dir, 'rev-parse', 'HEAD')).toBe(head);
  });
});

it("an agent's own commit is undone only after the same look (git reset appends to the reflogs)", async () => {
  const { dir, victim } = await repo();
  const ws = await openWorkspace(dir);
  const base = await git(dir, 'rev-parse', 'HEAD');
  await writeFile(path.join(dir, 'src/a.js'), 'the agent commits\n');
  await git(dir, 'commit', '-qam', 'the agent');
  await rm(path.join(dir, '.git/logs/HEAD'));
  await link(victim, path.join(dir, '.git/logs/HEAD'));
  await expect(changesSince(ws, base)).rejects.toThrow(/hard-linked/);
  expect(await readFile(victim, 'utf8')).toBe('precious\n');
});

it('an honest repository still commits, in-process and through git', async () => {
  const { dir } = await repo();
  const ws = await openWorkspace(dir);
  await writeFile(path.join(dir, 'src/a.js'), 'changed\n');
  const id = await commitPaths(ws, ['src'], 'in-process');
  expect(await git(dir, 'rev-parse', 'HEAD')).toBe(id);
  await forceFallback(dir);
  await writeFile(path.join(dir, 'src/a.js'), 'again\n');
  const again = await commitPaths(ws, ['src'], 'through git');
  expect(await git(dir, 'log', '--format=%H %s', '-1')).toBe(`${again} through git`);
  await git(dir, 'fsck', '--strict', '--no-dangling');
});

it('a new file staged and deleted again is unstaged, not committed with the next commit', async () => {
  const { dir } = await repo();
  const ws = await openWorkspace(dir);
  const base = await git(dir, 'rev-parse', 'HEAD');
  // The agent's turn: a test staged, then removed from the working tree (git status: AD).
  await mkdir(path.join(dir, 'test'));
  await writeFile(path.join(dir, 'test/planted.test.js'), 'it("passes", () => {});\n');
  await git(dir, 'add', 'test/planted.test.js');
  await rm(path.join(dir, 'test'), { recursive: true });
  await writeFile(path.join(dir, 'src/a.js'), 'the turn\n');

  expect(await changesSince(ws, base)).toEqual([{ path: 'src/a.js', status: 'modified' }]);
  await commitPaths(ws, ['src/a.js'], 'the turn');
  expect(await git(dir, 'ls-tree', '-r', '--name-only', 'HEAD')).toBe('src/a.js');
  expect(await git(dir, 'status', '--porcelain')).toBe('');
});
