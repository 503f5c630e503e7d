/**
 * The configuration a check judges with: the change's own file for how its code runs (the suite
 * command, the migrations directory), the base's for what decides the verdict (VerdictSettings:
 * blocking stages, lint policy, reversibility, the order rule, which files are migrations, where
 * they run and are recorded, the parent branch and the seed that fills its copy). A pull request that writes
 * `check.blocking: []`, `lint.failOn: none`, `reversibility.enabled: false` or `migrations.schema:
 * sandbox` into its own file gains nothing until that file is merged, as with
 * `check.migrationsRole`; what it changed is named, so the reviewer sees why.
 */
import type { ConsortConfig } from '../../config/schema.js';
import { PLACEMENT_KEYS, verdictSettings, type VerdictSettings } from './base-settings.js';
import type { CheckSide } from './plan.js';

export interface TrustedConfig {
  config: ConsortConfig;
  /** The change's own settings that were not used (config keys, e.g. `lint.failOn`). */
  ignored: string[];
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The keys of `head` that differ from `base`, as they are written in the configuration file. */
function differing(head: VerdictSettings, base: VerdictSettings): string[] {
  const keys: string[] = [];
  if (!same([...head.blocking].sort(), [...base.blocking].sort())) keys.push('check.blocking');
  for (const k of ['rules', 'failOn', 'severity'] as const)
    if (!same(head.lint[k], base.lint[k])) keys.push(`lint.${k}`);
  for (const k of ['enabled', 'requireDown'] as const)
    if (head.reversibility[k] !== base.reversibility[k]) keys.push(`reversibility.${k}`);
  if (head.checkOrder !== base.checkOrder) keys.push('migrations.checkOrder');
  if (head.ignorePattern !== base.ignorePattern) keys.push('migrations.ignorePattern');
  for (const k of PLACEMENT_KEYS) if (!same(head.placement[k], base.placement[k])) keys.push(`migrations.${k}`);
  if (head.parent !== base.parent) keys.push('database.parent');
  if (!same(head.seed, base.seed)) keys.push('database.seed');
  if (!same([...head.passEnv].sort(), [...base.passEnv].sort())) keys.push('suite.passEnv');
  return keys;
}

const seedless = ({ seed: _seed, ...rest }: ConsortConfig['database']): Omit<ConsortConfig['database'], 'seed'> => rest;

/** `head` with the base side's verdict settings; unchanged when the base carries none (no base, a file outside the repository). */
export function trustedConfig(head: ConsortConfig, base: Pick<CheckSide, 'settings'>): TrustedConfig {
  const v = base.settings?.verdict;
  if (!v) return { config: head, ignored: [] };
  // The base's placement whole: a key the base leaves out stays out (node-pg-migrate's default).
  const { schema: _schema, migrationsSchema: _migrationsSchema, ...own } = head.migrations;
  return {
    config: {
      ...head,
      check: { ...head.check, blocking: [...v.blocking] },
      lint: { ...v.lint, rules: [...v.lint.rules], severity: { ...v.lint.severity } },
      reversibility: { ...v.reversibility },
      migrations: { ...own, checkOrder: v.checkOrder, ignorePattern: v.ignorePattern, ...v.placement },
      database: { ...seedless(head.database), parent: v.parent, ...(v.seed ? { seed: { ...v.seed } } : {}) },
      suite: { ...head.suite, passEnv: [...v.passEnv] },
    },
    ignored: differing(verdictSettings(head), v),
  };
}

/** The log line and the plan stage's note for settings the change set that were not used. */
export function ignoredNote(ignored: readonly string[], base: Pick<CheckSide, 'ref' | 'settings'>): string | null {
  if (ignored.length === 0) return null;
  const source = base.settings?.source;
  const where = source ? `${source} on ${base.ref}` : `the defaults (${base.ref} has no Consort configuration)`;
  return `the change's own ${ignored.join(', ')} ${ignored.length === 1 ? 'is' : 'are'} not used: the merge gate is judged by ${where} until the change is merged`;
}
