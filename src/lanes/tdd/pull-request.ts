/**
 * The TDD lane on a pull request, for any shell: a verified person asks (`/consort build
 * <feature>`, the build label, a manual run, or `/consort approve <gate>`); `decide` says purely
 * whether to go ahead; `runOnPullRequest` checks out the pull request's branch, approves or picks
 * the feature, runs the conductor until a gate, the end or a budget — pushing after every turn and
 * posting one review per turn — and publishes the gates as commit statuses on the head it pushed.
 *
 * Nothing an agent or a pull request says can approve a gate or widen a scope: approvals come only
 * from a comment by a person whose permission was checked through the API (and who passes the
 * default branch's `gates.approvers` / `gates.selfApproval`), scopes are enforced on the diff by the
 * conductor, and the agents' environment holds no GitHub token.
 */
import type { ConsortConfig } from '../../config/schema.js';
import { type ApprovalPolicy, approvalRefusal, gatedFiles, gateStatusContext } from '../../conductor/gates.js';
import type { GateName, TurnRecord } from '../../conductor/state.js';
import { ConsortError } from '../../core/errors.js';
import { FEATURE_SLUG, featureSlugFromBranch } from '../../core/names.js';
import { type CommandRequest, mayCommand, react, refuse } from '../../github/command-reply.js';
import type { AgentBackends } from '../../ports/agent-backend.js';
import type { BranchProvider } from '../../ports/branch-provider.js';
import type { GitRepo } from '../../ports/git.js';
import type { MigrationRunner } from '../../ports/migration-runner.js';
import type { CommitStatus, GitHubPort, IssueComment, Permission, PullRequest, RepoRef } from '../../ports/github.js';
import type { ProcessRunner } from '../../ports/process.js';
import type { SchemaReader } from '../../ports/schema-reader.js';
import type { Workspace, Workspaces } from '../../ports/workspace.js';
import { GATE_MARKER, renderGateComment, renderTurnReview } from '../../report/turn-markdown.js';
import { approveGate, createFeature, describeStep, matchFeature, openFeatures } from './feature.js';
import { announcedBefore, approvalComment, editedComment, notTheirCommand } from './approval-source.js';
import { reopenedGates } from './gate-check.js';
import { type BuildRunResult, runBuildLane } from './driver.js';
import { featureDirOf, FeatureStore, listFeatures, readText } from './store.js';

export interface Actor {
  login: string;
  /** `User` or `Bot`. */
  type: string;
}

/** What a person asked for on a pull request (the shell reads it from its event). */
export type PullRequestAsk =
  | {
      kind: 'build';
      pr: number;
      feature: string | null;
      request: string | null;
      actor: Actor;
      commentId: number | null;
      via: 'comment' | 'label' | 'dispatch';
    }
  | { kind: 'approve'; pr: number; gate: string | null; actor: Actor; commentId: number };

/** What the person who asked may do: their permission, and the policy's teams they belong to. */
export interface Access {
  permission: Permission;
  teams: readonly string[];
}

export type Decision =
  | { kind: 'ignore'; why: string }
  /** Nothing is done; `answer` (when not null) is replied, and a comment gets 😕. */
  | { kind: 'refuse'; why: string; answer: string | 'refusal' | null }
  | { kind: 'proceed' };

const FORK_ANSWER =
  "this pull request comes from a fork: the TDD lane commits to the pull request's branch and runs agents with this repository's keys, so it runs only on branches of this repository.";

/** Whether to act on a request, from who asked, what they may do and the pull request (pure). */
export function decide(request: PullRequestAsk, access: Access, pull: PullRequest, policy: ApprovalPolicy): Decision {
  const who = request.actor.login;
  if (request.actor.type === 'Bot') return { kind: 'ignore', why: `${who} is a bot` };
  if (!mayCommand(access.permission)) {
    // A label or a manual run has no comment to answer; the log says why nothing happened.
    return {
      kind: 'refuse',
      why: `${who} has ${access.permission} access; the TDD lane needs write access`,
      answer: request.kind === 'approve' || request.commentId !== null ? 'refusal' : null,
    };
  }
  if (pull.state !== 'open')
    return {
      kind: 'refuse',
      why: `#${pull.number} is ${pull.state}`,
      answer: `#${pull.number} is ${pull.state}, so the TDD lane did not run.`,
    };
  if (pull.head.repo !== pull.base.repo)
    return { kind: 'refuse', why: 'the pull request comes from a fork', answer: FORK_ANSWER };
  if (request.kind === 'approve') {
    // An approval names what it approves: one unnamed command must not stand for whichever gate is waiting.
    if (request.gate === null)
      return {
        kind: 'refuse',
        why: '/consort approve names no gate',
        answer:
          'name the gate you approve (`/consort approve <gate>`, as its announcement says), so nothing was approved.',
      };
    const refusal = approvalRefusal(policy, { login: who, teams: access.teams }, pull.author || null);
    if (refusal !== undefined) return { kind: 'refuse', why: refusal, answer: `${refusal}, so nothing was approved.` };
  }
  return { kind: 'proceed' };
}

/** The pull request's branch in the shell's checkout: fetched and checked out, pushed after every turn. */
export interface GitRemote {
  /** Check out `ref` (the pull request's head branch); returns the commit checked out. */
  checkout(ref: string): Promise<string>;
  push(ref: string): Promise<void>;
}

export interface LaneLog {
  info(message: string): void;
  warning(message: string): void;
}

export interface PullRequestPorts {
  github: GitHubPort;
  repo: RepoRef;
  /** The shell's checkout of the repository, opened (after the checkout) through `workspaces`. */
  workspace: string;
  workspaces: Workspaces;
  remote: GitRemote;
  /** Starts the proofs' suites and the baseline's seed. */
  processes: ProcessRunner;
  agents: AgentBackends;
  git: GitRepo;
  migrations: MigrationRunner;
  schemas: SchemaReader;
  /**
   * Who may approve, and whether proxy mode approves (`gates.*`): read from the pull request's
   * base branch (its commit `pull.base.sha`), never from the branch under review — a pull request
   * cannot approve its own gates by changing the configuration it carries.
   */
  policy(pull: PullRequest): Promise<TrustedPolicy>;
  /** The lane's configuration (read from the checked-out branch) and a branch provider for it. */
  configure(): Promise<{ config: ConsortConfig; provider: BranchProvider; configFile?: string }>;
  /** The suite's and the agents' settings sources (children are built from allow-lists in src/core/child-env.ts). */
  environment(config: ConsortConfig): { env: NodeJS.ProcessEnv; agentEnv: NodeJS.ProcessEnv };
  budgets: { maxTurns: number; maxCostUsd?: number; timeLimitMs: number };
  signal?: AbortSignal;
  log: LaneLog;
  /** Removes secrets from text posted on GitHub or logged. */
  scrub(text: string): string;
  onSuiteOutput?(chunk: string): void;
  links: { repoUrl: string; runUrl?: string };
  now?: () => number;
}

/** The base branch's gates settings: who may approve, and the gate mode every run of the lane uses. */
export interface TrustedPolicy extends ApprovalPolicy {
  gateMode: 'human' | 'proxy';
  /**
   * The base branch's migrations.timeout: the limit on building the lane's baseline, which the
   * branch under review cannot lift. Absent (the configuration file lies outside the repository,
   * so no branch has a say in it): the run's configuration's.
   */
  migrationsTimeout?: string;
}

export type PullRequestOutcome =
  | { kind: 'ignored'; why: string }
  | { kind: 'refused'; why: string }
  /** An approval found nothing to approve (it was answered on the pull request). */
  | { kind: 'answered'; answer: string }
  | { kind: 'ran'; feature: string; result: BuildRunResult; turns: TurnRecord[]; next: string | null };

/** The command as written, quoted in replies. */
function asked(request: PullRequestAsk): string {
  if (request.kind === 'approve') return `/consort approve${request.gate === null ? '' : ` ${request.gate}`}`;
  return `/consort build${request.feature === null ? '' : ` ${request.feature}`}`;
}

async function access(
  ports: PullRequestPorts,
  login: string,
  permission: Access['permission'],
  policy: ApprovalPolicy,
): Promise<Access> {
  const teams: string[] = [];
  if (!mayCommand(permission)) return { permission, teams };
  for (const entry of policy.approvers.filter((a) => a.includes('/'))) {
    const [org, team] = entry.split('/') as [string, string];
    if (await ports.github.teamMember(org, team, login)) teams.push(entry);
  }
  return { permission, teams };
}

export async function runOnPullRequest(ports: PullRequestPorts, request: PullRequestAsk): Promise<PullRequestOutcome> {
  const { github, repo } = ports;
  const command: CommandRequest = {
    repo,
    pr: request.pr,
    actor: request.actor.login,
    commentId: request.commentId,
    asked: asked(request),
  };
  const replyTo = (text: string) =>
    github.createComment(repo, request.pr, ports.scrub(`@${request.actor.login}, ${text}`));
  if (request.actor.type === 'Bot') return { kind: 'ignored', why: `${request.actor.login} is a bot` };
  // Who asked is checked through the API for every request: the event says who, never what they may do.
  const pull = await github.pull(repo, request.pr);
  // Nothing of the pull request's own decides who approves: the base branch's configuration does.
  const permission = await github.permission(repo, request.actor.login);
  const policy: TrustedPolicy = mayCommand(permission)
    ? await ports.policy(pull)
    : { approvers: [], selfApproval: false, gateMode: 'human' };
  const who = await access(ports, request.actor.login, permission, policy);
  const decision = decide(request, who, pull, policy);
  if (decision.kind === 'ignore') return { kind: 'ignored', why: decision.why };
  if (decision.kind === 'refuse') {
    if (decision.answer === 'refusal') await refuse(github, command);
    else if (decision.answer !== null) {
      await react(github, command, 'confused');
      await replyTo(decision.answer);
    }
    ports.log.warning(`Nothing was done: ${decision.why}.`);
    return { kind: 'refused', why: decision.why };
  }
  // The event only points at the comment: the command is the comment as GitHub has it, by the
  // person the event names (an earlier step of the job can rewrite the event file).
  let comments: IssueComment[] | undefined;
  if (request.kind === 'approve') {
    comments = await github.listComments(repo, pull.number);
    const forged = notTheirCommand(comments, request.commentId, request.actor.login, request.gate ?? '');
    if (forged !== undefined) {
      ports.log.warning(`Nothing was done: the event does not match the comment it names (${forged}).`);
      return { kind: 'refused', why: forged };
    }
  }
  await react(github, command, 'eyes');
  const head = await ports.remote.checkout(pull.head.ref);
  ports.log.info(`On ${pull.head.ref} at ${head.slice(0, 7)} (pull request #${pull.number}).`);
  try {
    return await lane(ports, request, command, pull, policy, comments);
  } catch (e) {
    // Whatever went wrong, say so on the pull request, where the person who asked is looking.
    const why =
      e instanceof ConsortError
        ? `${e.message}${e.hint ? ` ${e.hint}` : ''}`
        : `unexpected error: ${e instanceof Error ? e.message : String(e)}`;
    await replyTo(
      `the TDD lane stopped: ${why}${ports.links.runUrl ? ` ([workflow run](${ports.links.runUrl}))` : ''}`,
    ).catch(() => undefined);
    throw e;
  }
}

/** Features at a gate (for `/consort approve <gate>`). */
async function featuresAtGate(
  workspace: string,
  gate: string,
): Promise<{ feature: string; gate: GateName; hash: string | undefined }[]> {
  const found = [];
  for (const feature of await listFeatures(workspace)) {
    const { state } = await new FeatureStore(workspace, feature).load();
    if ((state.step === 'awaiting-approval' || state.step === 'gate') && state.gate && state.gate === gate) {
      found.push({ feature, gate: state.gate, hash: state.surfaced[state.gate] });
    }
  }
  return found;
}

/** The feature a build request names: an existing one, or a new one created from the request. */
async function buildFeature(
  ws: Workspace,
  pull: PullRequest,
  ref: string | null,
  request: string | null,
): Promise<{ feature: string; created: boolean }> {
  const all = await listFeatures(ws.dir);
  if (ref !== null) {
    const match = matchFeature(all, ref);
    if (match) return { feature: match, created: false };
    if (/^\d+$/.test(ref))
      throw new ConsortError('invalid-input', `There is no feature ${ref} on this branch.`, {
        hint: `Features: ${all.join(', ') || 'none yet'}. Start one with \`/consort build <slug>\`.`,
      });
  } else {
    const open = await openFeatures(ws.dir, all);
    if (open.length === 1) return { feature: open[0]!, created: false };
    if (open.length > 1)
      throw new ConsortError('invalid-input', `Several features are open on this branch: ${open.join(', ')}.`, {
        hint: 'Name one: `/consort build <feature>` (or the feature input).',
      });
  }
  const slug = ref ?? featureSlugFromBranch(pull.head.ref);
  if (!FEATURE_SLUG.test(slug))
    throw new ConsortError('invalid-input', `"${slug}" cannot name a feature.`, {
      hint: 'Name it: `/consort build <slug>` with lowercase letters, digits and "-", starting with a letter.',
    });
  const { feature } = await createFeature(ws, slug, request ?? `# ${pull.title}\n\n${pull.body}`.trim());
  return { feature, created: true };
}

async function lane(
  ports: PullRequestPorts,
  request: PullRequestAsk,
  command: CommandRequest,
  pull: PullRequest,
  policy: TrustedPolicy,
  comments: IssueComment[] | undefined,
): Promise<PullRequestOutcome> {
  const ws = await ports.workspaces.open(ports.workspace);
  // git's global configuration pinned for the whole lane, not just the run: the run's untrusted
  // code (a suite, a migration) can write the home folder, and the push after the run (the token
  // in its environment), the gate announcements' commits and the reviews' reads come after
  // runBuildLane has released its own pin (src/git/pinned-config.ts).
  const unpin = ws.pinGitConfig ? await ws.pinGitConfig() : async () => undefined;
  try {
    return await laneIn(ports, request, command, pull, policy, ws, comments);
  } finally {
    await unpin().catch(() => undefined);
  }
}

async function laneIn(
  ports: PullRequestPorts,
  request: PullRequestAsk,
  command: CommandRequest,
  pull: PullRequest,
  policy: TrustedPolicy,
  ws: Awaited<ReturnType<PullRequestPorts['workspaces']['open']>>,
  read: IssueComment[] | undefined,
): Promise<PullRequestOutcome> {
  const { github, repo, log } = ports;
  const login = request.actor.login;
  const replyTo = (text: string) => github.createComment(repo, pull.number, ports.scrub(`@${login}, ${text}`));
  const status = (sha: string, s: Omit<CommitStatus, 'targetUrl'>) =>
    github.setStatus(repo, sha, { ...s, ...(ports.links.runUrl ? { targetUrl: ports.links.runUrl } : {}) });
  let feature: string;
  let retry = false;
  /** The pull request's conversation, read once: what backs an approval (src/lanes/tdd/approval-source.ts). */
  let comments = read;
  const conversation = async () => (comments ??= await github.listComments(repo, pull.number));
  /** Approvals this run recorded from the verified command that started it. */
  const recordedHere: { gate: string; hash: string; approver: string }[] = [];
  if (request.kind === 'approve') {
    const gate = request.gate ?? '';
    // What the person was shown: the gate as announced on the pull request before their command —
    // not the branch's state.json, which whoever pushes to the branch can write.
    const asking = (await conversation()).find((c) => c.id === request.commentId);
    const shown = asking && !editedComment(asking) ? announcedBefore(await conversation(), gate, asking) : null;
    const atGate = await featuresAtGate(ws.dir, gate);
    // Several features at one gate: the one announced with what the person was shown.
    const waiting = atGate.length > 1 ? atGate.filter((w) => w.hash === shown) : atGate;
    if (atGate.length === 0 || shown === null || waiting.length !== 1) {
      const answer =
        atGate.length === 0
          ? `no feature on this branch is waiting at the ${gate} gate, so nothing was approved.`
          : asking === undefined || editedComment(asking)
            ? `your comment was ${asking === undefined ? 'deleted' : 'edited'} before it was read (an edited comment carries no command), so nothing was approved: comment again.`
            : shown === null
              ? `the ${gate} gate was not announced on this pull request before your comment, so nothing was approved: approve it after its announcement.`
              : `several features are waiting at the ${gate} gate (${atGate.map((w) => w.feature).join(', ')}), so nothing was approved.`;
      await replyTo(answer);
      return { kind: 'answered', answer };
    }
    const at = waiting[0]!;
    feature = at.feature;
    const approval = await approveGate({
      ws,
      feature,
      gate: at.gate,
      approver: login,
      headSha: pull.head.sha,
      expectedHash: shown,
    });
    recordedHere.push({ gate: at.gate, hash: approval.hash, approver: approval.approver });
    // Already recorded for these artifacts (the App's dashboard commits the approval, then posts
    // this command with the person's token): nothing new to commit, and the lane goes on.
    if (!approval.already) {
      await ws.commitPaths([featureDirOf(feature)], `consort: ${feature} ${at.gate} gate approved by @${login}`);
      await ports.remote.push(pull.head.ref);
    }
    await status(await ws.head(), {
      context: gateStatusContext(at.gate),
      state: 'success',
      description: `approved by @${login}`,
    });
    await react(github, command, '+1');
    log.info(
      `Gate ${at.gate} of ${feature} approved by @${login} (artifacts ${approval.hash.slice(0, 19)}…, head ${pull.head.sha.slice(0, 7)})${approval.already ? `; the approval was already recorded (${approval.at})` : ''}.`,
    );
  } else {
    const chosen = await buildFeature(ws, pull, request.feature, request.request);
    feature = chosen.feature;
    if (chosen.created) {
      await ws.commitPaths([featureDirOf(feature)], `consort: start ${feature} (asked by @${login})`);
      log.info(`Started feature ${feature}.`);
    } else {
      const { state } = await new FeatureStore(ws.dir, feature).load();
      // Asking again for a feature that needed a human is how a person says "try again".
      retry = state.step === 'escalated' || state.step === 'stalled';
      log.info(`Continuing ${feature}: ${describeStep(state)}${retry ? ' (retrying)' : ''}.`);
    }
  }

  /** Why an approval in the branch's gates.json does not count (undefined: it does); one judgement for the lane and the statuses. */
  const judge: ApprovalJudge = async (gate, approval) => {
    if (
      !approval.proxy &&
      recordedHere.some((a) => a.gate === gate && a.hash === approval.hash && a.approver === approval.approver)
    )
      return undefined;
    return uncountedApproval(github, repo, pull, policy, gate, approval, await conversation());
  };
  const { config, provider, configFile } = await ports.configure();
  const { env, agentEnv } = ports.environment(config);
  const store = new FeatureStore(ws.dir, feature);
  const turns: TurnRecord[] = [];
  const surfaced: Surfaced[] = [];
  const now = ports.now ?? Date.now;
  let result: BuildRunResult;
  try {
    result = await runBuildLane({
      workspace: ws,
      processes: ports.processes,
      agents: ports.agents,
      git: ports.git,
      migrations: ports.migrations,
      schemas: ports.schemas,
      config,
      // The configuration file the run read: no agent's to change (the default names are locked anyway).
      ...(configFile !== undefined ? { configFile } : {}),
      // gates.mode from the base branch: the branch's own configuration cannot turn proxy mode on.
      gateMode: policy.gateMode,
      // Nor lift the limit on building the baseline.
      ...(policy.migrationsTimeout !== undefined
        ? {
            migrationsLimit: {
              timeout: policy.migrationsTimeout,
              configuration: `the Consort configuration of the pull request's base branch (${pull.base.ref})`,
              why: "The limit is read from the pull request's base branch: the branch under review cannot change it.",
            },
          }
        : {}),
      feature,
      provider,
      retry,
      env,
      agentEnv,
      maxTurns: ports.budgets.maxTurns,
      ...(ports.budgets.maxCostUsd !== undefined ? { maxCostUsd: ports.budgets.maxCostUsd } : {}),
      deadline: now() + ports.budgets.timeLimitMs,
      ...(ports.signal ? { signal: ports.signal } : {}),
      log: (m) => log.info(ports.scrub(m)),
      ...(ports.onSuiteOutput ? { onSuiteOutput: ports.onSuiteOutput } : {}),
      onGate: (gate, hash, problems, flags) => surfaced.push({ gate, hash, problems, flags }),
      // The lane goes past a gate only on an approval the pull request's conversation backs.
      approvalCounts: (gate, approval) => (approval.proxy ? Promise.resolve(PROXY_FROM_BRANCH) : judge(gate, approval)),
      onTurn: async (turn, { commit, head }) => {
        turns.push(turn);
        await ports.remote.push(pull.head.ref);
        const transcript = await readText(store.file(`transcripts/${turn.id}.txt`));
        const body = ports.scrub(
          renderTurnReview({
            turn,
            commit,
            transcript,
            repoUrl: ports.links.repoUrl,
            ...(ports.links.runUrl ? { runUrl: ports.links.runUrl } : {}),
          }),
        );
        const review = await github.review(repo, pull.number, commit ?? head, body);
        log.info(`  review for ${turn.id} (${turn.role} ${turn.step} ${turn.verdict}): ${review.url}`);
      },
    });
  } finally {
    await provider.close();
  }
  if (result.stop !== 'interrupted') await ports.remote.push(pull.head.ref);
  await announceGates(ports, ws, store, result, surfaced, await ws.head(), pull, judge);

  if (result.stop === 'escalated' || result.stop === 'stalled') {
    await replyTo(
      `${feature} needs a human: ${result.message.split('\n')[0]}\n\nFix what it says (or the artifacts), then comment \`/consort build ${feature}\` to retry.`,
    );
  }
  if (result.stop === 'max-turns' || result.stop === 'max-cost' || result.stop === 'time-limit') {
    // Say so where the person who asked is looking: the reviews alone do not tell that it stopped.
    await replyTo(
      `the TDD lane paused ${feature} at a budget: ${result.message}. Everything so far is pushed; comment \`/consort build ${feature}\` to continue.`,
    );
  }
  return { kind: 'ran', feature, result, turns, next: nextStep(feature, result) };
}

export function nextStep(feature: string, r: BuildRunResult): string | null {
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
 * Why an approval recorded in the branch's `gates.json` does not count, or undefined when it does.
 * The branch is the pull request's: whoever can push to it can write an approval there. One counts
 * when the Action could have recorded it: a person's, backed by an unedited `/consort approve
 * <gate>` comment of theirs on this pull request written after the gate was announced with the
 * approval's artifacts (src/lanes/tdd/approval-source.ts), who has write access and whom the base
 * branch's policy lets approve now; a proxy's, only while the base branch's `gates.mode` is proxy.
 */
export async function uncountedApproval(
  github: Pick<GitHubPort, 'teamMember' | 'permission'>,
  repo: RepoRef,
  pull: Pick<PullRequest, 'number' | 'author'>,
  policy: TrustedPolicy,
  gate: string,
  approval: { approver: string; proxy: boolean; hash: string },
  comments: readonly IssueComment[],
): Promise<string | undefined> {
  if (approval.proxy)
    return policy.gateMode === 'proxy' ? undefined : "a proxy's, and the base branch's gates.mode is human";
  const source = approvalComment(comments, gate, approval.approver, approval.hash, pull.number);
  if ('reason' in source) return source.reason;
  // The account as GitHub spells it (the comment's author), asked now: what they may do today.
  const login = source.comment.user!.login;
  const permission = await github.permission(repo, login);
  if (!mayCommand(permission)) return `@${login} has ${permission} access`;
  const teams: string[] = [];
  for (const entry of policy.approvers.filter((a) => a.includes('/'))) {
    const [org, team] = entry.split('/') as [string, string];
    if (await github.teamMember(org, team, login)) teams.push(entry);
  }
  return approvalRefusal(policy, { login, teams }, pull.author || null);
}

/** A proxy approval read from the branch never passes a gate in the lane: proxy mode approves in the run itself. */
const PROXY_FROM_BRANCH =
  "a proxy's approval read from the branch (under the base branch's gates.mode: proxy the run approves by itself)";

type ApprovalJudge = (
  gate: string,
  approval: { approver: string; proxy: boolean; hash: string },
) => Promise<string | undefined>;

interface Surfaced {
  gate: string;
  hash: string;
  problems: readonly string[];
  flags: readonly string[];
}

/**
 * On the head the run pushed: a success status for every approved gate, a pending one for the gate
 * the run stopped at, and one comment per gate opened in this run.
 */
async function announceGates(
  ports: PullRequestPorts,
  ws: Workspace,
  store: FeatureStore,
  r: BuildRunResult,
  surfaced: readonly Surfaced[],
  head: string,
  pull: PullRequest,
  judge: ApprovalJudge,
): Promise<void> {
  const pr = pull.number;
  const { github, repo } = ports;
  const feature = store.feature;
  const target = ports.links.runUrl ? { targetUrl: ports.links.runUrl } : {};
  const gate = r.stop === 'awaiting-approval' ? r.state.gate : null;
  // Statuses belong to a commit: the head this run pushed carries every approval still in force,
  // and an approval whose artifacts changed since (a push after it) is pending again, never success.
  const recorded = (await store.gates()).gates;
  const reopened = await reopenedGates(ws, store, r.state.userFacing);
  for (const [name, entry] of Object.entries(recorded)) {
    if (!entry?.approval || name === gate) continue;
    const stale = reopened.includes(name as GateName);
    const uncounted = await judge(name, entry.approval);
    if (uncounted !== undefined)
      ports.log.warning(
        `The ${name} gate's approval by ${entry.approval.approver} in gates.json does not count: ${uncounted}.`,
      );
    await github.setStatus(repo, head, {
      context: gateStatusContext(name),
      state: stale || uncounted !== undefined ? 'pending' : 'success',
      description: stale
        ? `changed since @${entry.approval.approver} approved it: /consort build ${feature} to review again`
        : uncounted !== undefined
          ? `not approved: ${uncounted}`
          : `approved by @${entry.approval.approver}`,
      ...target,
    });
  }
  if (gate !== null) {
    // The lane waits at a gate whose recorded approval covers these artifacts only when the
    // approval does not count: say why, where branch protection shows it.
    const written = recorded[gate]?.approval;
    const ignored =
      written && written.hash === r.state.surfaced[gate]
        ? written.proxy
          ? PROXY_FROM_BRANCH
          : await judge(gate, written)
        : undefined;
    await github.setStatus(repo, head, {
      context: gateStatusContext(gate),
      state: 'pending',
      description:
        ignored === undefined
          ? `${feature}: waiting for /consort approve ${gate}`
          : `not approved: ${ignored}; waiting for /consort approve ${gate}`,
      ...target,
    });
  }
  const cycles = await store.cycleFiles();
  for (const g of surfaced) {
    const artifacts = gatedFiles(g.gate as GateName, { userFacing: r.state.userFacing, cycles })
      .filter((f) => f !== 'git:tree')
      .map((f) => `${featureDirOf(feature)}/${f}`);
    const body = renderGateComment({
      gate: g.gate,
      feature,
      hash: g.hash,
      problems: g.problems,
      flags: g.flags,
      artifacts,
      repoUrl: ports.links.repoUrl,
      head,
    });
    await github.createComment(repo, pr, ports.scrub(body));
    ports.log.info(`Gate ${g.gate} announced (${GATE_MARKER(g.gate, g.hash)}).`);
  }
}
