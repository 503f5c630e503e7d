/**
 * Competing GREEN attempts, as the driver runs them: from one base commit, N git worktrees (next
 * to the repository, so relative paths such as `../../node_modules` resolve as in the checkout),
 * each with its own fresh database branch for the agent and another for its proof; all run side
 * by side. Each attempt's change (only the paths it may be judged on) is kept as a binary-safe
 * patch; the conductor picks, and `adopt` applies the winner's patch to the workspace and commits.
 */
import { createHash } from 'node:crypto';
import { lstat, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { TurnPlan } from '../../conductor/effects.js';
import type { ExperimentResult, ProofOutcome } from '../../conductor/events.js';
import { checkScope } from '../../conductor/scope.js';
import { ConsortError } from '../../core/errors.js';
import { matchesAny } from '../../core/glob.js';
import type { LaneContext } from './context.js';
import { meeting, type Meeting } from './meeting.js';
import { buildPolicy } from './policy.js';
import { prove, type ProofRun } from './proof.js';
import { FeatureStore } from './store.js';
import { commitRecords, turnAt } from './turn.js';

function patchFile(ctx: Pick<LaneContext, 'ws' | 'feature'>, turn: string): string {
  return path.join(ctx.ws.gitDir, 'consort', 'experiments', ctx.feature, `${turn}.patch`);
}

/**
 * What each attempt's patch held when it was written (this process's memory, which no agent
 * reaches): another attempt's agent, still at work, could rewrite a finished attempt's patch file
 * where `.git` is not read-only for it (no bubblewrap), and the adopted change would not be the
 * proven one. Adoption checks it first.
 */
const written = new Map<string, string>();

export async function writePatch(ctx: Pick<LaneContext, 'ws' | 'feature'>, turn: string, patch: string | Buffer) {
  const file = patchFile(ctx, turn);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, patch);
  written.set(file, createHash('sha256').update(patch).digest('hex'));
}

/** Ignored dependency folders are not in a worktree; link the workspace's own. */
async function linkDependencies(from: string, to: string): Promise<void> {
  const source = path.join(from, 'node_modules');
  const target = path.join(to, 'node_modules');
  const exists = (p: string) =>
    lstat(p).then(
      () => true,
      () => false,
    );
  if ((await exists(source)) && !(await exists(target))) await symlink(source, target, 'dir');
}

/**
 * Where the attempts wait for one another. An attempt's agent runs as the same user as every
 * other's, and a tree (a worktree, a proof's tree) is covered only for isolated commands started
 * after it was made (src/process/isolate.ts): an agent still at work, or a suite already running,
 * can write in a tree made since. So no attempt reads its worktree for its patch, commits or is
 * proven before every attempt's turn has ended (`turns`), and no attempt's migrations or suite
 * run before every attempt's proof tree is made and covered (`trees`), as GREEN and RED's tree
 * beside it do.
 */
interface Meetings {
  turns: Meeting;
  trees: Meeting;
}

async function attempt(
  ctx: LaneContext,
  plan: TurnPlan,
  base: string,
  frozen: Readonly<Record<string, string>>,
  meet: Meetings,
): Promise<ExperimentResult & { agentMs: number }> {
  const dir = `${ctx.ws.top}-consort-${plan.id}`;
  const turnEnded = meet.turns.arrival();
  const treeMade = meet.trees.arrival();
  try {
    const ws = await ctx.ws.addWorktree(dir, base);
    await linkDependencies(ctx.ws.dir, ws.dir);
    const here: LaneContext = { ...ctx, ws, store: new FeatureStore(ws.dir, ctx.feature) };
    let branchUsed = false;
    try {
      const run = await turnAt(here, plan, base, {
        branch: () => {
          branchUsed = true;
          return ctx.branches.fresh(plan.branch, ws.dir);
        },
        transcripts: ctx.store,
      });
      turnEnded();
      await meet.turns.all;
      const { outcome } = run;
      const policy = buildPolicy(ctx.config, ctx.feature);
      const relevant = outcome.changes.filter((c) => !matchesAny(c.path, policy.ignore));
      const { patch, changedLines } = await ws.stagedPatch(
        base,
        relevant.map((c) => c.path),
      );
      await writePatch(ctx, plan.id, patch);
      // A turn that failed or strayed is not worth a suite run; the conductor refuses it anyway.
      const inScope =
        outcome.exit.kind === 'done' &&
        checkScope({
          policy,
          role: 'driver',
          step: 'green',
          item: outcome.item,
          changes: relevant,
          frozen,
          hashes: outcome.hashes,
          testOwned: outcome.facts.testOwned ?? [],
          links: outcome.facts.links ?? [],
          linkTargets: outcome.facts.linkTargets ?? {},
          shadows: outcome.facts.shadows ?? [],
        }).length === 0;
      if (!inScope || plan.experiment === null)
        return { turn: outcome, proof: null, changedLines, suiteMs: 0, agentMs: run.agentMs };
      // The proof judges a commit: the attempt's relevant change, committed in its own (throwaway) worktree.
      const commit =
        (await ws.commitPaths(
          relevant.map((c) => c.path),
          `consort: ${ctx.feature} ${plan.id} attempt`,
        )) ?? base;
      const proof = await prove({
        ws,
        commit,
        ...(ctx.deps ? { deps: ctx.deps } : {}),
        config: ctx.config,
        branches: ctx.branches,
        branch: plan.experiment.proofBranch,
        hash: plan.frozen,
        env: ctx.env,
        processes: ctx.processes,
        time: ctx.time,
        guard: false, // the batch is guarded whole (runExperiments): the attempts run side by side
        beforeCode: async () => {
          treeMade();
          await meet.trees.all;
        },
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      });
      return { turn: outcome, proof: proof.outcome, changedLines, suiteMs: proof.suiteMs, agentMs: run.agentMs };
    } finally {
      if (branchUsed) ctx.branches.drop(plan.branch);
    }
  } finally {
    // An attempt that ends early (refused, failed, its proof stopped before its migrations) lets the others go.
    turnEnded();
    treeMade();
    await ctx.ws.removeWorktree(dir);
  }
}

export interface ExperimentsRun {
  results: ExperimentResult[];
  /** RED's tree proven again after the attempts (none when no attempt was proven). */
  recheck?: ProofOutcome;
  /** The attempts run side by side: the longest agent turn and the longest suite are what the wall clock waited for. */
  agentMs: number;
  suiteMs: number;
}

export async function runExperiments(
  ctx: LaneContext,
  plans: readonly TurnPlan[],
  frozen: Readonly<Record<string, string>>,
  onBase: (base: string) => Promise<void>,
): Promise<ExperimentsRun> {
  const base = await commitRecords(ctx, `consort: ${ctx.feature} records before ${plans[0]?.id ?? 'experiments'}`);
  await onBase(base);
  ctx.log(`  ${plans.length} competing GREEN attempts (${plans.map((p) => p.id).join(', ')}) …`);
  // The attempts' suites run code agents wrote, side by side: git's own files are guarded around
  // the whole batch (each agent's turn is also guarded on its own), and anything planted stops the run.
  const guard = await ctx.ws.guardGit('suite');
  // Every attempt settled before the guard looks or the run goes on: with Promise.all one attempt's
  // failure would restore (and end the run: the pinned git configuration and the protected git
  // directory released) while the others' suites still run and their git calls are still to come.
  const meet: Meetings = { turns: meeting(plans.length), trees: meeting(plans.length) };
  const settled = await Promise.allSettled(plans.map((plan) => attempt(ctx, plan, base, frozen, meet)));
  // RED's tree (the attempts' base: RED's code) proven again once the attempts are, while the
  // guard still stands: a test that passes on a later run whatever the code (the clock, a marker
  // an earlier run left) passes here too (src/conductor/proofs.ts judgeRecheck).
  const proven = settled.some((r) => r.status === 'fulfilled' && r.value.proof !== null);
  let recheck: ProofRun | undefined;
  let recheckFailed: { error: unknown } | undefined;
  try {
    if (proven)
      recheck = await prove({
        ws: ctx.ws,
        commit: base,
        ...(ctx.deps ? { deps: ctx.deps } : {}),
        config: ctx.config,
        branches: ctx.branches,
        branch: `${plans[0]?.experiment?.proofBranch ?? `${plans[0]?.branch ?? 'x'}-green`}-r`,
        hash: [],
        env: ctx.env,
        processes: ctx.processes,
        time: ctx.time,
        guard: false,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      });
  } catch (error) {
    recheckFailed = { error }; // thrown once the guard has put git's files back
  }
  const planted = await guard.restore();
  if (planted.length > 0)
    throw new ConsortError(
      'internal',
      `A competing attempt changed git's own files while its suite ran (${planted.map((c) => `${c.status} ${c.path}`).join(', ')}); they were put back.`,
      {
        hint: "Run again: the attempts are made afresh. A suite may not write the repository's .git or git's global files.",
      },
    );
  const runs = settled.map((r) => {
    if (r.status === 'rejected') throw r.reason;
    return r.value;
  });
  if (recheckFailed) throw recheckFailed.error;
  return {
    results: runs.map(({ agentMs: _agentMs, ...result }) => result),
    ...(recheck ? { recheck: recheck.outcome } : {}),
    agentMs: Math.max(0, ...runs.map((r) => r.agentMs)),
    suiteMs: Math.max(0, ...runs.map((r) => r.suiteMs)),
  };
}

/** Bring the picked attempt's change into the workspace (exactly its patch) and commit it; the patches go. */
export async function adoptExperiment(
  ctx: Pick<LaneContext, 'ws' | 'feature'>,
  turn: string,
  message: string,
): Promise<string | null> {
  const file = patchFile(ctx, turn);
  const expected = written.get(file);
  // A run resumed after a crash has no record of it: the patch is applied as found (as before).
  if (expected !== undefined) {
    const now = createHash('sha256')
      .update(await readFile(file).catch(() => Buffer.alloc(0)))
      .digest('hex');
    if (now !== expected)
      throw new ConsortError('internal', `The patch of ${turn} changed after it was written and proven: not applied.`, {
        hint: 'Another agent wrote under .git/ during its turn (install bubblewrap to keep .git read-only for agents); run again.',
      });
  }
  const sha = await ctx.ws.applyAndCommit(file, message);
  for (const key of written.keys()) if (path.dirname(key) === path.dirname(file)) written.delete(key);
  await rm(path.dirname(file), { recursive: true, force: true });
  return sha;
}
