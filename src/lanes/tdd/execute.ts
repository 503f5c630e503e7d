/**
 * Performing the conductor's effects. Every executor is idempotent — a record is appended only
 * once (by id), files are written whole, a commit happens only when something is staged, a
 * branch left over by a crash is replaced — so the driver can re-run an effect after a crash.
 */
import type { ActionEffect, Effect } from '../../conductor/effects.js';
import type { ConductorEvent, EffectTiming, LogEvent } from '../../conductor/events.js';
import type { ConductorState } from '../../conductor/state.js';
import type { LaneContext } from './context.js';
import { adoptExperiment, runExperiments } from './experiments.js';
import { readGate, reopenedGates } from './gate-check.js';
import { meeting } from './meeting.js';
import { gitFilesChanged, prove, type ProofRun, type ProveInput } from './proof.js';
import { featureDirOf } from './store.js';
import { PREPARED_TREE_STEPS, runTurn } from './turn.js';
import { count } from '../../core/plural.js';
import { redTests } from '../../conductor/red-tests.js';

/** Durations that are not the conductor's: the agent's turn and the project's suite. */
export interface Spent {
  agentMs: number;
  suiteMs: number;
}

/** Performs a record effect; returns the commit it made, if any. */
export async function performRecord(ctx: LaneContext, effect: Effect): Promise<string | null> {
  switch (effect.type) {
    case 'commit': {
      // One commit per turn: its change and the conductor's records so far (the feature's folder).
      const sha = await ctx.ws.commitPaths([...effect.paths, featureDirOf(ctx.feature)], effect.message);
      ctx.store.committed();
      if (sha) ctx.log(`  committed ${sha.slice(0, 7)} ${effect.message}`);
      return sha;
    }
    case 'revert':
      await ctx.ws.restore(effect.base, effect.paths);
      // The reset took the records written since base back too (and a turn's commit holding some):
      // the conductor's own are put back as it wrote them.
      await ctx.store.rewrite();
      ctx.log(
        `  reverted ${count(effect.paths.length, 'path')}: ${effect.paths.slice(0, 5).join(', ')}${effect.paths.length > 5 ? ', …' : ''}`,
      );
      return null;
    case 'append-turn':
      await ctx.store.append('turns.jsonl', effect.record);
      return null;
    case 'log':
      await ctx.store.append('events.jsonl', effect.event);
      describe(ctx, effect.event);
      return null;
    case 'write-cycle':
      await ctx.store.writeCycle(effect.record);
      return null;
    case 'set-item-status':
      await ctx.store.setItemStatus(effect.item, effect.status);
      return null;
    case 'record-approval':
      await ctx.store.recordApproval(effect.gate, effect.approval);
      return null;
    case 'surface-gate':
      ctx.onGate?.(effect.gate, effect.hash, effect.problems, effect.flags ?? []);
      return null;
    case 'adopt-experiment': {
      const sha = await adoptExperiment(ctx, effect.turn, effect.message);
      if (sha) ctx.log(`  committed ${sha.slice(0, 7)} ${effect.message}`);
      return sha;
    }
    case 'stop':
    case 'run-turn':
    case 'prove':
    case 'check-gate':
    case 'run-experiments':
      return null;
  }
}

/** Progress lines for what matters to a person watching. */
function describe(ctx: LaneContext, event: Extract<Effect, { type: 'log' }>['event']): void {
  switch (event.type) {
    case 'handoff':
      ctx.log(`→ ${event.to} (${event.step}${event.item ? ` ${event.item}` : ''})`);
      return;
    case 'cycle.red':
      ctx.log(`  RED proven for ${event.item}: ${redTests(event)}`);
      return;
    case 'cycle.rejected':
      ctx.log(
        `  ${event.step.toUpperCase()} rejected for ${event.item} (${event.verdict}): ${event.reason.split('\n')[0]}`,
      );
      return;
    case 'cycle.green':
      ctx.log(`  ${event.purpose === 'green' ? 'GREEN' : 'REFACTOR'} proven for ${event.item}: the full suite passes`);
      return;
    case 'turn.usage':
      if (event.verdict !== 'accepted')
        ctx.log(`  ${event.turn} ${event.verdict}${event.refused ? `: ${event.refused.join(', ')}` : ''}`);
      return;
    case 'gate.approved':
      ctx.log(`  gate ${event.gate} approved by ${event.approver}${event.proxy ? ' (proxy mode)' : ''}`);
      return;
    case 'escalation':
      ctx.log(`  ${event.kind}: ${event.reason.split('\n')[0]}`);
      return;
    default:
      return;
  }
}

/**
 * GREEN and RED's tree proven side by side, at the same moment, each on a fresh tree and branch of
 * its own: what the clock or an earlier run decides is the same for both. Their suites run code
 * agents wrote at once, so git's own files are guarded around the pair (as for experiments).
 */
async function proveBeside(
  ctx: LaneContext,
  main: ProveInput,
  red: ProveInput,
): Promise<{ run: ProofRun; recheck: ProofRun }> {
  ctx.log(`  and RED's tree ${red.commit.slice(0, 7)} again beside it, on ${red.branch} …`);
  const guard = await ctx.ws.guardGit('suite');
  // Neither proof runs code agents wrote (its migrations, then its suite) before both trees are made
  // and covered (src/process/isolate.ts): a command started earlier would see the other's tree, and
  // the code GREEN's runs could rewrite the report of RED's tree once its suite ended, or leave a
  // file there its test fails on — a failing one where a time bomb passed. A proof that ends before
  // (its tree could not be made) lets the other go.
  const trees = meeting(2);
  const beside = (input: ProveInput) => {
    const arrive = trees.arrival();
    return prove({
      ...input,
      guard: false,
      beforeCode: async () => {
        arrive();
        await trees.all;
      },
    }).finally(arrive);
  };
  const settled = await Promise.allSettled([beside(main), beside(red)]);
  const planted = await guard.restore();
  const [run, recheck] = settled.map((r) => {
    if (r.status === 'rejected') throw r.reason;
    return r.value;
  }) as [ProofRun, ProofRun];
  if (planted.length === 0) return { run, recheck };
  const broken: ProofRun = {
    suiteMs: run.suiteMs,
    outcome: {
      kind: 'broken',
      reason: 'git-files',
      message: gitFilesChanged(planted),
      output: run.outcome.output,
      hashes: run.outcome.hashes,
    },
  };
  return { run: broken, recheck };
}

export async function performAction(
  ctx: LaneContext,
  state: ConductorState,
  effect: ActionEffect,
  onBase: (base: string) => Promise<void>,
): Promise<{ event: (timing: EffectTiming) => ConductorEvent; spent: Spent }> {
  const at = () => ctx.now().toISOString();
  if (effect.type === 'run-turn') {
    const run = await runTurn(ctx, effect.turn, onBase);
    const finished = at();
    return {
      event: (timing) => ({ type: 'turn.finished', at: finished, turn: run.outcome, timing }),
      spent: { agentMs: run.agentMs, suiteMs: 0 },
    };
  }
  if (effect.type === 'run-experiments') {
    const run = await runExperiments(ctx, effect.turns, state.frozen, onBase);
    const finished = at();
    return {
      event: (timing) => ({
        type: 'experiments.finished',
        at: finished,
        results: run.results,
        ...(run.recheck ? { recheck: run.recheck } : {}),
        timing,
      }),
      spent: { agentMs: run.agentMs, suiteMs: run.suiteMs },
    };
  }
  if (effect.type === 'prove') {
    ctx.log(`  proving ${effect.purpose}${effect.item ? ` for ${effect.item}` : ''} on ${effect.branch} …`);
    const proof = {
      ws: ctx.ws,
      ...(ctx.deps ? { deps: ctx.deps } : {}),
      config: ctx.config,
      branches: ctx.branches,
      hash: effect.hash,
      env: ctx.env,
      processes: ctx.processes,
      time: ctx.time,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    };
    // A worktree begun ahead is taken by RED's proof only (turn.ts PREPARED_TREE_STEPS); one begun
    // for any other (a run resumed from an older plan) is removed, and the proof's tree made fresh.
    const ahead = ctx.trees?.take();
    const tree = ahead !== undefined && PREPARED_TREE_STEPS.has(effect.purpose) ? ahead : undefined;
    if (ahead !== undefined && tree === undefined) await ctx.ws.removeWorktree(ahead);
    const main = {
      ...proof,
      commit: await ctx.ws.head(),
      branch: effect.branch,
      forkAhead: effect.forkAhead,
      ...(tree ? { tree } : {}),
      ...(ctx.onSuiteOutput ? { onOutput: ctx.onSuiteOutput } : {}),
    };
    const { run, recheck } = effect.recheck
      ? await proveBeside(ctx, main, { ...proof, ...effect.recheck })
      : { run: await prove(main), recheck: undefined };
    const finished = at();
    return {
      event: (timing) => ({
        type: 'proof.finished',
        at: finished,
        purpose: effect.purpose,
        item: effect.item,
        branch: effect.branch,
        outcome: run.outcome,
        ...(recheck ? { recheck: recheck.outcome } : {}),
        timing,
      }),
      // Side by side, the suites' time is the longer one's: the conductor's share is what waits beyond it.
      spent: { agentMs: 0, suiteMs: Math.max(run.suiteMs, recheck?.suiteMs ?? 0) },
    };
  }
  const reading = await ctx.time('gate', () =>
    readGate(ctx.ws, ctx.store, effect.gate, state.userFacing, ctx.approvalCounts),
  );
  if (reading.ignored) {
    // The record says why the feature waits at a gate gates.json calls approved.
    const { approval, reason } = reading.ignored;
    const when = at();
    const event: LogEvent = {
      id: `approval-ignored:${effect.gate}:${when}`,
      at: when,
      feature: ctx.feature,
      type: 'gate.approval-ignored',
      gate: effect.gate,
      hash: approval.hash,
      approver: approval.approver,
      reason,
    };
    await ctx.store.append('events.jsonl', event);
    ctx.log(`  gate ${effect.gate}: the approval by ${approval.approver} in gates.json does not count: ${reason}`);
  }
  const reopened = await ctx.time('gate', () => reopenedGates(ctx.ws, ctx.store, state.userFacing));
  const finished = at();
  return {
    event: (timing) => ({
      type: 'gate.checked',
      at: finished,
      gate: effect.gate,
      check: reading.check,
      reopened,
      ...(reading.items ? { items: reading.items } : {}),
      timing,
    }),
    spent: { agentMs: 0, suiteMs: 0 },
  };
}
