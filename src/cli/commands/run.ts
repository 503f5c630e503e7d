/** `consort run [feature]`: drive a feature through design, gates and red/green/refactor cycles. */
import { Command } from 'commander';
import type { GateName } from '../../conductor/state.js';
import type { ConsortConfig } from '../../config/schema.js';
import type { Effect } from '../../conductor/effects.js';
import type { AgentBackends } from '../../ports/agent-backend.js';
import { printJson } from '../output.js';
import { usageError } from '../usage.js';
import { describeEffect, type Ctx, laneConfig, laneConfigFile, withLaneProvider } from './lane.js';

interface RunFlags {
  until?: string;
  maxTurns?: string;
  dryRun?: boolean;
  gates?: string;
  retry?: boolean;
  config?: string;
  verbose?: boolean;
  experiments?: string;
}

/**
 * The line a run prints when it stops at a gate: what keeps it from being approved (invalid
 * artifacts), or what the person approving must read first (flagged lines, which only proxy mode
 * does not pass), and the command that approves it.
 */
export function gateNotice(
  feature: string,
  gate: string,
  problems: readonly string[],
  flags: readonly string[],
): string {
  const approve = `consort approve ${feature} ${gate} --as <name>`;
  if (problems.length)
    return `Gate ${gate} cannot be approved yet: ${problems.slice(0, 3).join('; ')}${problems.length > 3 ? ` (and ${problems.length - 3} more)` : ''}. Fix the artifacts, then \`consort run ${feature}\` checks the gate again.`;
  if (flags.length) return [`Gate ${gate} needs approval.`, ...flaggedLines(flags), `Then: ${approve}`].join('\n');
  return `Gate ${gate} needs approval: ${approve}`;
}

/**
 * The merge gate's flags as the terminal shows them (the run's stop and `consort approve`'s
 * prompt): not problems — a person may approve — but what that person reads first.
 */
export function flaggedLines(flags: readonly string[]): string[] {
  if (flags.length === 0) return [];
  const one = flags.length === 1;
  return [
    `Read first: ${one ? 'a line' : `${flags.length} lines`} the feature added ${one ? 'looks' : 'look'} like code that behaves differently under test or reaches into the test framework (--gates proxy does not pass a flagged gate; a person may):`,
    ...flags.slice(0, 10).map((f) => `  ${f}`),
    ...(flags.length > 10 ? [`  … and ${flags.length - 10} more`] : []),
  ];
}

/** Normal pauses exit 0; a run that needs a human for anything but a gate exits 1. */
const FAILED_STOPS = new Set(['escalated', 'stalled', 'interrupted']);

/**
 * What to do after a run that stopped short: an escalated or stalled feature stays stopped until
 * `--retry` (a plain `consort run` only repeats the stop), an interrupted one resumes by itself.
 */
const NEXT_STEP: Partial<Record<string, (feature: string) => string>> = {
  escalated: (f) =>
    `Needs a human: fix what it names (the agent, its setup, or the artifact by hand), then resume with \`consort run ${f} --retry\`.`,
  stalled: (f) =>
    `Resume with \`consort run ${f} --retry\` (a stall is a conductor bug: \`consort log ${f}\` shows where it happened).`,
  interrupted: (f) => `Resume with \`consort run ${f}\`.`,
};

/** Kept here (not imported from the conductor) so a wrong flag is refused before anything loads. */
export const GATE_NAMES = ['plan', 'test_list', 'spec', 'merge', 'deploy'] as const;

export function parseRunFlags(flags: RunFlags): {
  until?: GateName;
  maxTurns?: number;
  gateMode?: 'human' | 'proxy';
  experiments?: number;
} {
  if (flags.until !== undefined && !(GATE_NAMES as readonly string[]).includes(flags.until)) {
    throw usageError(`--until must be a gate (${GATE_NAMES.join(', ')}), got "${flags.until}".`);
  }
  const maxTurns = flags.maxTurns === undefined ? undefined : Number(flags.maxTurns);
  if (maxTurns !== undefined && (!Number.isInteger(maxTurns) || maxTurns < 0))
    throw usageError(`--max-turns must be a whole number, got "${flags.maxTurns}".`);
  if (flags.gates !== undefined && flags.gates !== 'human' && flags.gates !== 'proxy')
    throw usageError(`--gates must be human or proxy, got "${flags.gates}".`);
  const experiments = flags.experiments === undefined ? undefined : Number(flags.experiments);
  if (experiments !== undefined && (!Number.isInteger(experiments) || experiments < 1 || experiments > 8))
    throw usageError(`--experiments must be a whole number from 1 to 8, got "${flags.experiments}".`);
  return {
    ...(flags.until ? { until: flags.until as GateName } : {}),
    ...(maxTurns !== undefined ? { maxTurns } : {}),
    ...(flags.gates ? { gateMode: flags.gates as 'human' | 'proxy' } : {}),
    ...(experiments !== undefined ? { experiments } : {}),
  };
}

/**
 * Every configured agent, and the agent of each role the next effects run, must be usable
 * (backend set, API key present) before the run commits anything: an error leaves the
 * repository exactly as it was.
 */
async function validateAgents(
  config: ConsortConfig,
  next: Effect[],
  env: NodeJS.ProcessEnv,
  agents: AgentBackends,
): Promise<void> {
  const { ROLES } = await import('../../conductor/roles.js');
  const { backendFactory } = await import('../../lanes/tdd/policy.js');
  const backendOf = backendFactory(agents);
  const roles = new Set<(typeof ROLES)[number]>();
  for (const role of ROLES) if ((config.roles[role]?.agent ?? config.agents.default) !== undefined) roles.add(role);
  for (const e of next) {
    if (e.type === 'run-turn') roles.add(e.turn.role);
    if (e.type === 'run-experiments') for (const t of e.turns) roles.add(t.role);
  }
  for (const role of roles) backendOf(role, config, env);
}

/** `consort run`: the TDD lane on a feature. */
export function runLaneCommand(ctx: Ctx): Command {
  return new Command('run')
    .description('run a feature: design turns, gates, then one red/green/refactor cycle per test-list item')
    .argument('[feature]', 'NNN-slug, NNN or slug (default: the only open feature)')
    .option('--until <gate>', 'stop before this gate (plan, test_list, spec, merge, deploy)')
    .option('--max-turns <n>', 'stop after this many agent turns (default: no limit)')
    .option('--dry-run', 'print the next effects and run nothing')
    .option('--gates <mode>', 'human (default) or proxy: approve valid artifacts automatically, logged')
    .option('--retry', 'resume an escalated or stalled feature')
    .option(
      '--experiments <n>',
      'N competing GREEN attempts per item (worktrees); the green one with the fewest changed lines wins',
    )
    .option(
      '--config <path>',
      'configuration file (default: .github/consort.yml, .github/consort.yaml or consort.config.json)',
    )
    .option('--verbose', "stream the suite's output to stderr")
    .action(async (ref: string | undefined, flags: RunFlags, cmd: Command) => {
      const options = parseRunFlags(flags);
      const c = await ctx(cmd);
      const config = await laneConfig(c, flags.config);
      const { planBuildRun, runBuildLane } = await import('../../lanes/tdd/index.js');
      const { resolveFeature } = await import('../../lanes/tdd/feature.js');
      const feature = await resolveFeature(c.root, ref);
      /** A run's end (or a done feature's), as JSON or a line and what to do next. */
      const report = (r: {
        feature: string;
        stop: string;
        message: string;
        state: { phase: string; step: string; gate: string | null };
        turns: number;
        effects: number;
      }): void => {
        if (c.json)
          printJson(c.io, {
            feature: r.feature,
            stop: r.stop,
            message: r.message,
            phase: r.state.phase,
            step: r.state.step,
            gate: r.state.gate,
            turns: r.turns,
            effects: r.effects,
          });
        else {
          c.io.out(`${r.feature}: ${r.stop} — ${r.message}`);
          const next = NEXT_STEP[r.stop]?.(r.feature);
          if (next) c.io.out(next);
        }
      };
      const adapters = await (await import('../ports.js')).tddAdapters(c);
      const { effects, settings } = await planBuildRun({
        workspace: adapters.workspace,
        config,
        feature,
        retry: flags.retry === true,
        ...options,
      });
      if (flags.dryRun) {
        if (c.json) printJson(c.io, { feature, effects, settings });
        else
          c.io.out(
            [
              `Next for ${feature} (dry run, nothing done):`,
              ...(settings ? [settings] : []),
              ...effects.map((e) => `  - ${describeEffect(e)}`),
            ].join('\n'),
          );
        return;
      }
      // A done feature has nothing left to run: no server, agent or clean tree is needed to say so.
      const { FeatureStore } = await import('../../lanes/tdd/store.js');
      const { state } = await new FeatureStore(c.root, feature).load();
      if (state.step === 'done') {
        report({
          feature,
          stop: 'done',
          message: 'nothing left to run (start the next feature with `consort feature new <slug>`)',
          state,
          turns: 0,
          effects: 0,
        });
        return;
      }
      await validateAgents(config, effects, c.env, adapters.agents);
      // Ctrl-C (or SIGTERM) stops the turn or suite under way and ends the run as `interrupted`,
      // with its records saved and its branches and worktrees removed; `consort run` resumes it.
      const { onTermination } = await import('../../lanes/check/cancel.js');
      const controller = new AbortController();
      const result = await withLaneProvider(c, config, (provider) =>
        onTermination(
          controller,
          () =>
            runBuildLane({
              ...adapters,
              config,
              ...(laneConfigFile(c, flags.config) !== undefined
                ? { configFile: laneConfigFile(c, flags.config)! }
                : {}),
              feature,
              provider,
              env: c.env,
              retry: flags.retry === true,
              ...options,
              log: (line) => c.io.err(line),
              onGate: (gate, _hash, problems, flags) => c.io.err(gateNotice(feature, gate, problems, flags)),
              ...(flags.verbose ? { onSuiteOutput: (s: string) => process.stderr.write(s) } : {}),
              signal: controller.signal,
            }),
          (line) => c.io.err(line),
          (sig) =>
            `${sig}: stopping ${feature} (the turn under way is thrown away; \`consort run\` resumes; ${sig} again to exit at once)`,
        ),
      );
      report(result);
      c.setExitCode(FAILED_STOPS.has(result.stop) ? 1 : 0);
    });
}
