/**
 * The conductor's own suite run, on the committed tree in a fresh worktree: a fresh branch (baseline + the workspace's migrations), the
 * project's suite with the branch in `suite.env`, its JUnit reports normalized per test, and the
 * hashes of the frozen test files — then the branch is deleted. The judging is the conductor's
 * (src/conductor/proofs.ts); this only gathers the facts.
 */
import { lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { processAlive } from '../../core/process-alive.js';
import os from 'node:os';
import path from 'node:path';
import type { ConsortConfig } from '../../config/schema.js';
import type { FileChange, ProofOutcome, ProofTest } from '../../conductor/events.js';
import { failureException } from '../../conductor/failure-kind.js';
import { childEnv } from '../../core/child-env.js';
import { matchesAny } from '../../core/glob.js';
import { parseDuration } from '../../core/duration.js';
import { ConsortError } from '../../core/errors.js';
import { redact } from '../../core/redact.js';
import type { ApplyFailure } from '../../ports/migration-runner.js';
import type { ProcessRequest, ProcessRunner } from '../../ports/process.js';
import type { Workspace } from '../../ports/workspace.js';
import { readJUnitReports, summarizeSuite, type SuiteResult } from '../../suite/junit.js';
import { branchEnv } from '../../suite/pg-env.js';
import { cleanTree, type Dependencies } from './clean-tree.js';
import type { Branches } from './database.js';
import { trackedAt } from './harness.js';
import { type MadeFiles, watchMadeFiles } from './made-files.js';
import { gitDirsOf } from './git-dirs.js';

const OUTPUT_TAIL = 4000;

export interface ProofRun {
  outcome: ProofOutcome;
  suiteMs: number;
}

function relativeFile(workspace: string, file: string | undefined): string | undefined {
  if (file === undefined) return undefined;
  const rel = path.isAbsolute(file) ? path.relative(workspace, file) : file;
  return rel.split(path.sep).join('/').replace(/^\.\//, '');
}

function testsOf(workspace: string, result: SuiteResult): ProofTest[] {
  return result.suites
    .flatMap((s) => s.tests)
    .map((t) => {
      const file = relativeFile(workspace, t.file);
      const exception = t.state === 'failed' ? failureException(t) : null;
      return {
        id: t.id,
        state: t.state,
        ...(file ? { file } : {}),
        ...(t.loadError ? { loadError: true } : {}),
        ...(exception ? { exception } : {}),
        ...(t.message ? { message: t.message } : {}),
      };
    });
}

/**
 * `migrations/…_x.sql failed (applied with node-pg-migrate 7.9.1 (the project's)): …`: which
 * migration failed, on which engine, and why (past migrations.timeout: the limit and the key).
 */
export function migrationFailed(branches: Pick<Branches, 'engine'>, f: ApplyFailure): string {
  const engine = branches.engine();
  return `${f.file ?? f.name ?? 'a migration'} failed${engine === null ? '' : ` (applied with ${engine})`}: ${f.error.message}`;
}

/**
 * Each committed file of the proof's tree as it stands: its inode, change time, size and mode. A
 * write, a rename over it or a chmod changes the change time, which no process can set back — so a
 * file the suite rewrote and put back before it ended still reads as changed.
 */
async function stamps(dir: string, files: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let i = 0; i < files.length; i += 256)
    await Promise.all(
      files.slice(i, i + 256).map(async (file) => {
        const st = await lstat(path.join(dir, file), { bigint: true }).catch(() => null);
        out.set(file, st === null ? 'gone' : `${st.ino}:${st.ctimeNs}:${st.size}:${st.mode}`);
      }),
    );
  return out;
}

/** The committed files whose stamp changed. */
async function restamped(dir: string, before: ReadonlyMap<string, string>): Promise<string[]> {
  const after = await stamps(dir, [...before.keys()]);
  return [...before].filter(([file, stamp]) => after.get(file) !== stamp).map(([file]) => file);
}

/** A proof's own TMPDIR: `consort-proof-tmp-<pid>-…`, so one a killed run left can be told by its process. */
const TEMP_PREFIX = 'consort-proof-tmp-';
let sweptTemps: Promise<void> | undefined;

/**
 * Remove the proof TMPDIRs in `parent` whose process is gone (a run killed before its proof's
 * `finally`): once per process, beside its first proof.
 */
export async function sweepDeadProofTemps(parent: string): Promise<void> {
  const names = await readdir(parent).catch(() => [] as string[]);
  await Promise.all(
    names.map(async (name) => {
      const pid = Number(new RegExp(`^${TEMP_PREFIX}(\\d+)-`).exec(name)?.[1]);
      if (Number.isInteger(pid) && pid > 0 && !processAlive(pid))
        await rm(path.join(parent, name), { recursive: true, force: true }).catch(() => undefined);
    }),
  );
}

/** Why a proof whose suite wrote git's own files (put back by the guard) cannot be judged. */
export function gitFilesChanged(changes: readonly FileChange[]): string {
  return `the suite changed git's own files (${changes.map((c) => `${c.status} ${c.path}`).join(', ')}); they were put back. A suite may not write the repository's .git, git's global files or a test runner's in the home folder (~/.npmrc, ~/.cargo/config.toml…): give tests that configure git or a package manager a HOME and repository of their own.`;
}

/**
 * What the suite must not read where bubblewrap can hide it: the repository's history (its git
 * directory, and the proof tree's `.git` file that leads there) and Consort's records in the tree
 * (`.consort/`). A RED proof, GREEN's, and RED's tree proven again beside GREEN differ there — a
 * commit's message, the step a feature's state names — so a test that read them could pass at
 * GREEN, and fail at RED and beside it, whatever the code. The dependency install kept in the git
 * directory is shown again, read-only. Without bubblewrap nothing is hidden (docs/security.md).
 */
export function historyVeil(
  input: Pick<ProveInput, 'ws' | 'deps' | 'processes'>,
  tree: string,
): Pick<ProcessRequest, 'masks' | 'reshown'> {
  if (input.processes.canBind?.() !== true) return {};
  const masks = [...gitDirsOf(input.ws), path.join(tree, '.git'), path.join(tree, '.consort')];
  const reshown = input.deps ? [input.deps.root, ...input.deps.links.values()] : [];
  return { masks: masks.map((p) => path.resolve(p)), reshown: reshown.map((p) => path.resolve(p)) };
}

export interface ProveInput {
  ws: Workspace;
  /** What is proven: this commit, checked out afresh (src/lanes/tdd/clean-tree.ts), never the agent's work tree. */
  commit: string;
  /** The pristine dependencies taken before the run's first turn. */
  deps?: Dependencies;
  config: ConsortConfig;
  branches: Branches;
  branch: string;
  /** A branch to fork for later (the next cycle's sandbox) once this proof's own is ready, so the two do not compete. */
  forkAhead?: { branch: string; use: 'proof' | 'sandbox' } | null;
  hash: readonly string[];
  /** The folder of a worktree begun ahead for this proof (ProofTrees.take). */
  tree?: string;
  env: NodeJS.ProcessEnv;
  processes: ProcessRunner;
  signal?: AbortSignal;
  onOutput?: (chunk: string) => void;
  time: <T>(label: string, fn: () => Promise<T>) => Promise<T>;
  /**
   * Guard git's own files around the suite (default true): the suite runs code agents wrote, and
   * what it plants in the repository's `.git` or in git's global files would reach the conductor's
   * next git call. Experiments, whose proofs run side by side, guard their whole batch instead.
   */
  guard?: boolean;
  /**
   * Awaited before the first code agents wrote runs in this proof (its migrations, then its suite):
   * proofs run side by side run any only once every one of them has made (and covered) its tree,
   * since a command sees only what was hidden when it started.
   */
  beforeCode?: () => Promise<void>;
}

export async function prove(input: ProveInput): Promise<ProofRun> {
  const { config } = input;
  if (config.suite.reports.length === 0) {
    throw new ConsortError(
      'config',
      'The TDD lane proves red and green per test, so it needs the JUnit reports your suite writes.',
      {
        hint: 'Set suite.reports in the Consort configuration (e.g. reports: junit.xml with jest-junit, or pytest --junitxml=junit.xml).',
      },
    );
  }
  const { time } = input;
  // The commit's files, listed beside the tree's making (and kept by commit: the next turn's judge
  // reads this commit's list as its base's).
  // The tree is covered for every other isolated command while it is proven — a worktree begun
  // ahead from now, before it is taken and shown; a fresh one once it is made — so code another
  // proof's suite runs beside this one (GREEN's, beside RED's tree proven again) cannot rewrite this
  // suite's report after it ends. Its own suite is given it (writable, below).
  let unhideTree = input.tree !== undefined ? input.processes.hideProofTree?.(input.tree) : undefined;
  const listed = trackedAt(input.ws, input.commit);
  listed.catch(() => undefined); // awaited below, once the tree is made
  const [made, guarded] = await Promise.allSettled([
    time('prove:tree', () =>
      cleanTree(input.ws, input.commit, input.deps, config.suite.reports, input.processes, input.tree),
    ),
    input.guard === false ? null : time('prove:guard', () => input.ws.guardGit('suite')),
  ]);
  if (made.status === 'rejected') {
    unhideTree?.();
    throw made.reason;
  }
  const tree = made.value;
  if (input.tree === undefined || path.resolve(input.tree) !== path.resolve(tree.ws.dir)) {
    unhideTree?.();
    unhideTree = input.processes.hideProofTree?.(tree.ws.dir);
  }
  if (guarded.status === 'rejected') {
    unhideTree?.();
    await tree.dispose(); // no worktree is left behind by a guard that could not read git's files
    throw guarded.reason;
  }
  const guard = guarded.value;
  const ws = tree.ws;
  /** What the suite changed of git's files, put back before the conductor's next git call (the worktree's removal among them). */
  let planted: Promise<FileChange[]> | undefined;
  let tempMade: Promise<string> | undefined;
  let unhide: (() => void) | undefined;
  let watched: MadeFiles | undefined;
  const putBack = () => (planted ??= guard ? time('prove:guard', () => guard.restore()) : Promise.resolve([]));
  try {
    // The committed files, stamped before the suite (and before the migrations, which run code
    // agents wrote too): the suite runs code agents wrote, and one that rewrites a test (or the code)
    // in this tree while it runs — a module a first test imports that edits a later test file before
    // the runner loads it, then puts it back — proves what no commit holds. Report paths are the
    // suite's to write.
    let committed: string[] = [];
    const [hashes, before] = await Promise.all([
      time('prove:hash', () => ws.hashFiles(input.hash)),
      time('prove:hash', async () => {
        committed = [...(await listed)].filter((f) => !matchesAny(f, config.suite.reports));
        return stamps(ws.dir, committed);
      }),
    ]);
    // Harness files made in the tree from now until the suite ends: by the suite (a conftest.py
    // written before pytest collects its folder, removed at exit) and, before it, by the
    // migrations, whose JS/TS code agents wrote and which run in a process of their own after the
    // tree was checked clean (a `test/node_modules/pg` of its own, which node resolves the tests'
    // `pg` to before the install's).
    watched = watchMadeFiles(ws.dir, committed, config.build.tests);
    // The suite's own TMPDIR (below), made and covered before any code agents wrote runs here: a
    // proof beside this one runs its code once both have met (beforeCode), and sees only what was
    // covered by then.
    sweptTemps ??= sweepDeadProofTemps(os.tmpdir());
    tempMade = mkdtemp(path.join(os.tmpdir(), `${TEMP_PREFIX}${process.pid}-`));
    const tmp = await tempMade;
    unhide = input.processes.hide?.(tmp);
    await input.beforeCode?.();
    const fresh = await time('prove:branch', () => input.branches.fresh(input.branch, ws.dir));
    if (input.forkAhead) input.branches.prefork(input.forkAhead.branch, input.forkAhead.use);
    if (!fresh.migrations.ok) {
      return {
        suiteMs: 0,
        outcome: {
          kind: 'broken',
          reason: 'migrations',
          message: migrationFailed(input.branches, fresh.migrations.failed),
          output: '',
          hashes,
        },
      };
    }
    // Every report path was emptied in the fresh tree: whatever is there now, this run's suite wrote.
    // The suite gets the branch's own role: it reaches this branch only (src/branches/branch-role.ts).
    const suiteUrl = await input.branches.untrusted(input.branch, fresh.url);
    // A temporary folder of this proof's own, empty, as TMPDIR: runners keep caches there (jest's
    // transforms and haste map, under os.tmpdir()), keyed by what they read — the proof's own path
    // among it, which a worktree begun ahead shows by name — so one an agent (or an earlier proof's
    // suite) filled could hand this suite a test transformed from other source than the commit's.
    const result = await time('prove:suite', () =>
      input.processes.run({
        command: config.suite.command,
        cwd: ws.dir,
        isolate: true,
        // Its dependency copy cannot be changed by the suite (bound read-only under bubblewrap).
        readOnly: tree.readOnly,
        writable: [...tree.writable, tmp, ...(unhideTree ? [ws.dir] : [])],
        ...(tree.binds.length > 0 ? { binds: tree.binds } : {}),
        ...historyVeil(input, ws.dir),
        env: childEnv(
          {
            ...branchEnv(suiteUrl, [config.suite.env]),
            CI: input.env.CI ?? 'true',
            TMPDIR: tmp,
            // Python's user site-packages lies in the home folder the agents write: its `.pth` files
            // and `usercustomize` run in every python the suite starts. Kept when the project passes
            // PYTHONNOUSERSITE itself (its runner installed with `pip install --user`).
            ...(config.suite.passEnv.includes('PYTHONNOUSERSITE') ? {} : { PYTHONNOUSERSITE: '1' }),
          },
          // The basics, and what the project passes its code (suite.passEnv): agents wrote this code.
          { inherit: input.env, pass: config.suite.passEnv, secrets: config.suite.passEnv },
        ),
        timeoutMs: parseDuration(config.suite.timeout),
        maxOutputBytes: 2 * 1024 * 1024,
        ...(input.signal ? { signal: input.signal } : {}),
        ...(input.onOutput ? { onOutput: input.onOutput } : {}),
      }),
    );
    const output = redact(
      result.output.slice(-OUTPUT_TAIL),
      [new URL(fresh.url).password, new URL(suiteUrl).password].filter(Boolean),
    );
    const made = await watched.stop();
    const changedGit = await putBack();
    if (result.aborted)
      throw new ConsortError('internal', 'The run was cancelled during a suite run.', {
        hint: 'Run `consort run` again to resume.',
      });
    const broken = (
      reason: 'no-report' | 'timeout' | 'not-found' | 'git-files' | 'tree-changed',
      message: string,
    ): ProofRun => ({
      suiteMs: result.durationMs,
      outcome: { kind: 'broken', reason, message, output, hashes },
    });
    if (changedGit.length > 0) return broken('git-files', gitFilesChanged(changedGit));
    const rewritten = await time('prove:hash', () => restamped(ws.dir, before));
    if (rewritten.length > 0)
      return broken(
        'tree-changed',
        `the suite wrote committed files of the tree it proves (${rewritten.slice(0, 10).join(', ')}${rewritten.length > 10 ? `, and ${rewritten.length - 10} more` : ''}), so what ran is not what the commit holds. A suite may write its reports, caches and files it creates, never a committed file, not even to put it back.`,
      );
    if (made === null)
      return broken(
        'tree-changed',
        'the suite made or removed too many files next to the tests to tell whether it made a harness file (or the folders could not be watched: raise fs.inotify.max_user_watches).',
      );
    if (made.length > 0)
      return broken(
        'tree-changed',
        `the suite (or a migration's code, before it) made harness files, which a runner loads without being told (a conftest.py, an .env, a node_modules beside the tests), or moved a folder of tests, in the tree it proves (${made.slice(0, 10).join(', ')}): what ran is not what the commit holds.`,
      );
    if (result.notFound) return broken('not-found', `the suite command was not found: ${config.suite.command}`);
    if (result.timedOut) return broken('timeout', `the suite timed out after ${config.suite.timeout}`);
    let junit: SuiteResult;
    try {
      junit = await time('prove:junit', () => readJUnitReports(config.suite.reports, ws.dir));
    } catch (e) {
      return broken('no-report', e instanceof Error ? e.message : String(e));
    }
    return {
      suiteMs: result.durationMs,
      outcome: {
        kind: 'ran',
        exitCode: result.exitCode,
        tests: testsOf(ws.dir, junit),
        summary: summarizeSuite(junit),
        output,
        hashes,
      },
    };
  } finally {
    await watched?.stop(); // closed already, unless the suite's run threw: before the tree goes
    input.branches.drop(input.branch);
    await putBack();
    unhide?.();
    unhideTree?.();
    const temp = await tempMade?.catch(() => undefined);
    if (temp !== undefined) await rm(temp, { recursive: true, force: true }).catch(() => undefined);
    await time('prove:tree', () => tree.dispose());
  }
}
