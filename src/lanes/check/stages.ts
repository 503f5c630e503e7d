/**
 * Building blocks for the CheckReport's stage records, shared by the lane's steps. A stage's
 * record comes from its own settled result: what it returned, or — when it threw — `error` with
 * the message (`skipped`, "cancelled", when the run was cancelled), so with stages side by side
 * the stage that failed is the stage reported.
 */
import type { ConsortConfig } from '../../config/schema.js';
import { redact } from '../../core/redact.js';
import type { Clock } from '../../ports/clock.js';
import type { Log } from '../../ports/log.js';
import type { StageName, StageStatus, Stages } from '../../report/check-report.js';
import { CheckCancelled } from './cancel.js';

export function isBlocking(stage: StageName, config: ConsortConfig): boolean {
  if (stage === 'plan' || stage === 'baseline') return true;
  if (stage === 'schemaDiff') return false;
  return (config.check.blocking as readonly string[]).includes(stage);
}

export function initialStages(config: ConsortConfig, reason = 'not run'): Stages {
  const s = (stage: StageName) => ({
    status: 'skipped' as StageStatus,
    blocking: isBlocking(stage, config),
    durationMs: 0,
    summary: reason,
  });
  return {
    plan: { ...s('plan'), newMigrations: [], problems: [] },
    baseline: { ...s('baseline'), name: null, reused: false, applied: [], seeded: false },
    migrations: { ...s('migrations'), applied: [] },
    lint: { ...s('lint'), findings: [], squawkVersion: null },
    reversibility: { ...s('reversibility'), migrations: [] },
    schemaDiff: { ...s('schemaDiff'), text: '', counts: [] },
    suite: {
      ...s('suite'),
      command: config.suite.command,
      exitCode: null,
      timedOut: false,
      tests: null,
      failures: [],
      outputTail: '',
    },
  };
}

/** Time a stage and merge what it returns into its record; a stage that throws is recorded, then the error goes on. */
export async function runStage<K extends StageName>(
  stages: Stages,
  name: K,
  ports: { log: Log; clock: Clock },
  fn: () => Promise<Partial<Stages[K]> & { status: StageStatus; summary: string }>,
  /** When the stage's work really began (clock.monotonicMs), if before this call: its duration counts from then. */
  startedAtMs?: number,
): Promise<Stages[K]> {
  const { log, clock } = ports;
  const t0 = startedAtMs ?? clock.monotonicMs();
  log.info(`▸ ${name}…`);
  let result: Partial<Stages[K]> & { status: StageStatus; summary: string };
  try {
    result = await fn();
  } catch (e) {
    const durationMs = Math.round(clock.monotonicMs() - t0);
    const cancelled = e instanceof CheckCancelled;
    const summary = cancelled ? 'cancelled' : redact(e instanceof Error ? e.message : String(e));
    stages[name] = { ...stages[name], status: cancelled ? 'skipped' : 'error', summary, durationMs } as Stages[K];
    log.info(`  ${cancelled ? '–' : '!'} ${name}: ${summary} (${durationMs} ms)`);
    throw e;
  }
  const record = { ...stages[name], ...result, durationMs: Math.round(clock.monotonicMs() - t0) } as Stages[K];
  stages[name] = record;
  log.info(
    `  ${result.status === 'passed' ? '✓' : result.status === 'skipped' ? '–' : '✗'} ${name}: ${result.summary} (${record.durationMs} ms)`,
  );
  return record;
}

export function skip<K extends StageName>(stages: Stages, names: readonly K[], summary: string): void {
  for (const n of names) if (stages[n].status === 'skipped') stages[n] = { ...stages[n], summary };
}
