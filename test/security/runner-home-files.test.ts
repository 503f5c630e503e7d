/**
 * A proof runs what is committed, in a clean worktree, on the pristine install — but its suite's
 * tools also read their own global files in the home folder, which an agent's turn can write (the
 * sandbox shares the file system). Until 2026-12-04 a driver's GREEN turn that added
 * `node-options=--require ~/cheat.cjs` to `~/.npmrc` had every later proof's `npm test` preload its
 * module into the runner and each test process: the proof of the committed bug was green. The `.git`
 * guard now compares those files too (src/git/guard.ts, RUNNER_HOME_FILES): the turn is refused,
 * the file put back, and the proof of the bug still fails.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { checkScope } from '../../src/conductor/scope.js';
import { bindWorkspace } from '../../src/git/local-workspace.js';
import { changesSince, openWorkspace, restore, workspaceHead, type GitWorkspace } from '../../src/git/workspace.js';
import { snapshotDependencies, type Dependencies } from '../../src/lanes/tdd/clean-tree.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { policy } from '../conductor/fixtures.js';
import { driverGreenTurn, FORGED, git, proveHead, sumRepo, testStates } from '../helpers/sum-repo.js';

/** Preloaded into every node process: the runner's, once it exits, leaves a forged report and exit 0. */
const CHEAT = `const { writeFileSync } = require('node:fs');
if ((process.argv[1] ?? '').endsWith('run.mjs'))
  process.on('exit', () => { writeFileSync('junit.xml', ${JSON.stringify(FORGED)}); process.exitCode = 0; });
`;
const USER_NPMRC = 'update-notifier=false\nfund=false\n';

let dir: string;
let ws: GitWorkspace;
let deps: Dependencies;
let home: string;
const pinned = process.env.HOME;

beforeEach(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'consort-runner-home-'));
  await writeFile(path.join(home, '.npmrc'), USER_NPMRC);
  process.env.HOME = home;
  dir = await sumRepo('consort-runner-home-', {
    suiteCommand: 'npm test',
    before: (d) =>
      writeFile(
        path.join(d, 'package.json'),
        `${JSON.stringify({ type: 'module', scripts: { test: 'node node_modules/runner/run.mjs' } })}\n`,
      ),
  });
  ws = await openWorkspace(dir);
  deps = await snapshotDependencies(bindWorkspace(ws), localProcessRunner);
});

afterEach(async () => {
  process.env.HOME = pinned;
  await deps?.dispose();
  await rm(dir, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
});

const proveAtHead = async () => testStates(await proveHead(dir, ws, deps));

it('the cheat is real: a ~/.npmrc node-options preload makes the proof of the bug green', async () => {
  expect(await proveAtHead()).toEqual(['test::adds failed']);
  await writeFile(path.join(home, 'cheat.cjs'), CHEAT);
  await writeFile(path.join(home, '.npmrc'), `${USER_NPMRC}node-options=--require ${path.join(home, 'cheat.cjs')}\n`);
  expect(await proveAtHead()).toEqual(['test::adds passed']);
}, 120_000);

it("a driver's turn that writes ~/.npmrc is refused, the file put back, and the bug's proof still fails", async () => {
  const port = bindWorkspace(ws);
  const base = await workspaceHead(ws);
  const guard = await port.guardGit();
  const result = await driverGreenTurn(
    dir,
    port,
    deps,
    `cat > ~/cheat.cjs <<'EOF'\n${CHEAT}EOF\nprintf 'node-options=--require %s/cheat.cjs\\n' "$HOME" >> ~/.npmrc\nmkdir -p ~/.config/go && printf 'GOFLAGS=-overlay=/tmp/o.json\\n' > ~/.config/go/env\nmkdir -p ~/.config/pnpm && printf 'node-options=--require %s/cheat.cjs\\n' "$HOME" > ~/.config/pnpm/rc`,
  );
  expect(result.exit).toEqual({ kind: 'done' });
  const changes = [...(await guard.restore()), ...(await changesSince(ws, base))];
  expect(changes.map((c) => `${c.status} ${c.path}`)).toEqual([
    'added ~/.config/go/env',
    'added ~/.config/pnpm/rc',
    'modified ~/.npmrc',
  ]);
  const refused = checkScope({
    policy: policy(),
    role: 'driver',
    step: 'green',
    item: 'T1',
    changes,
    frozen: {},
    hashes: {},
  }).map((r) => r.path);
  expect(refused).toEqual(['~/.config/go/env', '~/.config/pnpm/rc', '~/.npmrc']);
  await restore(ws, base, []);
  expect(await readFile(path.join(home, '.npmrc'), 'utf8')).toBe(USER_NPMRC);
  expect(await proveAtHead()).toEqual(['test::adds failed']);
}, 120_000);

it('a proof whose suite writes ~/.npmrc (for every later proof) is broken, and the file is put back', async () => {
  await writeFile(
    path.join(dir, 'src', 'sum.js'),
    "import { appendFileSync } from 'node:fs';\nappendFileSync(process.env.HOME + '/.npmrc', 'node-options=--require /tmp/x.cjs\\n');\nexport const sum = (a, b) => a + b;\n",
  );
  await git(dir, 'commit', '-qam', 'green, and a preload for the next proof');
  const { outcome } = await proveHead(dir, ws, deps);
  expect(outcome.kind === 'broken' && outcome.reason).toBe('git-files');
  expect(await readFile(path.join(home, '.npmrc'), 'utf8')).toBe(USER_NPMRC);
}, 120_000);
