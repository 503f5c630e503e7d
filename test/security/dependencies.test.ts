/**
 * Dependencies from the lockfile: with an npm lockfile, proofs run with the install Consort keeps
 * for that lockfile in the repository's git directory (src/lanes/tdd/clean-tree.ts), not with
 * whatever the workspace's ignored `node_modules` holds at a run's start. The cheat: a scripted
 * `command` agent patches the suite's runner in the workspace's `node_modules` during one run;
 * the next run's proof must still run the real runner — with the same lockfile, and after the
 * user changes the lockfile (an unchanged package is taken from the kept install, a changed one
 * from the workspace). An agent that rewrites npm's own record to make its install look new has
 * the run refused.
 */
import { mkdir, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bindWorkspace } from '../../src/git/local-workspace.js';
import { openWorkspace, type GitWorkspace } from '../../src/git/workspace.js';
import { snapshotDependencies, type Dependencies } from '../../src/lanes/tdd/clean-tree.js';
import { localProcessRunner } from '../../src/process/runner.js';
import {
  FORGED,
  PATCHED_RUNNER,
  proveHead,
  RUNNER,
  sumRepo,
  testStates,
  driverGreenTurn,
} from '../helpers/sum-repo.js';
import { execFileAsync } from '../helpers/exec-file.js';

type Packages = Record<string, { version: string; resolved: string; integrity: string }>;
const RUNNER_1 = { version: '1.0.0', resolved: 'file:vendor/runner-1.0.0.tgz', integrity: 'sha512-runner1' };

/** package-lock.json, and npm's own record of the install (node_modules/.package-lock.json). */
async function lockfiles(packages: Packages, installed: Packages = packages): Promise<void> {
  const lock = (p: Packages) =>
    `${JSON.stringify({ name: 'app', lockfileVersion: 3, requires: true, packages: { '': { name: 'app' }, ...p } }, null, 2)}\n`;
  await writeFile(path.join(dir, 'package-lock.json'), lock(packages));
  await writeFile(path.join(dir, 'node_modules', '.package-lock.json'), lock(installed));
}

const exec = execFileAsync;

let dir: string;
let ws: GitWorkspace;
const runs: Dependencies[] = [];

beforeEach(async () => {
  dir = await sumRepo('consort-deps-', {
    suiteCommand: 'node node_modules/.bin/runner',
    binLink: true,
    packageName: 'app',
    before: async (d) => {
      dir = d; // lockfiles() writes into it
      await lockfiles({ 'node_modules/runner': RUNNER_1 });
    },
  });
  ws = await openWorkspace(dir);
});

afterEach(async () => {
  for (const d of runs.splice(0)) await d.dispose();
  await rm(dir, { recursive: true, force: true });
});

/** A run's start: what its proofs install from. */
async function startRun(): Promise<Dependencies> {
  const deps = await snapshotDependencies(bindWorkspace(ws), localProcessRunner);
  runs.push(deps);
  return deps;
}

const proveAtHead = async (deps: Dependencies) => testStates(await proveHead(dir, ws, deps));

/** The cheating driver's turn: the runner in the workspace's node_modules now reports green, and .bin points at a copy of it. */
async function cheatingTurn(deps: Dependencies): Promise<void> {
  const script = `cd ${JSON.stringify(dir)}
cat > node_modules/runner/run.mjs <<'EOF'
${PATCHED_RUNNER}EOF
cp node_modules/runner/run.mjs node_modules/evil.mjs
ln -sf ../evil.mjs node_modules/.bin/runner`;
  const result = await driverGreenTurn(dir, bindWorkspace(ws), deps, script);
  expect(result.exit).toEqual({ kind: 'done' });
  // The attack is real: in the workspace the patched runner "passes".
  await exec(process.execPath, ['node_modules/.bin/runner'], { cwd: dir });
  expect(await readFile(path.join(dir, 'junit.xml'), 'utf8')).toBe(FORGED);
}

it("an agent's patch to an ignored dependency in one run does not reach the next run's proofs (same lockfile)", async () => {
  const first = await startRun();
  expect(first.root.startsWith(path.join(ws.gitDir, 'consort', 'dependencies'))).toBe(true);
  await cheatingTurn(first);
  expect(await proveAtHead(first)).toEqual(['test::adds failed']);
  await first.dispose();
  // The next run: the same lockfile, so the install kept for it, not the workspace's patched one.
  const second = await startRun();
  expect(second.root).toBe(first.root);
  expect(await readFile(path.join(second.links.get('node_modules')!, 'runner', 'run.mjs'), 'utf8')).toBe(RUNNER);
  expect(await proveAtHead(second)).toEqual(['test::adds failed']);
}, 60_000);

it('after a lockfile change, unchanged packages come from the kept install and changed ones from the workspace', async () => {
  const first = await startRun();
  await cheatingTurn(first);
  await first.dispose();
  // The user adds a dependency (npm install other): both lockfiles change; runner is the same package.
  await mkdir(path.join(dir, 'node_modules', 'other'));
  await writeFile(path.join(dir, 'node_modules', 'other', 'index.js'), 'export default 1;\n');
  const OTHER = { version: '2.0.0', resolved: 'file:vendor/other-2.0.0.tgz', integrity: 'sha512-other2' };
  await lockfiles({ 'node_modules/other': OTHER, 'node_modules/runner': RUNNER_1 });
  const second = await startRun();
  expect(second.root).not.toBe(first.root);
  const kept = second.links.get('node_modules')!;
  expect(await readFile(path.join(kept, 'runner', 'run.mjs'), 'utf8')).toBe(RUNNER);
  expect(await readlink(path.join(kept, '.bin', 'runner'))).toBe('../runner/run.mjs');
  expect(await readFile(path.join(kept, 'other', 'index.js'), 'utf8')).toBe('export default 1;\n');
  expect(await proveAtHead(second)).toEqual(['test::adds failed']);
  // A new version of runner itself (npm installed it): the workspace's files are the install now.
  const RUNNER_2 = { version: '2.0.0', resolved: 'file:vendor/runner-2.0.0.tgz', integrity: 'sha512-runner2' };
  await writeFile(path.join(dir, 'node_modules', 'runner', 'run.mjs'), `// 2.0.0\n${RUNNER}`);
  await symlink('../runner/run.mjs', path.join(dir, 'node_modules', '.bin', 'runner2'));
  await lockfiles({ 'node_modules/other': OTHER, 'node_modules/runner': RUNNER_2 });
  const third = await startRun();
  expect(await readFile(path.join(third.links.get('node_modules')!, 'runner', 'run.mjs'), 'utf8')).toBe(
    `// 2.0.0\n${RUNNER}`,
  );
  // Each kept install is a whole node_modules: three per runtime at most, the ones used last.
  await lockfiles({ 'node_modules/runner': RUNNER_2 });
  await startRun();
  const shelf = await readdir(path.dirname(first.root));
  expect(shelf).toHaveLength(3);
  expect(shelf).not.toContain(path.basename(first.root));
  expect(shelf).toContain(path.basename(second.root));
}, 60_000);

it("an agent that rewrites npm's record of the install (to make it look new) has the run refused", async () => {
  const first = await startRun();
  await cheatingTurn(first);
  await first.dispose();
  await lockfiles(
    { 'node_modules/runner': RUNNER_1 },
    { 'node_modules/runner': { ...RUNNER_1, integrity: 'sha512-patched' } },
  );
  await expect(startRun()).rejects.toThrow(/node_modules is not the install package-lock\.json describes/);
}, 60_000);

it.each([
  ['without an npm lockfile', () => rm(path.join(dir, 'package-lock.json'))],
  // The Action's job after switching to a pull request whose lockfile changed: nothing kept yet.
  [
    "with an install that is not the lockfile's and none kept yet",
    () => lockfiles({ 'node_modules/runner': { ...RUNNER_1, version: '1.0.1' } }, { 'node_modules/runner': RUNNER_1 }),
  ],
])(
  '%s, the copy is taken from the workspace at the run start (as before)',
  async (_what, arrange) => {
    await arrange();
    const deps = await startRun();
    expect(deps.root.startsWith(`${ws.top}-consort-deps-`)).toBe(true);
    expect(await proveAtHead(deps)).toEqual(['test::adds failed']);
  },
  60_000,
);
