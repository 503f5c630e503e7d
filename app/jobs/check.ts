/**
 * A check run for a pull request head or a merge group: the repository at the head SHA in a
 * temporary workspace (config read from there), the base's tree at the merge base, the PR
 * lane on the repository's branches, then the check run concluded with the report and, for a pull
 * request, the sticky comment updated. A cancelled run concludes `cancelled` with the reason.
 */
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { settingsInDir } from '../../src/lanes/check/base-settings.js';
import { withLeftBehind } from '../../src/lanes/check/sides.js';
import {
  cancelledOutcome,
  CHECK_NAME,
  checkReportComment,
  configOutcome,
  errorOutcome,
  forkWaitingOutcome,
  forkWaitingText,
  pullUrl,
  reportOutcome,
  STICKY_MARKER,
  stickyBody,
  type CheckOutcome,
} from '../check-output.js';
import type { GitHubPort } from '../../src/ports/github.js';
import { cancellable, configuredProvider } from '../providers.js';
import { upsertStickyComment } from '../../src/github/sticky-comment.js';
import { withRepositoryLock } from '../store/db.js';
import { forkRunApproval } from '../store/pulls.js';
import { setCheckRun, type Run, type RunResult } from '../store/runs.js';
import { checkoutCommit, treeSide, workspaceOptions, type Workspace } from '../workspace.js';
import { sameAsCommit } from '../tree-check.js';
import { LeaseLost, runContext, runLog, type JobDeps } from './deps.js';

export async function ensureCheckRun(deps: JobDeps, gh: GitHubPort, run: Run): Promise<number> {
  if (run.checkRunId !== null) return run.checkRunId;
  const known = { name: CHECK_NAME, headSha: run.headSha, externalId: String(run.id) };
  // An earlier attempt (the queue's retry, the sweep) may have made it and failed before its id was
  // saved: the look, the create's own retries or setCheckRun failed. A second would stay in progress.
  const made = await gh.findCheckRun(run, known);
  if (made !== null) {
    await setCheckRun(deps.store.pool, run.id, made);
    return made;
  }
  const id = await gh.createCheckRun(run, {
    ...known,
    output: {
      title: 'Checking the database changes',
      summary: `Consort is checking the migrations at \`${run.headSha.slice(0, 7)}\` on a fresh database branch.`,
    },
  });
  await setCheckRun(deps.store.pool, run.id, id);
  return id;
}

/** A fork's code runs only for a head SHA someone with write access approved. */
export async function forkBlocked(deps: JobDeps, run: Run): Promise<boolean> {
  return (
    run.fork && run.pr !== null && !(await forkRunApproval(deps.store.pool, run.repositoryId, run.pr, run.headSha))
  );
}

/** The comment that says how to approve comes first, so the check run can point at it (`details_url`). */
export async function reportForkWaiting(deps: JobDeps, gh: GitHubPort, run: Run, checkRunId: number): Promise<void> {
  const pr = run.pr ?? 0; // only pull requests come from forks
  const comment = await upsertStickyComment(
    gh,
    run,
    pr,
    stickyBody(`## ⏸️ ${CHECK_NAME}: waiting for approval\n\n${forkWaitingText(run.headSha)}\n`),
    { marker: STICKY_MARKER },
  );
  await gh.completeCheckRun(
    run,
    checkRunId,
    forkWaitingOutcome(run.headSha, pullUrl(deps.settings.githubWebUrl, run, pr, comment.commentId)),
  );
}

const outcomeResult = (o: CheckOutcome, state: RunResult['state'] = 'completed'): RunResult => ({
  state,
  conclusion: o.conclusion,
  summary: o.output.title,
});

/** A cancelled run concludes `cancelled`; one whose lease was lost stops without a word (another process owns it). */
async function ifAborted(
  signal: AbortSignal,
  finish: (o: CheckOutcome, state: RunResult['state']) => Promise<RunResult>,
): Promise<RunResult | undefined> {
  if (!signal.aborted) return undefined;
  if (signal.reason instanceof LeaseLost) throw signal.reason;
  return finish(cancelledOutcome(String(signal.reason)), 'cancelled');
}

export async function checkRun(deps: JobDeps, run: Run, signal: AbortSignal): Promise<RunResult> {
  const gh = await deps.github(run.installationId, runContext(run));
  const checkRunId = await ensureCheckRun(deps, gh, run);
  if (await forkBlocked(deps, run)) {
    // Defense in depth: the announcement blocks unapproved forks; a run must never get this far.
    await reportForkWaiting(deps, gh, run, checkRunId);
    return { state: 'completed', conclusion: 'action_required', summary: 'waiting for /consort allow-run' };
  }
  const finish = async (o: CheckOutcome, state: RunResult['state'] = 'completed'): Promise<RunResult> => {
    await gh.completeCheckRun(run, checkRunId, o);
    return outcomeResult(o, state);
  };
  const workspace = await checkoutCommit(gh, run, run.headSha, workspaceOptions(deps.settings));
  let baseTree: Workspace | undefined;
  try {
    let loaded;
    try {
      loaded = await loadConfig(workspace.dir);
    } catch (e) {
      if (e instanceof ConfigError)
        return await finish(configOutcome(e.problems[0]?.file ?? 'the configuration', e.problems));
      throw e;
    }
    const { config, source } = loaded;
    const baseSha = run.pr !== null ? await gh.mergeBase(run, run.baseSha, run.headSha) : run.baseSha;
    // Base's whole tree: its migrations run where their imports resolve, and its seed seeds the baseline.
    baseTree = await checkoutCommit(gh, run, baseSha, workspaceOptions(deps.settings));
    // What the PR may not grant itself (check.migrationsRole, the verdict's settings, where the
    // base's migrations are) comes from the base's own configuration.
    const baseSettings = await settingsInDir(baseTree.dir);
    const baseDir = baseSettings.migrationsDir ?? config.migrations.dir;
    // The tarballs' migrations are the commits' own, or nothing is checked (tree-check.ts).
    await sameAsCommit(gh, run, run.headSha, workspace.dir, config.migrations.dir);
    await sameAsCommit(gh, run, baseSha, baseTree.dir, baseDir);
    const base = await treeSide(baseTree.dir, { ...config, migrations: { ...config.migrations, dir: baseDir } });
    const head = await treeSide(workspace.dir, config);
    // A migration the PR leaves in the base's folder while its configuration reads another.
    const { leftBehind } = await withLeftBehind(
      undefined,
      { settings: baseSettings, tree: base.tree },
      { ...head, ref: run.headRef, sha: run.headSha },
      config.migrations.dir,
    );
    const chosen = await configuredProvider(deps.providers, run.repositoryId, workspace.dir, source);
    if (!chosen.ok) return await finish(errorOutcome(chosen.message));
    const { provider } = chosen;
    const early = await ifAborted(signal, finish);
    if (early) return early;
    const report = await withRepositoryLock(deps.store, run.repositoryId, 'shared', () =>
      deps.lane({
        workspace: workspace.dir,
        config,
        configSource: source,
        base: { ref: run.baseRef, sha: baseSha, ...base, settings: baseSettings },
        head: {
          ref: run.headRef,
          sha: run.headSha,
          migrations: head.migrations,
          tree: head.tree,
          ...(leftBehind ? { leftBehind } : {}),
        },
        pr: run.pr,
        provider: cancellable(provider, signal),
        ...deps.lanePorts,
        env: deps.settings.suiteEnv,
        toolVersion: deps.settings.toolVersion,
        // A merge group's branch is of no use once the queue has moved on.
        cleanup: run.pr === null,
        signal,
        // The lane's progress, with what an operator must be able to find: sessions it ended, leftovers it removed.
        log: runLog(deps.log, run.id),
      }),
    );
    const late = await ifAborted(signal, finish);
    if (late) return late;
    const result = await finish(reportOutcome(report));
    if (run.pr !== null)
      await upsertStickyComment(gh, run, run.pr, checkReportComment(report), { marker: STICKY_MARKER });
    return { ...result, report };
  } finally {
    await baseTree?.dispose();
    await workspace.dispose();
  }
}
