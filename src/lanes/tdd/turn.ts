/**
 * One agent turn, as the driver runs it: the cycle's database branch brought up to date, the
 * context pack, the backend's turn, then the facts the conductor judges — every path changed since
 * the turn's base commit (commits the agent made itself are undone first, their changes kept), the
 * frozen tests' hashes, and whether the role delivered what it owes. The conductor's records are
 * not committed before the turn (they join the turn's own commit): what the store wrote and finds
 * unchanged is the conductor's, any other change to them the agent's.
 */
import { ConsortError } from '../../core/errors.js';
import type { ArtifactCheck, TurnOutcome } from '../../conductor/events.js';
import { buildContextPack, type SchemaSummary } from '../../conductor/context-pack.js';
import { crossCheck, parseArtifact, type FeatureSpec, type Review, type TestList } from '../../conductor/artifacts.js';
import type { TurnPlan } from '../../conductor/effects.js';
import { isDesignRole } from '../../conductor/moves.js';
import { OWED } from '../../conductor/roles.js';
import { redact } from '../../core/redact.js';
import type { Workspace } from '../../ports/workspace.js';
import type { Dependencies } from './clean-tree.js';
import type { LaneContext } from './context.js';
import { linksLeaving, linkTargets, modulesShadowing, testOwnedChanges, trackedAt } from './harness.js';
import { roleInstructions, roleReads } from './policy.js';
import type { FreshBranch } from './database.js';
import { gitDirsOf } from './git-dirs.js';
import { migrationFailed } from './proof.js';
import { featureDirOf, type FeatureStore, readText } from './store.js';

const ARTIFACTS = [
  'feature-request.md',
  'feature-spec.json',
  'architecture.json',
  'db-design.json',
  'ux-design.json',
  'test-list.json',
];

/** Commit the feature's folder whole (the conductor's records, and anything else in it). */
export async function commitRecords(ctx: LaneContext, message: string): Promise<string> {
  const sha = (await ctx.ws.commitPaths([featureDirOf(ctx.feature)], message)) ?? (await ctx.ws.head());
  ctx.store.committed();
  return sha;
}

/**
 * The design artifacts and the given workspace files (the frozen tests), as a pack may quote them.
 * Read side by side: one after the other, a dozen reads waited 10–14 ms on the thread pool before
 * every turn, beside the guard and git.
 */
async function artifactContents(ctx: LaneContext, extra: readonly string[] = []): Promise<Record<string, string>> {
  const files = [
    ...ARTIFACTS.map((name) => [`${featureDirOf(ctx.feature)}/${name}`, ctx.store.file(name)] as const),
    ...extra.map((file) => [file, `${ctx.ws.dir}/${file}`] as const),
  ];
  const texts = await Promise.all(files.map(([, full]) => readText(full)));
  const contents: Record<string, string> = {};
  files.forEach(([key], i) => {
    const text = texts[i];
    if (text !== undefined && text !== null) contents[key] = text;
  });
  return contents;
}

function specOf(contents: Record<string, string>, featureDir: string): FeatureSpec | undefined {
  const r = parseArtifact('feature-spec.json', contents[`${featureDir}/feature-spec.json`] ?? null);
  return r.ok ? (r.value as FeatureSpec) : undefined;
}

/** Did the role leave what it owes? Design roles: their artifact; a review: its verdict. */
async function owedChecks(
  ctx: LaneContext,
  plan: TurnPlan,
): Promise<{ owed: ArtifactCheck[]; facts: TurnOutcome['facts'] }> {
  const facts: TurnOutcome['facts'] = {};
  const check = async (file: string): Promise<{ check: ArtifactCheck; value?: unknown }> => {
    const result = parseArtifact(file, await readText(ctx.store.file(file)));
    if (!result.ok)
      return {
        check: {
          file,
          status: result.problems[0]?.endsWith('is missing') ? 'missing' : 'invalid',
          problems: result.problems,
        },
      };
    return { check: { file, status: 'valid', problems: [] }, value: result.value };
  };
  if (isDesignRole(plan.role)) {
    const { check: c, value } = await check(OWED[plan.role]);
    if (c.status === 'valid') {
      const contents = await artifactContents(ctx);
      const spec = specOf(contents, featureDirOf(ctx.feature));
      const problems =
        plan.role === 'test-strategist'
          ? crossCheck(spec, value as TestList)
          : plan.role === 'spec-author'
            ? crossCheck(value as FeatureSpec, undefined)
            : [];
      if (problems.length) return { owed: [{ ...c, status: 'invalid', problems }], facts };
      if (plan.role === 'spec-author') facts.userFacing = (value as FeatureSpec).userFacing;
    }
    return { owed: [c], facts };
  }
  if (plan.step === 'review' && plan.item) {
    const { check: c, value } = await check(`reviews/${plan.item.id}.json`);
    const review = value as Review | undefined;
    if (c.status === 'valid' && review && review.item !== plan.item.id)
      return {
        owed: [{ ...c, status: 'invalid', problems: [`the review is for ${review.item}, not ${plan.item.id}`] }],
        facts,
      };
    if (review) facts.review = { verdict: review.verdict, notes: review.notes };
    return { owed: [c], facts };
  }
  return { owed: [], facts };
}

export interface TurnRun {
  outcome: TurnOutcome;
  agentMs: number;
}

/**
 * The steps whose proof takes a worktree begun ahead (clean-tree.ts proofTrees). A tree begun at the
 * turn's base and moved to its commit is not a fresh checkout: the base's files keep the times (birth
 * time included, which nothing can set) of the turn's start, and only the turn's changes are written
 * at the proof, so a test can tell it apart by file times alone — "pass where src/ is younger than
 * me" passed in GREEN's prepared tree with nothing implemented, and failed in RED's fresh tree beside
 * it, so RED "held" (test/security/prepared-tree-age.test.ts). A proof that must pass (GREEN,
 * REFACTOR) runs in a fresh tree, as RED's tree proven beside GREEN does; RED's proof, which must
 * fail, may take one: a test that fails only in a prepared tree passes in both fresh trees of the
 * GREEN pair, and RED does not hold.
 */
export const PREPARED_TREE_STEPS: ReadonlySet<string> = new Set(['red']);

/** `onBase` lets the driver journal the base commit before the agent touches anything. */
export async function runTurn(
  ctx: LaneContext,
  plan: TurnPlan,
  onBase: (base: string) => Promise<void>,
): Promise<TurnRun> {
  // The sandbox is brought up to date while the records are committed (neither needs the other).
  const sandbox = ctx.branches.sandbox(plan.branch);
  sandbox.catch(() => undefined); // awaited (and thrown) in turnAt; a failed commit leaves it unawaited
  // Once per run the feature's folder is committed whole (a person's edit, a resumed run's state);
  // after that every record in it is the store's, and joins the next turn's commit.
  const base = ctx.store.tracksFolder
    ? await ctx.time('turn:head', () => ctx.ws.head())
    : await ctx.time('turn:commit-records', () =>
        commitRecords(ctx, `consort: ${ctx.feature} records before ${plan.id}`),
      );
  // The records not committed yet, kept for a resume that throws this turn away (back to base).
  await ctx.store.keepPending(ctx.ws.gitDir, base);
  await onBase(base);
  // The next branch needed (the proof after this turn, or the next cycle's sandbox) is forked while the agent works.
  if (plan.forkAhead) ctx.branches.prefork(plan.forkAhead.branch, plan.forkAhead.use);
  // GREEN's and REFACTOR's proofs prove RED's tree again beside them: that branch is forked ahead too
  // (kept at the proof only if it holds RED's tree's migrations: settleMigrations).
  if (plan.forkAhead?.recheck) ctx.branches.prefork(plan.forkAhead.recheck, 'proof');
  // So is RED's proof's worktree, at the base: the proof moves it to the turn's commit. Only RED's
  // (see PREPARED_TREE_STEPS).
  if (plan.forkAhead?.use === 'proof' && PREPARED_TREE_STEPS.has(plan.step)) ctx.trees?.prepare(base);
  return turnAt(ctx, plan, base, { branch: () => sandbox, transcripts: ctx.store });
}

/**
 * What an agent's turn may read but not change (bound read-only under bubblewrap, for every
 * backend): the proofs' pristine dependency copy, and the repository's git directory with the
 * workspace's `.git` entry — hooks, config, refs, objects, the index — so that nothing the agent
 * could plant there changes what git tells the conductor (src/git/guard.ts checks the same after
 * every turn where nothing can be bound). An agent's own `git add` or `git commit` fails there.
 */
export function agentReadOnly(ws: Pick<Workspace, 'gitDir' | 'top'>, deps?: Dependencies): string[] {
  return [...(deps?.copied.size ? [deps.root] : []), ...gitDirsOf(ws)];
}

export interface TurnPlace {
  /** The turn's database branch: the cycle's sandbox, or a fresh one for an experiment. */
  branch: () => Promise<FreshBranch>;
  /** Where the transcript goes (the main workspace's feature, also for a turn in a worktree). */
  transcripts: FeatureStore;
}

/** A turn from `base` in `ctx.ws` (the workspace, or an experiment's worktree). */
export async function turnAt(ctx: LaneContext, plan: TurnPlan, base: string, place: TurnPlace): Promise<TurnRun> {
  const { config, time } = ctx;
  const featureDir = featureDirOf(ctx.feature);
  const startedAt = ctx.now();
  // Independent preparations overlap: the database branch, the file list, the artifacts, the prompt.
  // The branch's schema and the agent's URL (the branch's own role, never the provider's admin
  // credentials) follow the branch, beside the rest.
  const database = time('turn:branch', place.branch).then(async (sandbox) => {
    const [schema, url] = await Promise.all([
      sandbox.migrations.ok ? time('turn:schema', () => ctx.branches.schema(plan.branch, sandbox.url)) : null,
      time('turn:branch', () => ctx.branches.untrusted(plan.branch, sandbox.url)),
    ]);
    // A request that failed (past migrations.timeout among them) is the agent's to know of, and the run's log.
    const failed = sandbox.migrations.ok
      ? undefined
      : `The migrations did not all apply to this branch: ${migrationFailed(ctx.branches, sandbox.migrations.failed)}. DATABASE_URL holds the migrations before that one; the next turn gets the branch forked afresh.`;
    if (failed) ctx.log(`  ${plan.id}: ${failed}`);
    return { schema: schema as SchemaSummary | null, url, failed };
  });
  // The base's tracked files, which the judge after the turn reads (trackedAt keeps them by commit):
  // listed now, beside the agent, rather than on the turn's critical path.
  void trackedAt(ctx.ws, base).catch(() => undefined);
  const [gitGuard, { schema, url, failed }, files, contents, instructions] = await Promise.all([
    time('turn:guard', () => ctx.ws.guardGit()),
    database,
    time('turn:git', () => ctx.ws.listFiles()),
    time('turn:artifacts', () => artifactContents(ctx, plan.frozen)),
    roleInstructions(ctx.ws.dir, config, plan.role),
  ]);
  const spec = specOf(contents, featureDir);
  const built = await time('turn:pack', async () =>
    buildContextPack({
      feature: ctx.feature,
      featureDir,
      plan,
      instructions,
      reads: roleReads(config, ctx.feature, plan.role),
      files,
      contents,
      acceptanceCriteria: spec?.stories.flatMap((s) => s.acceptanceCriteria) ?? [],
      schema,
      ...(failed === undefined ? {} : { database: failed }),
      layout: { tests: config.build.tests, migrations: config.migrations.dir, suite: config.suite.command },
    }),
  );
  const agent = ctx.backends(plan.role, config, ctx.agentEnv);
  ctx.log(
    `  ${plan.id} ${plan.role} ${plan.step}${plan.item ? ` ${plan.item.id}` : ''}${plan.attempt ? ` (attempt ${plan.attempt + 1})` : ''} …`,
  );
  const result = await time('turn:agent', () =>
    agent.backend.runTurn({
      role: plan.role,
      step: plan.step,
      feature: ctx.feature,
      item: plan.item?.id ?? null,
      instructions,
      ...(plan.experiment ? { experiment: { index: plan.experiment.index, of: plan.experiment.of } } : {}),
      contextPack: { pack: built.pack, json: built.json, markdown: built.markdown },
      workspace: ctx.ws.dir,
      writes: plan.writes,
      branchUrl: url,
      migrationEngine: (dir: string) => ctx.branches.migrationEngine(dir),
      readOnly: agentReadOnly(ctx.ws, ctx.deps),
      model: agent.model,
      budget: {
        timeoutMs: agent.timeoutMs,
        ...(agent.maxCostUsd === undefined ? {} : { maxCostUsd: agent.maxCostUsd }),
        ...(agent.maxTurns === undefined ? {} : { maxTurns: agent.maxTurns }),
      },
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    }),
  );
  // The conductor's records written since base (state.json's journal of this turn among them) are
  // its own while they hold exactly what it wrote; any other change to them, even to one git has
  // never seen, is the agent's (and refused).
  // First git's own control files: anything the agent planted there is put back before git runs again.
  const gitChanges = await time('turn:guard', () => gitGuard.restore());
  // No turn of any role can run without credentials: the run stops (the turn is rolled back on
  // resume) rather than trying the turn again and escalating to a person.
  if (result.signInRefused !== undefined)
    throw new ConsortError('config', `${plan.id} could not start: ${result.signInRefused}.`, {
      hint: 'Set the key, then run `consort run` again: it resumes with this turn, from where it started.',
    });
  const [diff, records] = await Promise.all([time('turn:git', () => ctx.ws.changesSince(base)), ctx.store.audit()]);
  const seen = new Set(diff.map((c) => c.path));
  const changes = [
    ...gitChanges,
    ...diff.filter((c) => !records.ours.has(c.path)),
    ...records.changed.filter((c) => !seen.has(c.path)),
  ];
  // A turn that wrote a migration may have applied it to its branch (run_suite, a shell): whether
  // the migration is kept or reverted, the next turn gets a fresh fork rather than that database.
  const migrationsDir = `${config.migrations.dir.replace(/\/+$/, '')}/`;
  if (changes.some((c) => c.path.startsWith(migrationsDir))) ctx.branches.invalidate(plan.branch);
  else ctx.branches.rekeyAhead(plan.branch);
  const [{ owed, facts }, hashes, testOwned, links, targets, shadows] = await time('turn:judge', () =>
    Promise.all([
      owedChecks(ctx, plan),
      ctx.ws.hashFiles(plan.frozen),
      testOwnedChanges(ctx.ws, base, changes, plan.frozen, config.build.tests, config.suite),
      linksLeaving(ctx.ws.dir, changes),
      linkTargets(ctx.ws.dir, changes),
      modulesShadowing(ctx.ws, base, changes),
    ]),
  );
  if (testOwned.length > 0) facts.testOwned = testOwned;
  if (links.length > 0) facts.links = links;
  if (Object.keys(targets).length > 0) facts.linkTargets = targets;
  if (shadows.length > 0) facts.shadows = shadows;
  // After the diff, so the transcript is the conductor's record, not part of the agent's change.
  // Whatever the backend did, no credential of the agent's environment is written anywhere.
  await time('turn:transcript', () =>
    place.transcripts.writeTranscript(
      plan.id,
      redact(result.transcript, [...ctx.secrets, new URL(url).password].filter(Boolean)),
    ),
  );
  return {
    agentMs: result.durationMs,
    outcome: {
      id: plan.id,
      role: plan.role,
      step: plan.step,
      item: plan.item?.id ?? null,
      attempt: plan.attempt,
      backend: agent.backend.name,
      model: agent.model,
      startedAt: startedAt.toISOString(),
      durationMs: result.durationMs,
      usage: result.usage,
      exit: result.exit,
      summary: redact(result.summary, ctx.secrets),
      base,
      changes,
      hashes,
      owed,
      facts,
      branch: plan.branch,
      context: { bytes: built.bytes, sha256: built.sha256 },
    },
  };
}
