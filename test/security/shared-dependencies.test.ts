/**
 * Under bubblewrap a proof's `node_modules` is the pristine install itself, bound read-only at the
 * proof's own path (src/lanes/tdd/clean-tree.ts), not a copy of it: on ext4 a copy is a full one
 * (13 s for this repository's 27,000 files). What the copy gave must still hold: the suite cannot
 * change the install (through the proof's path or the pristine's own, as root too), its cache folders
 * are writable and its own (what one proof writes there, the next never reads), and nothing is left.
 * Elsewhere (no binds) each proof still gets a copy.
 */
import { readdir, readFile, readlink, rm } from 'node:fs/promises';
import path from 'node:path';
import { childEnv } from '../../src/core/child-env.js';
import { bindWorkspace } from '../../src/git/local-workspace.js';
import { openWorkspace, workspaceHead, type GitWorkspace } from '../../src/git/workspace.js';
import { cleanTree, snapshotDependencies, type Dependencies } from '../../src/lanes/tdd/clean-tree.js';
import { createProcessRunner } from '../../src/process/runner.js';
import { RUNNER, sumRepo } from '../helpers/sum-repo.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
const bwrap = createProcessRunner({ isolation: 'bwrap' });
const sweep = createProcessRunner({ isolation: 'sweep' });

let dir: string;
let ws: GitWorkspace;
let deps: Dependencies;

beforeEach(async () => {
  dir = await sumRepo('consort-shared-deps-', { suiteCommand: 'node node_modules/runner/run.mjs' });
  ws = await openWorkspace(dir);
  deps = await snapshotDependencies(bindWorkspace(ws), bwrap);
});

afterEach(async () => {
  await deps.dispose();
  await rm(dir, { recursive: true, force: true });
});

/** Shell text that tries each write and prints `<what> <outcome>` lines. */
const tryWrites = (pristine: string) =>
  [
    `node -e "`,
    `const fs=require('fs');`,
    `console.log('cache-before', fs.readdirSync('node_modules/.cache').join(','));`,
    `for (const [what,f] of [['tree','node_modules/runner/run.mjs'],['pristine','${pristine}/runner/run.mjs'],['cache','node_modules/.cache/poison']]) {`,
    `try { fs.writeFileSync(f,'x'); console.log(what,'written') } catch (e) { console.log(what,e.code) } }`,
    `console.log('runner', fs.readFileSync('node_modules/runner/run.mjs','utf8').length);`,
    `"`,
  ].join('');

it('bubblewrap: the pristine install shown read-only at the proof, caches its own, no copy', async () => {
  const pristine = deps.links.get('node_modules')!;
  const head = await workspaceHead(ws);
  const run = async (): Promise<string> => {
    const tree = await cleanTree(bindWorkspace(ws), head, deps, ['junit.xml'], bwrap);
    try {
      // Not a copy: the proof's own folder holds only the mount point and the caches' copies.
      const shown = await readlink(path.join(tree.ws.dir, 'node_modules'));
      expect(tree.binds[0]).toEqual({ source: pristine, target: shown });
      expect(await readdir(shown)).toEqual([]);
      const r = await bwrap.run({
        command: tryWrites(pristine),
        cwd: tree.ws.dir,
        env: childEnv(),
        isolate: true,
        readOnly: tree.readOnly,
        writable: tree.writable,
        binds: tree.binds,
        timeoutMs: 20_000,
        maxOutputBytes: 10_000,
      });
      expect(r.exitCode).toBe(0);
      return r.output;
    } finally {
      await tree.dispose();
    }
  };
  const first = await run();
  expect(first).toContain('tree EROFS');
  expect(first).toContain('pristine EROFS'); // root included: the pristine's own path is bound read-only too
  expect(first).toContain('cache written');
  expect(first).toContain(`runner ${RUNNER.length}`);
  // The next proof's cache is a fresh copy of the pristine's: the poison is not there.
  const second = await run();
  expect(second).toMatch(/^cache-before $/m);
  expect(await readFile(path.join(pristine, 'runner', 'run.mjs'), 'utf8')).toBe(RUNNER);
  // Nothing left next to the repository.
  const left = (await readdir(path.dirname(dir))).filter((f) => f.startsWith(`${path.basename(dir)}-consort-proof`));
  expect(left).toEqual([]);
}, 60_000);

it('without bubblewrap each proof gets a copy, and binds are refused rather than ignored', async () => {
  const head = await workspaceHead(ws);
  const tree = await cleanTree(bindWorkspace(ws), head, deps, ['junit.xml'], sweep);
  try {
    expect(tree.binds).toEqual([]);
    const copied = path.join(await readlink(path.join(tree.ws.dir, 'node_modules')), 'runner', 'run.mjs');
    expect(copied).not.toContain(deps.root);
    expect(await readFile(copied, 'utf8')).toBe(RUNNER);
    await expect(
      sweep.run({
        command: 'true',
        cwd: tree.ws.dir,
        env: childEnv(),
        isolate: true,
        binds: [{ source: dir, target: tree.ws.dir }],
        maxOutputBytes: 1000,
      }),
    ).rejects.toThrow(/need bubblewrap/);
  } finally {
    await tree.dispose();
  }
  await exec('git', ['-C', dir, 'worktree', 'prune']);
}, 60_000);

it('the pristine install holds the cache folders a proof binds its own over', async () => {
  const pristine = deps.links.get('node_modules')!;
  expect((await readdir(pristine)).filter((f) => f.startsWith('.'))).toEqual(
    expect.arrayContaining(['.cache', '.vite']),
  );
});
