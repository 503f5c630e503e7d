/**
 * How a run's settings differ from those the feature's last run stopped under, in words. A stopped
 * run leaves the next action planned under its own settings (the competing GREEN attempts it asked
 * for, the gate mode its next gate check is judged by); the driver compares before taking it up.
 */
import { isDeepStrictEqual } from 'node:util';
import { Policy } from './state.js';

/** What each field is to the person who set it: a flag of `consort run` or a key of the configuration. */
const LABELS: Record<keyof Policy, string> = {
  gateMode: 'gates (--gates, gates.mode)',
  experiments: 'experiments (--experiments, build.experiments)',
  featureDir: 'the feature folder',
  design: 'build.design',
  optionalGates: 'gates.optional',
  rejectBornGreen: 'build.rejectBornGreen',
  retries: 'build.retries',
  repairRounds: 'build.repairRounds',
  tests: 'build.tests',
  writes: "the roles' writes",
  ignore: 'suite.reports',
  harness: 'the test harness (the suite and seed commands)',
  locked: 'the locked paths (the configuration, the seed, the migrations on the base)',
};

const shown = (v: unknown) =>
  typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : null;

/**
 * One phrase per setting that differs ("gates (--gates, gates.mode): proxy → human"); none when
 * `next` is what `stored` already says. Defaults are applied to both sides first, so a field the
 * stored state predates does not count as a change.
 */
export function policyChanges(stored: Policy | null, next: Policy): string[] {
  if (stored === null) return [];
  const a = Policy.parse(stored);
  const b = Policy.parse(next);
  const changes: string[] = [];
  for (const key of Object.keys(LABELS) as (keyof Policy)[]) {
    if (isDeepStrictEqual(a[key], b[key])) continue;
    const [from, to] = [shown(a[key]), shown(b[key])];
    changes.push(from !== null && to !== null ? `${LABELS[key]}: ${from} → ${to}` : `${LABELS[key]} changed`);
  }
  return changes;
}
