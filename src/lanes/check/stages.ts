/** Building blocks for the CheckReport's stage records, shared by the lane's steps. */
import type { ConsortConfig } from '../../config/schema.js';
import type { StageName, StageStatus, Stages } from '../../report/check-report.js';

export function isBlocking(stage: StageName, config: ConsortConfig): boolean {
  if (stage === 'plan' || stage === 'baseline') return true;
  if (stage === 'schemaDiff') return false;
  return (config.check.blocking as readonly string[]).includes(stage);
}

export function initialStages(config: ConsortConfig, reason = 'not run'): Stages {
  const s = (stage: StageName) => ({ status: 'skipped' as StageStatus, blocking: isBlocking(stage, config), durationMs: 0, summary: reason });
  return {
    plan: { ...s('plan'), newMigrations: [], problems: [] },
    baseline: { ...s('baseline'), name: null, reused: false, applied: [], seeded: false },
    migrations: { ...s('migrations'), applied: [] },
    lint: { ...s('lint'), findings: [], squawkVersion: null },
    reversibility: { ...s('reversibility'), migrations: [] },
    schemaDiff: { ...s('schemaDiff'), text: '', counts: [] },
    suite: { ...s('suite'), command: config.suite.command, exitCode: null, timedOut: false, tests: null, failures: [], outputTail: '' },
  };
}

/** Time a stage and merge what it returns into its record. */
export async function runStage<K extends StageName>(
  stages: Stages,
  name: K,
  log: (line: string) => void,
  fn: () => Promise<Partial<Stages[K]> & { status: StageStatus; summary: string }>,
): Promise<Stages[K]> {
  const t0 = performance.now();
  log(`▸ ${name}…`);
  const result = await fn();
  const record = { ...stages[name], ...result, durationMs: Math.round(performance.now() - t0) } as Stages[K];
  stages[name] = record;
  log(`  ${result.status === 'passed' ? '✓' : result.status === 'skipped' ? '–' : '✗'} ${name}: ${result.summary} (${record.durationMs} ms)`);
  return record;
}

export function skip<K extends StageName>(stages: Stages, names: readonly K[], summary: string): void {
  for (const n of names) if (stages[n].status === 'skipped') stages[n] = { ...stages[n], summary };
}
