/**
 * One pairing end to end, as the hook's background job and `consort pair` run it: configuration,
 * provider (flag / CONSORT_PROVIDER, else `database.provider`), pair, publish.
 */
import { loadConfig } from '../config/load.js';
import type { ConsortConfig } from '../config/schema.js';
import { openProvider, parseProviderName } from '../branches/factory.js';
import { redact } from '../core/redact.js';
import { describeUsed } from '../migrations/run-engine.js';
import type { BranchProvider } from '../ports/branch-provider.js';
import { pairingChildEnv } from './child-env.js';
import { currentGitBranch, git } from './git.js';
import { publishPairing, type EnvReport } from './publish.js';
import { pair, type PairResult } from './service.js';

export interface ProviderChoice {
  provider?: string;
  namespace?: string;
  log?: (m: string) => void;
}

export async function withPairingProvider<T>(
  root: string,
  env: NodeJS.ProcessEnv,
  config: ConsortConfig,
  choice: ProviderChoice,
  fn: (p: BranchProvider) => Promise<T>,
): Promise<T> {
  const name = parseProviderName(choice.provider ?? env.CONSORT_PROVIDER ?? config.database.provider);
  const namespace = choice.namespace ?? config.database.namespace;
  const provider = await openProvider({
    provider: name,
    projectRoot: root,
    env,
    ...(choice.log ? { log: choice.log } : {}),
    ...(namespace ? { namespace } : {}),
  });
  try {
    return await fn(provider);
  } finally {
    await provider.close();
  }
}

export interface PairRun {
  root: string;
  config: ConsortConfig;
  env: NodeJS.ProcessEnv;
  gitBranch: string;
  from?: string;
  migrate?: boolean;
  writeEnv?: boolean;
  onlyIfHead?: boolean;
  choice?: ProviderChoice;
}

export async function pairAndPublish(run: PairRun): Promise<{ result: PairResult; env: EnvReport }> {
  // The working tree's migrations are the checked-out branch's: another git branch's database
  // (--git-branch, or a hook job whose checkout has moved on since) must not get them.
  const head = run.migrate === false ? undefined : await currentGitBranch(run.root).catch(() => undefined);
  const elsewhere = head !== undefined && head !== run.gitBranch;
  return withPairingProvider(run.root, run.env, run.config, run.choice ?? {}, async (provider) => {
    const result = await pair({
      provider,
      config: run.config,
      root: run.root,
      gitBranch: run.gitBranch,
      env: pairingChildEnv(run.env),
      ...(run.from ? { from: run.from } : {}),
      ...(run.migrate === false ? { migrate: false } : {}),
      ...(elsewhere
        ? {
            notThisBranch: `${run.gitBranch} is not the checked-out git branch: the working tree holds ${head}'s migrations`,
          }
        : {}),
    });
    const config =
      run.writeEnv === false ? { ...run.config, pairing: { ...run.config.pairing, writeEnv: false } } : run.config;
    const env = await publishPairing({
      root: run.root,
      config,
      gitBranch: run.gitBranch,
      name: result.branch.name,
      url: result.url,
      onlyIfHead: run.onlyIfHead === true,
    });
    return { result, env };
  });
}

/** One line for the log and `consort hooks status`. */
export function describePairing({ result, env }: { result: PairResult; env: EnvReport }): string {
  const m = result.migrations;
  const engine = m.nodePgMigrate ? ` with ${describeUsed(m.nodePgMigrate)}` : '';
  const parts = [
    `${result.gitBranch} → ${result.branch.name} (${result.outcome}${result.outcome === 'created' ? ` from ${result.branch.parent}` : ''}, ${result.durationMs} ms)`,
    m.applied.length ? `applied ${m.applied.join(', ')}${engine}` : '',
    m.skipped ? `migrations not applied (${m.skipped})` : '',
    m.failed
      ? `migration ${m.failed.name ?? m.failed.file ?? ''} failed${m.applied.length ? '' : engine}: ${m.failed.message}`
      : '',
    result.seeded ? 'seeded' : '',
    env.status === 'written'
      ? `${env.key} written to ${env.file}`
      : env.status === 'skipped'
        ? `${env.file} not written`
        : '',
    env.warning ?? '',
  ];
  return redact(parts.filter(Boolean).join('; '), [result.url]);
}

/**
 * The hook's background job: after a pull (post-merge), only when it changed the migrations.
 * `ok` is false when a migration failed: the pairing stands, as `consort pair`'s does, but the run
 * failed as that command does (exit 1), so `hooks status` and `pair status` say FAILED.
 */
export async function runPairing(input: {
  root: string;
  gitBranch: string;
  from?: string;
  hook: string;
  env: NodeJS.ProcessEnv;
  /** What opening the provider says (the embedded server initialised or started): for the hooks' log. */
  log?: (m: string) => void;
}): Promise<{ ok: boolean; message: string }> {
  const { config } = await loadConfig(input.root);
  if (input.hook === 'post-merge') {
    const changed = await git(input.root, ['diff', '--quiet', 'ORIG_HEAD', 'HEAD', '--', config.migrations.dir]);
    if (changed.code === 0) return { ok: true, message: `${input.gitBranch}: the merge brought no migrations` };
  }
  const done = await pairAndPublish({
    root: input.root,
    config,
    env: input.env,
    gitBranch: input.gitBranch,
    onlyIfHead: true,
    ...(input.from ? { from: input.from } : {}),
    ...(input.log ? { choice: { log: input.log } } : {}),
  });
  return { ok: done.result.migrations.failed === null, message: describePairing(done) };
}
