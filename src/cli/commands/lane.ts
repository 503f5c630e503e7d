/**
 * What the TDD lane's commands share: the configuration, the provider, and effects in words (the
 * lane's adapters come from the CLI's composition root, ../ports.ts).
 */
import path from 'node:path';
import type { ConsortConfig } from '../../config/schema.js';
import type { Effect } from '../../conductor/effects.js';
import type { BranchProvider } from '../../ports/branch-provider.js';
import type { CliContext } from '../context.js';
import { count } from '../../core/plural.js';

export type { Ctx } from '../context.js';

export async function laneConfig(c: CliContext, configPath: string | undefined): Promise<ConsortConfig> {
  const { loadConfig } = await import('../../config/load.js');
  return (await loadConfig(c.root, configPath ? { path: configPath } : {})).config;
}

/** `--config`'s file relative to the repository when it lies inside it (the TDD lane locks it); else undefined. */
export function laneConfigFile(c: CliContext, configPath: string | undefined): string | undefined {
  if (configPath === undefined) return undefined;
  const rel = path.relative(c.root, path.resolve(c.root, configPath)).split(path.sep).join('/');
  return rel === '' || rel === '..' || rel.startsWith('../') || path.isAbsolute(rel) ? undefined : rel;
}

/** The provider: --provider / CONSORT_PROVIDER when given, else the configuration's. */
export async function withLaneProvider<T>(
  c: CliContext,
  config: ConsortConfig,
  fn: (p: BranchProvider) => Promise<T>,
): Promise<T> {
  const { openProvider } = await import('../../branches/factory.js');
  const name = c.providerExplicit ? c.providerName : config.database.provider;
  const namespace = c.namespace ?? config.database.namespace;
  c.noteNamespace(name);
  const provider = await openProvider({
    provider: name,
    projectRoot: c.root,
    env: c.env,
    log: (m) => c.io.err(m),
    ...(namespace ? { namespace } : {}),
  });
  try {
    return await fn(provider);
  } finally {
    await provider.close();
  }
}

/** One line per effect, for --dry-run. */
export function describeEffect(e: Effect): string {
  switch (e.type) {
    case 'run-turn':
      return `run a ${e.turn.role} turn (${e.turn.step}${e.turn.item ? ` ${e.turn.item.id}` : ''}${e.turn.attempt ? `, attempt ${e.turn.attempt + 1}` : ''}) on branch ${e.turn.branch}`;
    case 'prove':
      return `prove ${e.purpose}${e.item ? ` for ${e.item}` : ''}: the suite on a fresh branch ${e.branch}`;
    case 'check-gate':
      return `check the ${e.gate} gate`;
    case 'run-experiments':
      return `run ${e.turns.length} competing driver GREEN turns${e.turns[0]?.item ? ` for ${e.turns[0].item.id}` : ''}, each in its own worktree, and prove each`;
    case 'adopt-experiment':
      return `adopt experiment ${e.index} (${e.turn}) and commit it`;
    case 'commit':
      return `commit ${count(e.paths.length, 'path')}: ${e.message}`;
    case 'revert':
      return `revert ${count(e.paths.length, 'path')} to ${e.base.slice(0, 7)}`;
    case 'append-turn':
      return `record turn ${e.record.id} (${e.record.verdict})`;
    case 'write-cycle':
      return `write cycle-${String(e.record.cycle).padStart(3, '0')}.json`;
    case 'set-item-status':
      return `mark ${e.item} ${e.status}`;
    case 'record-approval':
      return `record the ${e.gate} gate's approval by ${e.approval.approver}`;
    case 'log':
      return `log ${e.event.type}`;
    case 'surface-gate':
      return `ask for approval of the ${e.gate} gate`;
    case 'stop':
      return `stop: ${e.message}`;
  }
}
