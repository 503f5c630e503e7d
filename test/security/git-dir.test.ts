/**
 * The agent never changes what git tells the conductor. Each cheat is a scripted `command` agent's
 * GREEN turn, run as the TDD lane runs one (src/lanes/tdd/turn.ts: the `.git` guard taken before,
 * the git directory bound read-only for the agent, the guard's restore and the scope check after),
 * under bubblewrap and under the sweep fallback (where nothing is bound and only the guard and the
 * conductor's git settings stand in the way):
 *
 * - a `refs/replace/` ref that makes the base commit read as one whose frozen test is weakened, with
 *   the weakened test staged: plain git then reports a clean tree (and checks the weakened test out);
 *   the same ref packed into `packed-refs`;
 * - a loose object rewritten so that the frozen test's blob id reads as the weakened test;
 * - `info/exclude`, `info/grafts`, `shallow`, `objects/info/alternates`;
 * - git's global files (`~/.gitconfig`, `~/.config/git/attributes`): a smudge filter that rewrites
 *   the test as the proof's tree is checked out.
 *
 * Each is refused (or, for the object rewritten in place, stops the run with the forged object
 * removed), `.git` is as it was, and the proof of the reverted tree still fails; an honest turn
 * passes with the same machinery.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FileChange } from '../../src/conductor/events.js';
import { checkScope } from '../../src/conductor/scope.js';
import { bindWorkspace } from '../../src/git/local-workspace.js';
import {
  changesSince,
  commitPaths,
  openWorkspace,
  restore,
  workspaceHead,
  type GitWorkspace,
} from '../../src/git/workspace.js';
import { snapshotDependencies, type Dependencies } from '../../src/lanes/tdd/clean-tree.js';
import { adoptExperiment, writePatch } from '../../src/lanes/tdd/experiments.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { exists, git, proveHead, SUM_TEST, sumRepo, testStates, driverGreenTurn } from '../helpers/sum-repo.js';
import { policy } from '../conductor/fixtures.js';

/** What every cheat wants the proof to run instead: the same test, asserting nothing. */
const WEAKENED = 's/assert.equal(sum(1, 2), 3)/assert.ok(true)/';

let dir: string;
let ws: GitWorkspace;
let deps: Dependencies;
let said: string;

beforeEach(async () => {
  dir = await sumRepo('consort-gitdir-');
  said = `${dir}-said`;
  ws = await openWorkspace(dir);
  deps = await snapshotDependencies(bindWorkspace(ws), localProcessRunner);
});

afterEach(async () => {
  await deps?.dispose();
  await rm(dir, { recursive: true, force: true });
  await rm(said, { recursive: true, force: true });
});

const proveAtHead = async () => testStates(await proveHead(dir, ws, deps));

interface Turn {
  changes: FileChange[];
  refused: string[];
}

/**
 * The driver's GREEN turn as turnAt runs it, with `script` (sh) as the agent: the guard, the agent
 * under the lane's read-only binds, the guard's restore, then every change since the base, judged.
 * A refused turn is reverted as the lane reverts one.
 */
async function driverTurn(script: string): Promise<Turn> {
  const port = bindWorkspace(ws);
  const base = await workspaceHead(ws);
  const guard = await port.guardGit();
  const agent = `${dir}-agent.sh`;
  await writeFile(agent, `cd ${JSON.stringify(dir)}\n${script}\n`);
  try {
    const result = await driverGreenTurn(dir, port, deps, `sh ${agent}`);
    expect(result.exit).toEqual({ kind: 'done' });
  } finally {
    await rm(agent, { force: true });
  }
  const changes = [...(await guard.restore()), ...(await changesSince(ws, base))];
  const refused = checkScope({
    policy: policy(),
    role: 'driver',
    step: 'green',
    item: 'T1',
    changes,
    frozen: { 'test/sum.test.js': 'h' },
    hashes: {},
  }).map((r) => r.path);
  if (refused.length > 0)
    await restore(
      ws,
      base,
      changes.filter((c) => c.status === 'added').map((c) => c.path),
    );
  else
    await commitPaths(
      ws,
      changes.map((c) => c.path),
      'consort(driver): green 001-sum/T1',
    );
  return { changes, refused };
}

const paths = (t: Turn) => t.changes.map((c) => `${c.status} ${c.path}`);

/** The replace cheat: the base commit reads as one whose test asserts nothing, and that test is staged. */
const REPLACE = `sed -i '${WEAKENED}' test/sum.test.js
git add test/sum.test.js
forged=$(git -c user.name=t -c user.email=t@t commit-tree $(git write-tree) -m base)
git replace HEAD "$forged"
git status --porcelain > ${'$SAID'}/status`;

describe.each(['bwrap', 'sweep'] as const)('under %s isolation', (kind) => {
  const pinned = process.env.CONSORT_ISOLATION;
  beforeAll(() => {
    process.env.CONSORT_ISOLATION = kind;
  });
  afterAll(() => {
    if (pinned === undefined) delete process.env.CONSORT_ISOLATION;
    else process.env.CONSORT_ISOLATION = pinned;
  });
  const script = (s: string) => `SAID=${said}\nmkdir -p $SAID\n${s}`;

  it('an honest turn (the fix in src/) is accepted and proven green', async () => {
    const turn = await driverTurn(`sed -i 's/a - b/a + b/' src/sum.js`);
    expect(paths(turn)).toEqual(['modified src/sum.js']);
    expect(turn.refused).toEqual([]);
    expect(await proveAtHead()).toEqual(['test::adds passed']);
  }, 60_000);

  it('a refs/replace/ ref that swaps the base commit for one with a weakened test is refused', async () => {
    const turn = await driverTurn(script(REPLACE));
    if (kind === 'sweep') {
      // The cheat is real: git as the agent runs it sees nothing changed.
      expect(await readFile(path.join(said, 'status'), 'utf8')).toBe('');
      expect(paths(turn)).toEqual(expect.arrayContaining([expect.stringMatching(/^added \.git\/refs\/replace\//)]));
    } else {
      // The git directory is read-only for the agent: `git add` cannot even take the index lock.
      expect(paths(turn).filter((p) => p.includes('.git/'))).toEqual([]);
    }
    // Either way the conductor's git ignores replace refs: the weakened test is the turn's change, refused.
    expect(turn.refused).toContain('test/sum.test.js');
    expect(await git(dir, 'for-each-ref', 'refs/replace/')).toBe('');
    expect(await readFile(path.join(dir, 'test', 'sum.test.js'), 'utf8')).toBe(SUM_TEST);
    expect(await proveAtHead()).toEqual(['test::adds failed']);
  }, 60_000);

  it('the same ref packed into packed-refs is ignored by the conductor: the weakened test is still seen', async () => {
    const turn = await driverTurn(script(`${REPLACE}\ngit pack-refs --all\ngit status --porcelain > $SAID/packed`));
    if (kind === 'sweep') expect(await readFile(path.join(said, 'packed'), 'utf8')).toBe('');
    expect(turn.refused).toContain('test/sum.test.js');
    expect(await proveAtHead()).toEqual(['test::adds failed']);
  }, 60_000);

  it("git's control files an agent writes (exclude, grafts, shallow, alternates) are refused and put back", async () => {
    const head = await workspaceHead(ws);
    const turn = await driverTurn(
      script(`for f in info/exclude info/grafts shallow objects/info/alternates; do
  ( printf '%s\\n' ${head} >> .git/$f ) 2>>$SAID/errors || true
done`),
    );
    if (kind === 'bwrap') {
      expect((await readFile(path.join(said, 'errors'), 'utf8')).match(/Read-only file system/g)).toHaveLength(4);
      expect(turn.changes).toEqual([]);
    } else {
      // `git init` writes info/exclude (comments only); the others are new.
      expect(paths(turn)).toEqual([
        'modified .git/info/exclude',
        'added .git/info/grafts',
        'added .git/objects/info/alternates',
        'added .git/shallow',
      ]);
      expect(turn.refused).toHaveLength(4);
    }
    for (const f of ['info/grafts', 'shallow', 'objects/info/alternates'])
      expect(await exists(path.join(ws.gitDir, f))).toBe(false);
    expect(await readFile(path.join(ws.gitDir, 'info', 'exclude'), 'utf8')).not.toContain(head);
  }, 60_000);

  it('a loose object rewritten to read as a weakened test never reaches a proof (sweep: removed, and the run stops)', async () => {
    const blob = await git(dir, 'rev-parse', 'HEAD:test/sum.test.js');
    const file = path.join(ws.gitDir, 'objects', blob.slice(0, 2), blob.slice(2));
    // The forged object: the weakened test's bytes, deflated under the frozen test's id.
    const forge = `node -e "const fs=require('fs'),z=require('zlib');const t=fs.readFileSync('test/sum.test.js','utf8').replace('assert.equal(sum(1, 2), 3)','assert.ok(true)');const b=Buffer.concat([Buffer.from('blob '+Buffer.byteLength(t)+'\\\\0'),Buffer.from(t)]);try{fs.writeFileSync('${file}.new',z.deflateSync(b));fs.renameSync('${file}.new','${file}');fs.writeFileSync('${said}/forged','yes')}catch(e){fs.writeFileSync('${said}/forged',e.code)}"`;
    const port = bindWorkspace(ws);
    const guard = await port.guardGit();
    await driverGreenTurn(dir, port, deps, script(forge));
    if (kind === 'bwrap') {
      expect(await readFile(path.join(said, 'forged'), 'utf8')).toBe('EROFS');
      expect(await guard.restore()).toEqual([]);
      expect(await proveAtHead()).toEqual(['test::adds failed']);
      return;
    }
    expect(await readFile(path.join(said, 'forged'), 'utf8')).toBe('yes');
    // The cheat is real: plain git shows the frozen test's id as the weakened test, and status is clean.
    expect(await git(dir, 'cat-file', '-p', blob)).toContain('assert.ok(true)');
    expect(await git(dir, 'status', '--porcelain')).toBe('');
    await expect(guard.restore()).rejects.toThrow(/rewrote or removed objects in git's store/);
    expect(await exists(file)).toBe(false);
    // Nothing can check the forged test out any more: the proof cannot even make its tree.
    await expect(proveAtHead()).rejects.toThrow();
  }, 60_000);
});

it("git's global files (a smudge filter in a file ~/.gitconfig includes, ~/.config/git/attributes, the excludes file an included file names) are refused and put back", async () => {
  const home = await mkdtemp(path.join(os.tmpdir(), 'consort-gitdir-home-'));
  const pinned = process.env.HOME;
  process.env.HOME = home;
  const GLOBAL = '[user]\n\tname = Someone\n[include]\n\tpath = ~/dotfiles/git\n';
  try {
    await writeFile(path.join(home, '.gitconfig'), GLOBAL);
    await mkdir(path.join(home, 'dotfiles'));
    const INCLUDED = '[core]\n\texcludesFile = ~/dotfiles/ignore\n';
    await writeFile(path.join(home, 'dotfiles', 'git'), INCLUDED);
    await writeFile(path.join(home, 'dotfiles', 'ignore'), '*.log\n');
    const turn = await driverTurn(`mkdir -p ~/.config/git
printf '[filter "weaken"]\\n\\tsmudge = sed "${WEAKENED}"\\n\\tclean = cat\\n' >> ~/dotfiles/git
printf '*.test.js filter=weaken\\n' > ~/.config/git/attributes
printf '[core]\\n\\tpager = cat\\n' >> ~/.gitconfig
printf 'src/\\n' >> ~/dotfiles/ignore`);
    expect(paths(turn)).toEqual([
      'added ~/.config/git/attributes',
      'modified ~/.gitconfig',
      'modified ~/dotfiles/git',
      'modified ~/dotfiles/ignore',
    ]);
    expect(turn.refused).toEqual(['~/.config/git/attributes', '~/.gitconfig', '~/dotfiles/git', '~/dotfiles/ignore']);
    expect(await readFile(path.join(home, '.gitconfig'), 'utf8')).toBe(GLOBAL);
    expect(await readFile(path.join(home, 'dotfiles', 'git'), 'utf8')).toBe(INCLUDED);
    expect(await readFile(path.join(home, 'dotfiles', 'ignore'), 'utf8')).toBe('*.log\n');
    expect(await exists(path.join(home, '.config', 'git', 'attributes'))).toBe(false);
    expect(await proveAtHead()).toEqual(['test::adds failed']);
  } finally {
    process.env.HOME = pinned;
    await rm(home, { recursive: true, force: true });
  }
}, 60_000);

it("a proven attempt's patch another agent rewrote under .git/consort/ is not adopted; an untouched one is", async () => {
  const port = bindWorkspace(ws);
  const ctx = { ws: port, feature: '001-sum' };
  const base = await workspaceHead(ws);
  await writeFile(path.join(dir, 'src', 'sum.js'), 'export const sum = (a, b) => a + b;\n');
  const { patch } = await port.stagedPatch(base, ['src/sum.js']);
  await git(dir, 'reset', '-q', '--hard', base);
  await writePatch(ctx, 'g1', patch);
  // Another attempt's agent, still at work without bubblewrap, rewrites the winner's patch (the bug back in).
  const file = path.join(ws.gitDir, 'consort', 'experiments', '001-sum', 'g1.patch');
  await writeFile(file, (await readFile(file, 'utf8')).replace('a + b', 'a - b'));
  await expect(adoptExperiment(ctx, 'g1', 'consort(driver): green 001-sum/T1')).rejects.toThrow(
    /The patch of g1 changed after it was written and proven: not applied/,
  );
  expect(await workspaceHead(ws)).toBe(base);
  await writePatch(ctx, 'g2', patch);
  expect(await adoptExperiment(ctx, 'g2', 'consort(driver): green 001-sum/T1')).toMatch(/^[0-9a-f]{40}$/);
  expect(await proveAtHead()).toEqual(['test::adds passed']);
}, 60_000);
