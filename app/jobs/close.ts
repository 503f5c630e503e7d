/**
 * A pull request closed: its database branches are deleted. When it was merged into the repository's default branch and promotion is
 * on (`database.promote` in the repository's configuration at the merge commit, or
 * CONSORT_APP_PROMOTE=1 for every repository), the merged migrations are promoted to the parent branch (see promote.ts) and the outcome is
 * posted on the pull request. Promotion holds the repository lock alone, so no check forks the
 * parent while it changes.
 */
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { cleanupPull } from '../../src/lanes/check/cleanup.js';
import { promote, promoteComment, type PromoteOutcome } from '../promote.js';
import { configuredProvider, everyProvider, repositoryNamespace } from '../providers.js';
import { withRepositoryLock } from '../store/db.js';
import type { Run, RunResult } from '../store/runs.js';
import { isConsortError } from '../../src/core/errors.js';
import { resolveEngine, type MigrationEngine } from '../../src/migrations/engine.js';
import { readMigrationSet } from '../../src/migrations/files.js';
import { migrationPlacement } from '../../src/migrations/placement.js';
import { prepareTypeScript, type LoaderHandle } from '../../src/migrations/ts-loader.js';
import { checkoutCommit, workspaceOptions } from '../workspace.js';
import { sameAsCommit } from '../tree-check.js';
import { runContext, type JobDeps } from './deps.js';
import { count } from '../../src/core/plural.js';

export async function closeRun(deps: JobDeps, run: Run, signal: AbortSignal): Promise<RunResult> {
  if (run.pr === null) return { state: 'completed', conclusion: 'skipped', summary: 'not a pull request' };
  // Wherever the pull request's branches are: the repository may have changed provider meanwhile.
  const deleted: string[] = [];
  for (const provider of await everyProvider(deps.providers, run.repositoryId))
    deleted.push(...(await cleanupPull(provider, run.pr)));
  const removed = deleted.length === 0 ? 'no branches to delete' : `deleted ${deleted.join(', ')}`;
  if (!run.merged || signal.aborted) return { state: 'completed', conclusion: 'success', summary: removed };

  const gh = await deps.github(run.installationId, runContext(run));
  const workspace = await checkoutCommit(gh, run, run.headSha, workspaceOptions(deps.settings));
  try {
    let loaded;
    try {
      loaded = await loadConfig(workspace.dir);
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      await gh.createComment(
        run,
        run.pr,
        `### ⚠️ Consort did not promote the migrations\n\nThe Consort configuration at the merge commit is invalid:\n\n\`\`\`text\n${e.message}\n\`\`\``,
      );
      return { state: 'completed', conclusion: 'failure', summary: `${removed}; not promoted: invalid configuration` };
    }
    const { config, source } = loaded;
    // The repository opts in with database.promote; CONSORT_APP_PROMOTE=1 turns it on App-wide.
    if (!config.database.promote && !deps.settings.promote)
      return { state: 'completed', conclusion: 'success', summary: removed };
    const chosen = await configuredProvider(deps.providers, run.repositoryId, workspace.dir, source);
    if (!chosen.ok) {
      await gh.createComment(run, run.pr, `### ⚠️ Consort did not promote the migrations\n\n${chosen.message}`);
      return { state: 'completed', conclusion: 'failure', summary: `${removed}; not promoted: provider not offered` };
    }
    const { provider } = chosen;
    // Promoted only as committed: the tarball's migrations are the merge commit's own (tree-check.ts).
    await sameAsCommit(gh, run, run.headSha, workspace.dir, config.migrations.dir);
    // What the checks applied, the deploy applies: the project's node-pg-migrate (or the one its
    // lockfile pins) with its TypeScript loader, and its order check.
    const dir = path.join(workspace.dir, config.migrations.dir);
    let engine: MigrationEngine;
    let typescript: LoaderHandle;
    try {
      const migrationsDir = config.migrations.dir;
      engine = await resolveEngine(workspace.dir, { migrationsDir, env: deps.settings.suiteEnv });
      const files = (
        await readMigrationSet(dir, {
          relativeTo: workspace.dir,
          missingOk: true,
          ignorePattern: config.migrations.ignorePattern,
        })
      ).map((m) => m.file);
      typescript = await prepareTypeScript(engine, workspace.dir, files, {
        migrationsDir,
        env: deps.settings.suiteEnv,
      });
      engine = typescript.engine;
    } catch (e) {
      if (!isConsortError(e)) throw e;
      await gh.createComment(
        run,
        run.pr,
        `### ⚠️ Consort did not promote the migrations\n\n${e.message}${e.hint ? `\n\n${e.hint}` : ''}`,
      );
      return { state: 'completed', conclusion: 'failure', summary: `${removed}; not promoted: ${e.message}` };
    }
    const outcome: PromoteOutcome = await withRepositoryLock(deps.store, run.repositoryId, 'exclusive', () =>
      promote({
        provider,
        parent: config.database.parent,
        placement: migrationPlacement(config.migrations),
        dir,
        relativeTo: workspace.dir,
        pr: run.pr!,
        mergeSha: run.headSha,
        engine,
        checkOrder: config.migrations.checkOrder,
      }),
    ).finally(() => typescript.dispose());
    const cli = `CONSORT_POSTGRES_URL=<the App's branch server> npx consort --provider postgres --namespace ${repositoryNamespace(run.repositoryId)}`;
    await gh.createComment(run, run.pr, promoteComment(outcome, { parent: config.database.parent, cli }));
    const promoted =
      outcome.kind === 'promoted'
        ? `promoted ${count(outcome.applied.length, 'migration')}`
        : `promotion ${outcome.kind}: snapshot ${outcome.snapshot}`;
    return {
      state: 'completed',
      conclusion: outcome.kind === 'promoted' ? 'success' : 'failure',
      summary: `${removed}; ${promoted}`,
    };
  } finally {
    await workspace.dispose();
  }
}
