/**
 * A proof's worktree made ahead of its proof (src/git/prepared-worktree.ts), attacked from the turn
 * it is made during: the folder's name is in the repository's parent folder from the turn's start
 * (under bubblewrap an empty tmpfs covers it, but its name is listed), so anything the proof derives
 * from that name is the agent's to plant.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { childEnv } from '../../src/core/child-env.js';
import { bindWorkspace } from '../../src/git/local-workspace.js';
import { openWorkspace, workspaceHead, type GitWorkspace } from '../../src/git/workspace.js';
import { proofTrees, snapshotDependencies, type Dependencies } from '../../src/lanes/tdd/clean-tree.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { git, PATCHED_RUNNER, proveHead, sumRepo } from '../helpers/sum-repo.js';

let dir: string;
let outside: string;
let ws: GitWorkspace;
let deps: Dependencies;
const pinned = process.env.CONSORT_ISOLATION;

beforeEach(async () => {
  dir = await sumRepo('consort-prepared-proof-');
  outside = await mkdtemp(path.join(os.tmpdir(), 'consort-outside-'));
  ws = await openWorkspace(dir);
  deps = await snapshotDependencies(bindWorkspace(ws), localProcessRunner);
});

afterEach(async () => {
  if (pinned === undefined) delete process.env.CONSORT_ISOLATION;
  else process.env.CONSORT_ISOLATION = pinned;
  await deps?.dispose();
  for (const name of await readdir(path.dirname(dir)))
    if (name.startsWith(`${path.basename(dir)}-consort-`))
      await rm(path.join(path.dirname(dir), name), { recursive: true, force: true });
  await rm(dir, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

/** The agent's turn: a shell command under bubblewrap, started after the proof's worktree was begun. */
async function agentTurn(command: string): Promise<string> {
  process.env.CONSORT_ISOLATION = 'bwrap';
  const r = await localProcessRunner.run({
    command,
    cwd: dir,
    env: childEnv(),
    isolate: true,
    timeoutMs: 20_000,
    maxOutputBytes: 10_000,
  });
  return r.output;
}

/** The proof, through the same port that began its worktree (as the driver's ctx.ws). */
const proveWith = (port: ReturnType<typeof bindWorkspace>, tree: string | undefined) =>
  proveHead(dir, ws, deps, { port, ...(tree ? { tree } : {}) });

it("an agent that plants the proof's dependency copy next to the folder it sees listed: the proof runs the pristine install", async () => {
  const port = bindWorkspace(ws);
  const trees = proofTrees(port);
  process.env.CONSORT_ISOLATION = 'bwrap';
  trees.prepare(await workspaceHead(ws));
  await writeFile(path.join(outside, 'run.mjs'), PATCHED_RUNNER);
  // The agent lists the repository's parent folder, finds the prepared folder's name and plants
  // `<name>-deps/node_modules` with a runner that reports green.
  const said = await agentTurn(
    `for d in ../${path.basename(dir)}-consort-proof-*; do mkdir -p "$d-deps/node_modules/runner" && cp ${outside}/run.mjs "$d-deps/node_modules/runner/run.mjs" && echo "planted $d-deps"; done`,
  );
  expect(said).toContain('planted');
  const tree = trees.take();
  const { outcome } = await proveWith(port, tree);
  // The commit's test fails on the committed bug: a green here is the planted runner's report.
  expect(outcome).toMatchObject({ kind: 'ran', exitCode: 1 });
  expect(outcome.kind === 'ran' && outcome.tests.map((t) => `${t.id} ${t.state}`)).toEqual(['test::adds failed']);
}, 60_000);

it('a symlink planted at that name: the proof copies, chmods and removes nothing through it', async () => {
  const port = bindWorkspace(ws);
  const trees = proofTrees(port);
  process.env.CONSORT_ISOLATION = 'bwrap';
  trees.prepare(await workspaceHead(ws));
  await mkdir(path.join(outside, 'kept'), { mode: 0o555 });
  await writeFile(path.join(outside, 'kept', 'file'), 'mine\n');
  const said = await agentTurn(
    `for d in ../${path.basename(dir)}-consort-proof-*; do ln -s ${outside} "$d-deps" && echo "planted $d-deps"; done`,
  );
  expect(said).toContain('planted');
  const { outcome } = await proveWith(port, trees.take());
  expect(outcome).toMatchObject({ kind: 'ran', exitCode: 1 });
  // Nothing of the proof's was written there, and its modes are as they were.
  expect((await readdir(outside)).sort()).toEqual(['kept']);
  expect((await stat(path.join(outside, 'kept'))).mode & 0o777).toBe(0o555);
  expect(await readFile(path.join(outside, 'kept', 'file'), 'utf8')).toBe('mine\n');
}, 60_000);

it("without bubblewrap, an agent that rewrites the worktree's registration while git makes it: the conductor's git never runs its filter", async () => {
  // A project big enough that git's checkout of the worktree takes a moment (as any real one's does).
  await mkdir(path.join(dir, 'many'));
  for (let i = 0; i < 2000; i++) await writeFile(path.join(dir, 'many', `f${i}.txt`), `file ${i}\n`);
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'many');
  // The agent's common directory: the repository's objects, and a smudge filter for every file.
  const evil = path.join(outside, 'evil.git');
  const ran = path.join(outside, 'filter-ran');
  await git(outside, 'init', '-q', '--bare', evil);
  await writeFile(path.join(evil, 'objects', 'info', 'alternates'), `${path.join(dir, '.git', 'objects')}\n`);
  await writeFile(path.join(evil, 'info', 'attributes'), '* filter=x\n');
  await git(evil, 'config', 'filter.x.smudge', `sh -c 'echo ran >> ${ran}; cat'`);
  process.env.CONSORT_ISOLATION = 'unshare';
  // The turn: under unshare the agent can write .git, and watches for a worktree's registration.
  const agent = localProcessRunner.run({
    command: `end=$(($(date +%s) + 3)); while [ "$(date +%s)" -lt "$end" ]; do set -- ${dir}/.git/worktrees/*/commondir; if [ -s "$1" ]; then echo ${evil} > "$1"; echo rewrote; exit 0; fi; done; echo none`,
    cwd: dir,
    env: childEnv(),
    isolate: true,
    timeoutMs: 20_000,
    maxOutputBytes: 10_000,
  });
  const port = bindWorkspace(ws);
  const trees = proofTrees(port);
  trees.prepare(await workspaceHead(ws));
  await agent; // the turn ends: nothing of the agent's runs on
  const { outcome } = await proveWith(port, trees.take());
  expect(outcome).toMatchObject({ kind: 'ran', exitCode: 1 });
  expect(await readFile(ran, 'utf8').catch(() => '')).toBe('');
}, 60_000);

it('an agent under bubblewrap, run as root, can neither uncover the folder begun ahead nor make .git writable again', async () => {
  const port = bindWorkspace(ws);
  const at = `${dir}-consort-proof-ahead`;
  process.env.CONSORT_ISOLATION = 'bwrap';
  await port.prepareWorktree!(at, await workspaceHead(ws));
  const gitDir = path.join(dir, '.git');
  const said = await localProcessRunner.run({
    command: [
      `umount ${at} 2>/dev/null; echo "listed: $(ls -A ${at} | tr '\\n' ' ')"`,
      `umount ${gitDir} 2>/dev/null || mount -o remount,rw,bind ${gitDir} 2>/dev/null; touch ${gitDir}/planted 2>/dev/null && echo wrote`,
      'echo done',
    ].join('; '),
    cwd: dir,
    env: childEnv(),
    isolate: true,
    readOnly: [gitDir],
    timeoutMs: 20_000,
    maxOutputBytes: 10_000,
  });
  expect(said.output).toContain('done');
  expect(said.output.split('\n')[0]).toBe('listed: ');
  expect(said.output).not.toContain('wrote');
  await expect(stat(path.join(gitDir, 'planted'))).rejects.toThrow(/ENOENT/);
  await port.removeWorktree(at);
}, 60_000);
