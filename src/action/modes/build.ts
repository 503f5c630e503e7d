/**
 * `mode: build` and `mode: approve` — the TDD lane on a pull request. A verified person with write
 * access asks (`/consort build <feature>`, the build label, a manual dispatch, or `/consort approve
 * <gate>`); the Action checks out the pull request's branch, runs the conductor until a gate, the
 * end, or a budget (turns, dollars, wall clock), and after every turn pushes its commits and posts
 * one review comment. A gate gets a pending `consort/gate/<gate>` status and a comment with the
 * command that approves it; the approval is recorded against the artifacts' hash and the head
 * commit, and the lane continues in the same run.
 *
 * Nothing an agent or a pull request says can approve a gate or widen a scope: approvals come only
 * from a comment by a person whose permission was checked through the API, scopes are enforced on
 * the diff by the conductor, and the agents' environment holds no GitHub token.
 */
import * as core from '@actions/core';
import { VERSION } from '../../cli/version.js';
import { loadConfig } from '../../config/load.js';
import { gatedFiles } from '../../conductor/gates.js';
import type { GateName, TurnRecord } from '../../conductor/state.js';
import { ConsortError } from '../../core/errors.js';
import { childEnv } from '../../core/child-env.js';
import { createPullRequestApi, type PullRequestApi, type PullRequestInfo, WRITE_PERMISSIONS } from '../../github/pull-requests.js';
import { commitPaths, type GitWorkspace, headCommit, openWorkspace } from '../../git/workspace.js';
import { type BuildRunResult, runBuildLane } from '../../lanes/build.js';
import { approveGate, createFeature, describeStep, FEATURE_SLUG, matchFeature, openFeatures } from '../../lanes/build/feature.js';
import { reopenedGates } from '../../lanes/build/gate-check.js';
import { agentKeyEnvNames } from '../../lanes/build/policy.js';
import { featureDirOf, FeatureStore, listFeatures, readText } from '../../lanes/build/store.js';
import { GATE_MARKER, renderGateComment, renderRunSummary, renderTurnReview } from '../../report/turn-markdown.js';
import { laneSuiteEnv, type ActionContext } from '../context.js';
import type { ActionInputs } from '../inputs.js';
import { setLaneOutputs } from '../outputs.js';
import { checkoutBranch, dropPersistedCredentials, type GitAuth, pushBranch } from '../lane/git.js';
import { type LaneRequest, laneRequest } from '../lane/trigger.js';
import { openActionProvider, prepareTools, providerName } from '../provider.js';
import { scrub } from '../secrets.js';
import { applyInputs } from './check.js';
import type { ModeResult } from './index.js';

export const REFUSED = 'only people with write, maintain or admin access to this repository can run the TDD lane, so nothing was done.';

type Asked = Exclude<LaneRequest, { kind: 'ignore' }>;

interface Session {
  inputs: ActionInputs;
  ctx: ActionContext;
  gh: PullRequestApi;
  auth: GitAuth;
  asked: Asked;
  pull: PullRequestInfo;
  repoUrl: string;
}

export const buildMode = (inputs: ActionInputs, ctx: ActionContext) => laneMode('build', inputs, ctx);
export const approveMode = (inputs: ActionInputs, ctx: ActionContext) => laneMode('approve', inputs, ctx);

async function laneMode(mode: 'build' | 'approve', inputs: ActionInputs, ctx: ActionContext): Promise<ModeResult> {
  const asked = laneRequest(mode, ctx.event, inputs.lane);
  if (asked.kind === 'ignore') {
    core.info(`Nothing to do: ${asked.why}.`);
    return { conclusion: 'success' };
  }
  if (!inputs.githubToken) {
    throw new ConsortError('invalid-input', `mode: ${mode} needs the github-token input (it checks permissions, pushes turns and posts comments).`, { hint: 'Leave github-token at its default, and give the job contents, pull-requests and statuses write permissions.' });
  }
  const gh = createPullRequestApi({
    token: inputs.githubToken, apiUrl: ctx.apiUrl, repo: ctx.repo, userAgent: `consort-action/${VERSION}`, onLimit: (m) => core.warning(m),
  });
  const reply = (text: string) => gh.comment(asked.pr, `@${asked.actor.login}, ${text}`);

  // Who asked is checked through the API for every request: the event says who, never what they may do.
  if (asked.actor.type === 'Bot') {
    core.info(`Nothing to do: ${asked.actor.login} is a bot.`);
    return { conclusion: 'success' };
  }
  const permission = await gh.permission(asked.actor.login);
  if (!WRITE_PERMISSIONS.includes(permission)) {
    if (asked.kind === 'approve' || asked.commentId !== null) {
      if (asked.commentId !== null) await gh.react(asked.commentId, 'confused');
      await reply(REFUSED);
    }
    core.warning(`${asked.actor.login} has ${permission} access to ${ctx.repo.owner}/${ctx.repo.repo}; the TDD lane needs write access. Nothing was done.`);
    return { conclusion: 'success' };
  }
  const pull = await gh.pull(asked.pr);
  if (pull.state !== 'open') {
    await reply(`#${pull.number} is ${pull.state}, so the TDD lane did not run.`);
    return { conclusion: 'success' };
  }
  if (pull.head.repo !== pull.base.repo) {
    await reply('this pull request comes from a fork: the TDD lane commits to the pull request\'s branch and runs agents with this repository\'s keys, so it runs only on branches of this repository.');
    return { conclusion: 'success' };
  }
  if (asked.commentId !== null) await gh.react(asked.commentId, 'eyes');

  const auth: GitAuth = { token: inputs.githubToken, serverUrl: ctx.serverUrl };
  const dropped = await dropPersistedCredentials(ctx.workspace);
  if (dropped.length > 0) core.notice(`Removed the credentials actions/checkout stored in .git/config (${dropped.join(', ')}), so no agent can read them; Consort pushes with its own token. Use persist-credentials: false to skip this.`);
  const head = await checkoutBranch(ctx.workspace, pull.head.ref, auth);
  core.info(`On ${pull.head.ref} at ${head.slice(0, 7)} (pull request #${pull.number}).`);
  const session: Session = { inputs, ctx, gh, auth, asked, pull, repoUrl: `${ctx.serverUrl}/${ctx.repo.owner}/${ctx.repo.repo}` };
  try {
    return await lane(session);
  } catch (e) {
    // Whatever went wrong, say so on the pull request, where the person who asked is looking.
    const why = e instanceof ConsortError ? `${e.message}${e.hint ? ` ${e.hint}` : ''}` : `unexpected error: ${e instanceof Error ? e.message : String(e)}`;
    await reply(scrub(`the TDD lane stopped: ${why}${ctx.runUrl ? ` ([workflow run](${ctx.runUrl}))` : ''}`)).catch(() => undefined);
    throw e;
  }
}

/** Features at a gate (for `/consort approve [<gate>]`). */
async function featuresAtGate(workspace: string, gate: string | null): Promise<{ feature: string; gate: GateName; hash: string | undefined }[]> {
  const found = [];
  for (const feature of await listFeatures(workspace)) {
    const { state } = await new FeatureStore(workspace, feature).load();
    if ((state.step === 'awaiting-approval' || state.step === 'gate') && state.gate && (gate === null || state.gate === gate)) {
      found.push({ feature, gate: state.gate, hash: state.surfaced[state.gate] });
    }
  }
  return found;
}

/** The feature a build request names: an existing one, or a new one created from the request. */
async function buildFeature(s: Session, ref: string | null, request: string | null): Promise<{ feature: string; created: boolean }> {
  const ws = s.ctx.workspace;
  const all = await listFeatures(ws);
  if (ref !== null) {
    const match = matchFeature(all, ref);
    if (match) return { feature: match, created: false };
    if (/^\d+$/.test(ref)) throw new ConsortError('invalid-input', `There is no feature ${ref} on this branch.`, { hint: `Features: ${all.join(', ') || 'none yet'}. Start one with \`/consort build <slug>\`.` });
  } else {
    const open = await openFeatures(ws, all);
    if (open.length === 1) return { feature: open[0]!, created: false };
    if (open.length > 1) throw new ConsortError('invalid-input', `Several features are open on this branch: ${open.join(', ')}.`, { hint: 'Name one: `/consort build <feature>` (or the feature input).' });
  }
  const slug = ref ?? s.pull.head.ref.split('/').pop()!.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^[^a-z]+|-+$/g, '').slice(0, 40);
  if (!FEATURE_SLUG.test(slug)) throw new ConsortError('invalid-input', `"${slug}" cannot name a feature.`, { hint: 'Name it: `/consort build <slug>` with lowercase letters, digits and "-", starting with a letter.' });
  const { feature } = await createFeature(ws, slug, request ?? `# ${s.pull.title}\n\n${s.pull.body}`.trim());
  return { feature, created: true };
}

async function lane(s: Session): Promise<ModeResult> {
  const { inputs, ctx, gh, asked, pull } = s;
  const ws = await openWorkspace(ctx.workspace);
  let feature: string;
  let retry = false;
  if (asked.kind === 'approve') {
    const waiting = await featuresAtGate(ws.dir, asked.gate);
    if (waiting.length !== 1) {
      const what = asked.gate === null ? 'a gate' : `the ${asked.gate} gate`;
      await gh.comment(pull.number, `@${asked.actor.login}, ${waiting.length === 0 ? `no feature on this branch is waiting at ${what}` : `several features are waiting at ${what} (${waiting.map((w) => `${w.feature}: ${w.gate}`).join(', ')}); name the gate`}, so nothing was approved.`);
      return { conclusion: 'success' };
    }
    const at = waiting[0]!;
    feature = at.feature;
    const approval = await approveGate({ workspace: ws.dir, feature, gate: at.gate, approver: asked.actor.login, headSha: pull.head.sha, ...(at.hash ? { expectedHash: at.hash } : {}) });
    await commitPaths(ws, [featureDirOf(feature)], `consort: ${feature} ${at.gate} gate approved by @${asked.actor.login}`);
    await pushBranch(ws.dir, pull.head.ref, s.auth);
    const sha = await headCommit(ws);
    await gh.status(sha, { context: `consort/gate/${at.gate}`, state: 'success', description: `approved by @${asked.actor.login}`, ...(ctx.runUrl ? { targetUrl: ctx.runUrl } : {}) });
    await gh.react(asked.commentId, '+1');
    core.info(`Gate ${at.gate} of ${feature} approved by @${asked.actor.login} (artifacts ${approval.hash.slice(0, 19)}…, head ${pull.head.sha.slice(0, 7)}).`);
  } else {
    const chosen = await buildFeature(s, asked.feature, asked.request);
    feature = chosen.feature;
    if (chosen.created) {
      await commitPaths(ws, [featureDirOf(feature)], `consort: start ${feature} (asked by @${asked.actor.login})`);
      core.info(`Started feature ${feature}.`);
    } else {
      const { state } = await new FeatureStore(ws.dir, feature).load();
      // Asking again for a feature that needed a human is how a person says "try again".
      retry = state.step === 'escalated' || state.step === 'stalled';
      core.info(`Continuing ${feature}: ${describeStep(state)}${retry ? ' (retrying)' : ''}.`);
    }
  }

  const loaded = await loadConfig(ctx.workspace, inputs.config !== undefined ? { path: inputs.config } : {});
  const config = applyInputs(loaded.config, inputs);
  await prepareTools(providerName(inputs, config), false);
  const provider = await openActionProvider(inputs, config, ctx.workspace);
  // Sources the lane reads allow-listed names from, never a child's environment as they are (every
  // child is built by src/core/child-env.ts). The suite's: the runner's environment without
  // credentials or model keys. The agents': only what an agent's child may take (the basics and
  // the key variables), with the keys the inputs give laid on top; no merged copy of process.env.
  const keys = agentKeyEnvNames(config);
  const agents = childEnv(inputs.lane.agentEnv, { inherit: process.env, pass: keys, secrets: keys });
  const store = new FeatureStore(ws.dir, feature);
  const turns: TurnRecord[] = [];
  const surfaced: { gate: string; hash: string; problems: readonly string[] }[] = [];
  const abort = new AbortController();
  // The runner sends SIGINT (then SIGTERM) on cancel and timeout: stop the turn, keep what was pushed.
  const onSignal = () => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let result: BuildRunResult;
  try {
    result = await runBuildLane({
      workspace: ctx.workspace, config, feature, provider, retry,
      env: laneSuiteEnv(process.env, keys), agentEnv: agents,
      maxTurns: inputs.lane.maxTurns, ...(inputs.lane.maxCostUsd !== undefined ? { maxCostUsd: inputs.lane.maxCostUsd } : {}),
      deadline: Date.now() + inputs.lane.timeLimitMs, signal: abort.signal,
      log: (m) => core.info(scrub(m)),
      onSuiteOutput: (chunk) => process.stdout.write(scrub(chunk)),
      onGate: (gate, hash, problems) => surfaced.push({ gate, hash, problems }),
      onTurn: async (turn, { commit, head }) => {
        turns.push(turn);
        await pushBranch(ctx.workspace, pull.head.ref, s.auth);
        const transcript = await readText(store.file(`transcripts/${turn.id}.txt`));
        const body = scrub(renderTurnReview({ turn, commit, transcript, repoUrl: s.repoUrl, ...(ctx.runUrl ? { runUrl: ctx.runUrl } : {}) }));
        const review = await gh.review(pull.number, commit ?? head, body);
        core.info(`  review for ${turn.id} (${turn.role} ${turn.step} ${turn.verdict}): ${review.url}`);
      },
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await provider.close();
  }
  if (result.stop !== 'interrupted') await pushBranch(ctx.workspace, pull.head.ref, s.auth);
  const head = await headCommit(ws);
  await announceGates(s, ws, store, result, surfaced, head);

  const next = nextStep(feature, result);
  if (ctx.stepSummary) await core.summary.addRaw(scrub(renderRunSummary({ feature, stop: result.stop, message: result.message, turns, next }))).write();
  setLaneOutputs({ feature, stop: result.stop, turns: result.turns, costUsd: result.costUsd });
  core.info(`${feature}: ${result.stop} — ${result.message} (${result.turns} turn(s), $${result.costUsd.toFixed(4)})`);
  if (result.stop === 'escalated' || result.stop === 'stalled') {
    await gh.comment(pull.number, scrub(`@${asked.actor.login}, ${feature} needs a human: ${result.message.split('\n')[0]}\n\nFix what it says (or the artifacts), then comment \`/consort build ${feature}\` to retry.`));
    return { conclusion: 'failure', message: `Consort: ${feature} ${result.stop}: ${result.message.split('\n')[0]}` };
  }
  if (result.stop === 'max-turns' || result.stop === 'max-cost' || result.stop === 'time-limit') {
    // Say so where the person who asked is looking: the reviews alone do not tell that it stopped.
    await gh.comment(pull.number, scrub(`@${asked.actor.login}, the TDD lane paused ${feature} at a budget: ${result.message}. Everything so far is pushed; comment \`/consort build ${feature}\` to continue.`));
  }
  if (result.stop === 'interrupted') return { conclusion: 'failure', message: `Consort: the run was cancelled; \`/consort build ${feature}\` resumes from the last pushed turn.` };
  return { conclusion: 'success' };
}

function nextStep(feature: string, r: BuildRunResult): string | null {
  switch (r.stop) {
    case 'awaiting-approval':
      return `approve the ${r.state.gate} gate: comment \`/consort approve ${r.state.gate}\``;
    case 'max-turns':
    case 'max-cost':
    case 'time-limit':
    case 'interrupted':
      return `continue with \`/consort build ${feature}\``;
    case 'escalated':
    case 'stalled':
      return `fix what it says, then \`/consort build ${feature}\``;
    default:
      return null;
  }
}

/**
 * On the head the run pushed: a success status for every approved gate, a pending one for the gate
 * the run stopped at, and one comment per gate opened in this run.
 */
async function announceGates(s: Session, ws: GitWorkspace, store: FeatureStore, r: BuildRunResult, surfaced: readonly { gate: string; hash: string; problems: readonly string[] }[], head: string): Promise<void> {
  const { gh, ctx, pull } = s;
  const feature = store.feature;
  const gate = r.stop === 'awaiting-approval' ? r.state.gate : null;
  // Statuses belong to a commit: the head this run pushed carries every approval still in force,
  // and an approval whose artifacts changed since (a push after it) is pending again, never success.
  const recorded = (await store.gates()).gates;
  const reopened = await reopenedGates(ws, store, r.state.userFacing);
  for (const [name, entry] of Object.entries(recorded)) {
    if (!entry?.approval || name === gate) continue;
    const stale = reopened.includes(name as GateName);
    await gh.status(head, {
      context: `consort/gate/${name}`, state: stale ? 'pending' : 'success',
      description: stale ? `changed since @${entry.approval.approver} approved it: /consort build ${feature} to review again` : `approved by @${entry.approval.approver}`,
      ...(ctx.runUrl ? { targetUrl: ctx.runUrl } : {}),
    });
  }
  if (gate !== null) {
    await gh.status(head, { context: `consort/gate/${gate}`, state: 'pending', description: `${feature}: waiting for /consort approve ${gate}`, ...(ctx.runUrl ? { targetUrl: ctx.runUrl } : {}) });
  }
  const cycles = await store.cycleFiles();
  for (const g of surfaced) {
    const artifacts = gatedFiles(g.gate as GateName, { userFacing: r.state.userFacing, cycles }).filter((f) => f !== 'git:tree').map((f) => `${featureDirOf(feature)}/${f}`);
    const body = renderGateComment({ gate: g.gate, feature, hash: g.hash, problems: g.problems, artifacts, repoUrl: s.repoUrl, head });
    await gh.comment(pull.number, scrub(body));
    core.info(`Gate ${g.gate} announced (${GATE_MARKER(g.gate, g.hash)}).`);
  }
}
