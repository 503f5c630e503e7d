/**
 * The Action's composition root: the one place its adapters are built — the GitHubPort
 * (./github.ts), the git remote of the pull request's branch, the check lane's ports and the TDD
 * lane's. Modes
 * parse, build ports here, call a lane and report.
 */
import path from 'node:path';
import * as core from '@actions/core';
import { loadConfig } from '../config/load.js';
import { agentKeyEnvNames, type PullRequestPorts } from '../lanes/tdd/index.js';
import { childEnv } from '../core/child-env.js';
import { localAgentBackends } from '../agents/backends.js';
import { localWorkspaces } from '../git/local-workspace.js';
import { gatesAtCommit, settingsAtCommit } from '../lanes/check/base-settings.js';
import type { CheckPorts } from '../lanes/check/run.js';
import type { GitRepo } from '../ports/git.js';
import { localAdapters } from '../runtime/local-adapters.js';
import { lineLog } from '../runtime/log.js';
import { laneSuiteEnv, type ActionContext } from './context.js';
import { actionGitHub } from './github.js';
import type { ActionInputs } from './inputs.js';
import { checkoutBranch, dropPersistedCredentials, fetchBranch, type GitAuth, pushBranch } from './lane/git.js';
import { applyInputs } from './modes/check.js';
import { openActionProvider, prepareTools, providerName } from './provider.js';
import { scrub } from './secrets.js';
import { commandQuoter, quoteCommands } from './workflow-commands.js';

const configOf = (inputs: ActionInputs, workspace: string) =>
  loadConfig(workspace, inputs.config !== undefined ? { path: inputs.config } : {});

/**
 * The TDD lane's ports on a pull request. Who may approve, and the gate mode, are read from the
 * pull request's base branch as committed (fetched, read with git), never from the branch under
 * review nor from whatever the workflow checked out.
 */
export async function tddPorts(
  inputs: ActionInputs,
  ctx: ActionContext,
  token: string,
  signal: AbortSignal,
): Promise<PullRequestPorts> {
  const auth: GitAuth = { token, serverUrl: ctx.serverUrl };
  // The suites' output is the pull request's code talking: no line of it is a workflow command.
  const quoteSuite = commandQuoter();
  return {
    github: actionGitHub(token, ctx, inputs.githubWritePacing),
    repo: ctx.repo,
    workspace: ctx.workspace,
    workspaces: localWorkspaces,
    processes: localAdapters.processes,
    agents: localAgentBackends,
    git: localAdapters.git,
    migrations: localAdapters.migrations,
    schemas: localAdapters.schemas,
    async policy(pull) {
      // The base branch's commit, fetched and read with git: not the workflow's checkout (a label's
      // run checks out the merge commit, which carries the pull request's configuration).
      await fetchBranch(ctx.workspace, pull.base.ref, auth, "the pull request's base branch");
      const gates = await gatesAtCommit(localAdapters.git, ctx.workspace, pull.base.sha, inputs.config);
      // The limit on building the baseline, from the same commit (absent: a --config outside the repository).
      const { migrationsTimeout } = await settingsAtCommit(
        localAdapters.git,
        ctx.workspace,
        pull.base.sha,
        inputs.config,
      );
      if (gates.problem) core.warning(`Gates settings: the defaults, because ${gates.problem}.`);
      core.info(
        `Gates settings from ${gates.source ?? 'no configuration file'} on ${pull.base.ref} (${pull.base.sha.slice(0, 7)}): mode ${gates.mode}, approvers ${gates.approvers.join(', ') || 'anyone with write access'}, self-approval ${gates.selfApproval ? 'on' : 'off'}.`,
      );
      return {
        approvers: gates.approvers,
        selfApproval: gates.selfApproval,
        gateMode: gates.mode,
        ...(migrationsTimeout !== undefined ? { migrationsTimeout } : {}),
      };
    },
    remote: {
      async checkout(ref) {
        const dropped = await dropPersistedCredentials(ctx.workspace);
        if (dropped.length > 0)
          core.notice(
            `Removed the credentials actions/checkout stored in .git/config (${dropped.join(', ')}), so no agent can read them; Consort pushes with its own token. Use persist-credentials: false to skip this.`,
          );
        return checkoutBranch(ctx.workspace, ref, auth);
      },
      push: (ref) => pushBranch(ctx.workspace, ref, auth),
    },
    async configure() {
      const loaded = await configOf(inputs, ctx.workspace);
      const config = applyInputs(loaded.config, inputs);
      await prepareTools(providerName(inputs, config), false);
      return {
        config,
        provider: await openActionProvider(inputs, config, ctx),
        // The file read, relative to the workspace: the lane locks it against the agents.
        ...(loaded.source !== null && !path.isAbsolute(loaded.source) && !loaded.source.startsWith('..')
          ? { configFile: loaded.source }
          : {}),
      };
    },
    environment(config) {
      // Sources the lane reads allow-listed names from, never a child's environment as they are (every
      // child is built by src/core/child-env.ts). The suite's: the runner's environment without
      // credentials or model keys. The agents': only what an agent's child may take (the basics and
      // the key variables), with the keys the inputs give laid on top; no merged copy of process.env.
      const keys = agentKeyEnvNames(config);
      return {
        env: laneSuiteEnv(process.env, keys),
        agentEnv: childEnv(inputs.lane.agentEnv, { inherit: process.env, pass: keys, secrets: keys }),
      };
    },
    budgets: {
      maxTurns: inputs.lane.maxTurns,
      timeLimitMs: inputs.lane.timeLimitMs,
      ...(inputs.lane.maxCostUsd !== undefined ? { maxCostUsd: inputs.lane.maxCostUsd } : {}),
    },
    signal,
    log: { info: (m) => core.info(quoteCommands(scrub(m))), warning: (m) => core.warning(scrub(m)) },
    scrub,
    onSuiteOutput: (chunk) => process.stdout.write(quoteSuite(scrub(chunk))),
    links: {
      repoUrl: `${ctx.serverUrl}/${ctx.repo.owner}/${ctx.repo.repo}`,
      ...(ctx.runUrl ? { runUrl: ctx.runUrl } : {}),
    },
  };
}

/**
 * The check lane's ports, but the branch provider (opened once the configuration is known). The
 * log is the step's: every line scrubbed of secrets, debug lines shown with step debug logging on.
 * Warnings stay plain lines: a core.warning would become an annotation on the pull request.
 */
export function checkPorts(): Omit<CheckPorts, 'provider' | 'git'> & { git: GitRepo } {
  return {
    ...localAdapters,
    log: lineLog((m) => core.info(quoteCommands(scrub(m))), { debug: (m) => core.debug(scrub(m)) }),
  };
}
