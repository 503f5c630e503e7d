/**
 * The TDD lane driver: loads a feature's state from `.consort/`, performs the conductor's effects
 * and feeds each action's result back through `transition`. Before and after every effect the
 * journal in `state.json` says how far the batch got, so a run killed at any point resumes: a
 * record effect is simply repeated (they are idempotent), an interrupted turn is discarded back to
 * the commit it started from and run again, an interrupted proof is run again on a fresh branch.
 */
import path from 'node:path';
import lockfile from 'proper-lockfile';
import type { ConsortConfig } from '../../config/schema.js';
import { type Effect, isAction } from '../../conductor/effects.js';
import type { ConductorEvent } from '../../conductor/events.js';
import type { ConductorState, GateName, TurnRecord } from '../../conductor/state.js';
import { commitMessage } from '../../conductor/moves.js';
import { policyChanges } from '../../conductor/policy-change.js';
import { transition } from '../../conductor/transition.js';
import { ConsortError } from '../../core/errors.js';
import type { AgentBackends } from '../../ports/agent-backend.js';
import type { BranchProvider } from '../../ports/branch-provider.js';
import type { GitRepo } from '../../ports/git.js';
import type { MigrationRunner } from '../../ports/migration-runner.js';
import type { ProcessRunner } from '../../ports/process.js';
import type { SchemaReader } from '../../ports/schema-reader.js';
import type { Workspace } from '../../ports/workspace.js';
import { type LaneContext, secretValues, timer } from './context.js';
import { proofTrees, removeStaleTrees, snapshotDependencies } from './clean-tree.js';
import { commandPaths } from './harness.js';
import { type BranchKit, createBranches } from './database.js';
import { performAction, performRecord } from './execute.js';
import { reopenedGates } from './gate-check.js';
import { type BackendFactory, backendFactory, buildPolicy } from './policy.js';
import { featureDirOf, FeatureStore, type StateFile } from './store.js';
import { agentReadOnly, commitRecords } from './turn.js';
import { count } from '../../core/plural.js';

export interface BuildLaneInput {
  /** The checkout the agents work in (the shell opens it: src/git/local-workspace.ts). */
  workspace: Workspace;
  config: ConsortConfig;
  /**
   * The configuration file the run read, relative to the workspace, when it is not one of the
   * default names (`--config`, the Action's `config` input): no agent changes it, as none changes
   * `.github/consort.yml` (its suite command, its passEnv).
   */
  configFile?: string;
  feature: string;
  provider: BranchProvider;
  /** The suite's environment. */
  env: NodeJS.ProcessEnv;
  /** Starts the proofs' suites and the baseline's seed. */
  processes: ProcessRunner;
  /** The agent backends the configuration may name. */
  agents: AgentBackends;
  /** Reads commits without the work tree (the base's migrations). */
  git: GitRepo;
  /** Applies the baseline's and each branch's migrations. */
  migrations: MigrationRunner;
  /** Reads a branch's schema for the context pack. */
  schemas: SchemaReader;
  /** The agents' environment (default: env). */
  agentEnv?: NodeJS.ProcessEnv;
  /** Redacted from transcripts and summaries (default: the credential-looking values of agentEnv). */
  secrets?: readonly string[];
  /** Which agent a role gets (default: the configured one, built by `agents`); tests substitute it. */
  backends?: BackendFactory;
  /** Overrides gates.mode (the CLI's --gates). */
  gateMode?: 'human' | 'proxy';
  /** Stop before checking this gate. */
  until?: GateName;
  /** Stop before the (N+1)th agent turn of this run. */
  maxTurns?: number;
  /** Stop after this many effects (step through a run). */
  maxEffects?: number;
  /** Stop before the next agent turn once this run's turns have cost this much (USD, as the backends report it). */
  maxCostUsd?: number;
  /** Stop before the next action at this time (epoch ms): a wall-clock limit that leaves time to save the state. */
  deadline?: number;
  /**
   * After each turn is settled (its verdict and, for RED/GREEN/REFACTOR, its proof known), before
   * the next action: the turn is one commit holding its change and the conductor's records (`head`);
   * `commit` is that same commit when the turn changed code, null when it was refused and
   * reverted, or changed nothing (then `head` is a commit of its records alone).
   */
  onTurn?: (turn: TurnRecord, commits: { commit: string | null; head: string }) => Promise<void>;
  /** Resume an escalated or stalled feature. */
  retry?: boolean;
  /** Overrides build.experiments (the CLI's --experiments). */
  experiments?: number;
  /**
   * migrations.timeout on building the baseline and on every branch's migrations, where it comes
   * from other configuration than `config` (a pull request's base branch:
   * src/lanes/tdd/pull-request.ts). Default: `config`'s.
   */
  migrationsLimit?: BranchKit['migrationsLimit'];
  /** Ends the run (`interrupted`): the turn or suite under way, and a baseline being built (rolled back). */
  signal?: AbortSignal;
  log?: (line: string) => void;
  onSuiteOutput?: (chunk: string) => void;
  onGate?: LaneContext['onGate'];
  /** Whether a recorded approval may pass its gate (the pull-request shells; see LaneContext). */
  approvalCounts?: LaneContext['approvalCounts'];
  now?: () => Date;
  /** Durations of the driver's own steps (benchmarks). */
  onTiming?: (label: string, ms: number) => void;
}

export type RunStop =
  | 'awaiting-approval'
  | 'escalated'
  | 'stalled'
  | 'done'
  | 'until'
  | 'max-turns'
  | 'max-cost'
  | 'time-limit'
  | 'max-effects'
  | 'interrupted';

export interface BuildRunResult {
  feature: string;
  stop: RunStop;
  message: string;
  state: ConductorState;
  effects: number;
  turns: number;
  /** What this run's turns cost (USD; turns whose backend reports no cost count 0). */
  costUsd: number;
}

type StartInput = Pick<BuildLaneInput, 'config' | 'configFile' | 'feature' | 'gateMode' | 'retry' | 'experiments'>;

/** The run's policy from its settings; the configuration file it read is locked like the default ones. */
export function runPolicy(input: Omit<StartInput, 'retry'>): ReturnType<typeof buildPolicy> {
  const policy = buildPolicy(input.config, input.feature, input.gateMode, input.experiments);
  if (input.configFile !== undefined && !policy.locked.includes(input.configFile)) policy.locked.push(input.configFile);
  return policy;
}

async function startEvent(
  ctx: Pick<LaneContext, 'ws' | 'store' | 'now'>,
  input: StartInput,
  state: ConductorState,
  baseCommit: string,
): Promise<StartEvent> {
  const policy = runPolicy(input);
  // A migration already on the base is history every later database was built from: editing it
  // instead of adding one would never run (the runner skips recorded names). No agent changes one.
  policy.locked.push(...(await ctx.ws.filesUnder(baseCommit, input.config.migrations.dir)));
  // What the suite command and a seed command run, by name (a script, a runner config passed as a
  // flag): part of the harness, and as locked as a seed file (src/lanes/tdd/harness.ts).
  const named = await commandPaths(ctx.ws, baseCommit, input.config);
  policy.harness.push(...named.harness);
  policy.locked.push(...named.locked);
  return {
    type: 'run.started',
    at: ctx.now().toISOString(),
    policy,
    reopened: await reopenedGates(ctx.ws, ctx.store, state.userFacing),
    retry: input.retry === true,
  };
}

type StartEvent = Extract<ConductorEvent, { type: 'run.started' }>;

/**
 * A batch a stopped run left (`--max-turns`, `--until`, a budget, a kill) was planned under that
 * run's settings. Before its next action this run's own settings are compared: when they differ
 * the step is entered afresh under them (a `run.started`, new ids), so `--gates`, `--experiments`
 * and a changed configuration are never silently ignored. The one exception is an action that was
 * under way (an interrupted turn): it finishes as it began, and the comparison waits for the next.
 */
function settingsNotice(feature: string, changes: string[], afterInterrupted: boolean): string {
  return `${feature}: ${afterInterrupted ? 'the interrupted turn finished under the settings it began with; ' : ''}this run's settings differ from those the last run stopped under (${changes.join('; ')}), so the step starts afresh under this run's.`;
}

/** What `--dry-run` shows: the next effects, and what happens to the last run's settings. */
export interface BuildPlan {
  effects: Effect[];
  /** Set when the settings of the run that stopped differ from this run's. */
  settings: string | null;
}

/** The effects the next run would perform, without performing any (`--dry-run`). */
export async function planBuildRun(input: StartInput & Pick<BuildLaneInput, 'workspace' | 'now'>): Promise<BuildPlan> {
  const ws = input.workspace;
  const store = new FeatureStore(ws.dir, input.feature);
  const file = await store.load();
  const start = await startEvent(
    { ws, store, now: input.now ?? (() => new Date()) },
    input,
    file.state,
    file.baseCommit,
  );
  if (file.done >= file.pending.length) return { effects: transition(file.state, start).effects, settings: null };
  const left = file.pending.slice(file.done);
  const action = left.findIndex(isAction);
  const changes = policyChanges(file.state.policy, start.policy);
  if (changes.length === 0 || action < 0) return { effects: left, settings: null };
  if (file.inFlight !== null)
    return {
      effects: left,
      settings: `${input.feature}: the interrupted turn resumes under the settings it began with; this run's differ (${changes.join('; ')}) and apply from the step after it.`,
    };
  // The records the stopped run had not written yet still are; then the step afresh.
  return {
    effects: [...left.slice(0, action), ...transition(file.state, start).effects],
    settings: settingsNotice(input.feature, changes, false),
  };
}

/**
 * One commit per settled turn: the records (transcript, turn record, state) join the turn's own
 * commit while it is still the last one (nothing is pushed before the turn settles); a turn that
 * was refused, or changed nothing, gets a commit of its records under the same kind of message.
 */
async function commitTurn(ctx: LaneContext, turn: TurnRecord, turnCommit: string | null): Promise<string> {
  const message = commitMessage(turn.role, turn.step, turn.feature, turn.item);
  if (turnCommit !== null && turn.verdict === 'accepted' && (await ctx.ws.head()) === turnCommit) {
    const sha = await ctx.ws.amendPaths([featureDirOf(ctx.feature)]);
    ctx.store.committed();
    return sha;
  }
  // A change the proof rejected keeps its own commit (the attempt stays in the history); the revert
  // that follows it, with the records, is the second.
  if (turnCommit !== null) {
    const sha =
      (await ctx.ws.commitPaths(
        [featureDirOf(ctx.feature), ...turn.filesChanged],
        `${message} (${turn.verdict}, reverted)`,
      )) ?? (await ctx.ws.head());
    ctx.store.committed();
    return sha;
  }
  return commitRecords(ctx, `${message} (${turn.verdict === 'accepted' ? 'no changes' : `${turn.verdict}, reverted`})`);
}

export async function runBuildLane(input: BuildLaneInput): Promise<BuildRunResult> {
  if (input.config.suite.reports.length === 0) {
    throw new ConsortError(
      'config',
      'The TDD lane proves red and green per test, so it needs the JUnit reports your suite writes.',
      {
        hint: 'Set suite.reports in the Consort configuration (e.g. reports: junit.xml).',
      },
    );
  }
  const ws = input.workspace;
  const store = new FeatureStore(ws.dir, input.feature);
  if (!(await store.exists())) await store.load(); // throws the "no such feature" error
  const release = await lockfile
    .lock(ws.dir, { lockfilePath: path.join(ws.gitDir, `consort-${input.feature}.lock`), realpath: false, retries: 0 })
    .catch((e: unknown) => {
      throw new ConsortError('branch-busy', `Another consort run is working on ${input.feature}.`, {
        hint: 'Wait for it to finish.',
        cause: e,
      });
    });
  // Under bubblewrap every isolated command of the run (agents, suites, the migration child that
  // applies agents' migrations) sees the repository's git directory read-only.
  const unprotect = input.processes.protect?.(agentReadOnly(ws)) ?? (() => undefined);
  // The conductor's git reads git's global configuration as it is now, never what the run's
  // untrusted code writes to the home folder (src/git/pinned-config.ts).
  let unpin: () => Promise<void> = async () => undefined;
  try {
    if (ws.pinGitConfig) unpin = await ws.pinGitConfig();
    return await drive(input, ws, store);
  } finally {
    await unpin().catch(() => undefined);
    unprotect();
    await release().catch(() => undefined);
  }
}

async function drive(input: BuildLaneInput, ws: Workspace, store: FeatureStore): Promise<BuildRunResult> {
  let file = await store.load();
  const time = timer(input.onTiming);
  // What a killed run left next to the workspace (its proofs' worktrees and copies) goes first.
  const stale = await removeStaleTrees(ws, input.processes).catch(() => [] as string[]);
  if (stale.length > 0) input.log?.(`removed what a killed run left next to the repository: ${stale.join(', ')}`);
  // Before any agent of this run works: what proofs install from (src/lanes/tdd/clean-tree.ts).
  const deps = await time('deps', () => snapshotDependencies(ws, input.processes));
  // A copy beside the repository (no npm lockfile) is read-only to every isolated command of the
  // run, not only to turns and suites: the migration child runs agents' JS migrations when a proof
  // applies them, and its owner could make the copy writable again (`chmod`) and patch what every
  // later proof runs. (A kept install lies in the git directory, protected above.)
  const unprotectDeps = deps.copied.size > 0 ? (input.processes.protect?.([deps.root]) ?? null) : null;
  const { processes } = input;
  const ctx: LaneContext = {
    ws,
    config: input.config,
    feature: input.feature,
    store,
    provider: input.provider,
    env: input.env,
    processes,
    deps,
    trees: proofTrees(ws),
    agentEnv: input.agentEnv ?? input.env,
    secrets: input.secrets ?? secretValues(input.agentEnv ?? input.env),
    branches: createBranches({
      provider: input.provider,
      config: input.config,
      ws,
      git: input.git,
      env: input.env,
      processes,
      migrations: input.migrations,
      schemas: input.schemas,
      baseCommit: file.baseCommit,
      time,
      ...(input.migrationsLimit ? { migrationsLimit: input.migrationsLimit } : {}),
      ...(input.signal ? { signal: input.signal } : {}),
      // Copied before any agent of this run worked (or the install outside the repository a linked
      // `node_modules` led to then): the project's engine loads from there, never through the work tree.
      ...(deps.links.has('node_modules') ? { modules: deps.links.get('node_modules')! } : {}),
      ...(input.log ? { log: (line: string) => input.log!(`  ${line}`) } : {}),
    }),
    backends: input.backends ?? backendFactory(input.agents),
    log: input.log ?? (() => undefined),
    now: input.now ?? (() => new Date()),
    time,
    ...(input.signal ? { signal: input.signal } : {}),
    ...(input.onSuiteOutput ? { onSuiteOutput: input.onSuiteOutput } : {}),
    ...(input.onGate ? { onGate: input.onGate } : {}),
    ...(input.approvalCounts ? { approvalCounts: input.approvalCounts } : {}),
  };
  /** Whether `file` holds progress not yet written (records are journaled lazily: they are idempotent). */
  let unsaved = false;
  const save = async (next: StateFile) => {
    file = next;
    unsaved = false;
    await ctx.time('journal', () => store.save(file));
  };
  const apply = async (event: ConductorEvent) => {
    const t = await ctx.time('transition', async () => transition(file.state, event));
    await save({ ...file, state: t.state, pending: t.effects, done: 0, inFlight: null });
  };
  let effects = 0;
  let turns = 0;
  let costUsd = 0;
  /** The commit the current turn's changes went into (reset when a turn starts). */
  let turnCommit: string | null = null;
  /** A turn whose record is written but not yet committed and reported (onTurn). */
  let settled: TurnRecord | null = null;
  /**
   * Before the next action (or the end of the run): the settled turn's records, and the records
   * its batch wrote after it, join the turn's commit, so each turn is one commit; then onTurn.
   */
  const flushTurn = async () => {
    if (settled === null || !input.onTurn) return;
    const record = settled;
    settled = null;
    await save(file);
    const head = await commitTurn(ctx, record, turnCommit);
    await input.onTurn(record, { commit: turnCommit === null ? null : head, head });
    turnCommit = null;
  };
  const result = (stop: RunStop, message: string): BuildRunResult => ({
    feature: input.feature,
    stop,
    message,
    state: file.state,
    effects,
    turns,
    costUsd: Math.round(costUsd * 1e6) / 1e6,
  });
  const loop = async (): Promise<BuildRunResult> => {
    const resuming = file.done < file.pending.length;
    /** This run's settings are not yet compared with those the resumed batch was planned under. */
    let settingsDue = resuming;
    /** The resumed batch's action was under way when its run ended: it finishes as it began. */
    let underWay = resuming && file.inFlight !== null;
    const interrupted = underWay;
    if (resuming && file.inFlight?.base) {
      const base = file.inFlight.base;
      // The records the turn found uncommitted are put back after its changes are set aside.
      const kept = await store.pendingFor(ws.gitDir, base);
      const message = `consort: ${input.feature}: changes since ${base.slice(0, 7)}, set aside on resuming an interrupted turn`;
      const stash = await ws.setAsideSince(base, message);
      ctx.log(
        `Resuming ${input.feature}: back to ${base.slice(0, 7)}, where the interrupted turn began.${stash ? ` Its changes, and any made since, are kept in git's stash ("${message}", ${stash.slice(0, 7)}): git stash list.` : ''}`,
      );
      await store.restorePending(kept);
      await save({ ...file, inFlight: null });
    } else {
      // Also when a run stopped between turns (--max-turns, --until, a budget) resumes: a change made
      // since is a person's, and the next turn would take it for its agent's and revert it. Only the
      // last turn's own paths may be waiting, for the commit or revert still pending.
      const waiting = new Set(
        file.pending.slice(file.done).flatMap((e) => (e.type === 'commit' || e.type === 'revert' ? e.paths : [])),
      );
      const dirty = (await ws.dirtyOutside([featureDirOf(input.feature)])).filter((p) => !waiting.has(p));
      if (dirty.length > 0) {
        throw new ConsortError(
          'invalid-input',
          `The working tree has uncommitted changes outside ${featureDirOf(input.feature)}: ${dirty.slice(0, 5).join(', ')}${dirty.length > 5 ? ', …' : ''}.`,
          {
            hint: 'Commit or stash them first: every turn is judged by what it changes, so the tree must start clean.',
          },
        );
      }
      if (!resuming) await apply(await startEvent(ctx, input, file.state, file.baseCommit));
    }
    let mark = performance.now();
    for (;;) {
      if (file.done >= file.pending.length) {
        const stop = file.pending.findLast((e) => e.type === 'stop');
        return stop?.type === 'stop'
          ? result(stop.reason, stop.message)
          : result('stalled', 'the conductor asked for nothing');
      }
      const effect = file.pending[file.done]!;
      if (input.maxEffects !== undefined && effects >= input.maxEffects)
        return result('max-effects', `stopped after ${count(effects, 'effect')}`);
      if (!isAction(effect)) {
        const sha = await ctx.time(`effect:${effect.type}`, () => performRecord(ctx, effect));
        if ((effect.type === 'commit' || effect.type === 'adopt-experiment') && sha) turnCommit = sha;
        effects += 1;
        if (effect.type === 'append-turn') {
          costUsd += effect.record.usage.costUsd ?? 0;
          settled = effect.record;
        }
        // Records are idempotent: repeating one after a crash is harmless, so only git changes
        // (after which state.json must be rewritten anyway: a revert resets it) are journaled at once.
        file = { ...file, done: file.done + 1 };
        unsaved = true;
        if (
          effect.type === 'revert' ||
          effect.type === 'commit' ||
          effect.type === 'adopt-experiment' ||
          file.done === file.pending.length
        )
          await save(file);
        continue;
      }
      await flushTurn();
      if (settingsDue && !underWay) {
        settingsDue = false;
        const start = await startEvent(ctx, input, file.state, file.baseCommit);
        const changes = policyChanges(file.state.policy, start.policy);
        if (changes.length > 0) {
          ctx.log(settingsNotice(input.feature, changes, interrupted));
          await apply(start);
          continue;
        }
      }
      underWay = false;
      if (effect.type === 'check-gate' && effect.gate === input.until)
        return result('until', `stopped before the ${effect.gate} gate (--until)`);
      const turnNext = effect.type === 'run-turn' || effect.type === 'run-experiments';
      if (turnNext && input.maxTurns !== undefined && turns >= input.maxTurns)
        return result('max-turns', `stopped after ${count(turns, 'turn')}, the most one run may take (max-turns)`);
      if (turnNext && input.maxCostUsd !== undefined && costUsd >= input.maxCostUsd)
        return result(
          'max-cost',
          `stopped after ${count(turns, 'turn')}, which cost $${costUsd.toFixed(4)}: the limit is $${input.maxCostUsd} (max-cost-usd)`,
        );
      if (input.deadline !== undefined && Date.now() >= input.deadline)
        return result('time-limit', `stopped after ${count(turns, 'turn')} at the time limit (time-limit)`);
      // An action interrupted before its result is applied runs again on resume: a proof or a gate
      // check simply repeats; a turn is first rolled back to the base it journals before the agent starts.
      const index = file.done;
      let outcome: Awaited<ReturnType<typeof performAction>>;
      try {
        outcome = await performAction(ctx, file.state, effect, (base) => save({ ...file, inFlight: { index, base } }));
      } catch (e) {
        if (input.signal?.aborted) return result('interrupted', 'the run was interrupted; `consort run` resumes it');
        throw e;
      }
      if (input.signal?.aborted) return result('interrupted', 'the run was interrupted; `consort run` resumes it');
      const ended = performance.now();
      const event = outcome.event({
        totalMs: Math.round(ended - mark),
        agentMs: outcome.spent.agentMs,
        suiteMs: outcome.spent.suiteMs,
      });
      mark = ended;
      effects += 1;
      if (effect.type === 'run-turn') turns += 1;
      if (effect.type === 'run-experiments') turns += effect.turns.length;
      await apply(event);
    }
  };
  try {
    const outcome = await loop();
    if (outcome.stop !== 'interrupted') await flushTurn();
    if (unsaved) await save(file);
    // A clean stop leaves the repository holding the state (a stateless CI run pushes it as is);
    // an interrupted run leaves the turn in flight uncommitted, for the next run to roll back.
    if (outcome.stop !== 'interrupted') {
      await commitRecords(ctx, `consort: ${input.feature} ${outcome.stop}`);
      await store.dropPending(ws.gitDir).catch(() => undefined);
    }
    return outcome;
  } finally {
    if (unsaved) await save(file).catch((e: unknown) => ctx.log(`could not save the run state: ${String(e)}`));
    await ctx
      .time('settle', () => ctx.branches.settle())
      .catch((e: unknown) => ctx.log(`could not remove every branch: ${String(e)}`));
    await ctx.trees?.dispose().catch((e: unknown) => ctx.log(`could not remove a proof's worktree: ${String(e)}`));
    await ws.settle?.().catch((e: unknown) => ctx.log(`could not remove a proof's worktree: ${String(e)}`));
    unprotectDeps?.();
    await deps.dispose().catch((e: unknown) => ctx.log(`could not remove ${deps.root}: ${String(e)}`));
  }
}
