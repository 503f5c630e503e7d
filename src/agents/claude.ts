/**
 * The `claude` agent backend: one turn is one `query()` of the Claude Agent SDK in the workspace.
 * The SDK's own limits carry the budget (`maxTurns`, `maxBudgetUsd`). `tools` is the whole set the
 * model can see (`allowedTools` only auto-approves) and `dontAsk` denies whatever is not pre-approved,
 * so a headless turn never waits for an answer. A PreToolUse hook refuses file edits outside the role's
 * `writes` so the model hears "no" while it can still adapt, and fails closed (`onFailure: 'block'`);
 * the conductor's diff check after the turn remains the guard, since Bash can write files too.
 * The branch URL reaches the agent's tools through the environment, never through the prompt.
 * The SDK runs here, in Consort's process; the Claude Code CLI it starts (and every tool the model
 * runs) is spawned inside the turn's isolation, with its read-only folders (isolated-cli.ts).
 */
import type { HookCallback, Options, SDKMessage } from '@anthropic-ai/claude-agent-sdk';
import type { AgentBackend, AgentTurnRequest, AgentTurnResult } from '../ports/agent-backend.js';
import { connectionSecrets } from '../core/redact.js';
import { branchEnv } from '../suite/pg-env.js';
import { CLAUDE_EDIT_TOOLS, editToolDecision, mapClaudeTurn, type ClaudeStreamEnd } from './claude-events.js';
import { CLAUDE_SDK, type ClaudeSdk, loadSdk } from './sdk.js';
import { claudeSpawner, type ClaudeSpawner } from './isolated-cli.js';
import { drain, turnControl } from './turn-control.js';
import { childEnv } from '../core/child-env.js';

/** What the backend needs of `query`: the real one fits, and tests pass a replay of a recorded stream. */
export type ClaudeQuery = (params: {
  prompt: string;
  options?: Options;
}) => AsyncIterable<SDKMessage> & { close?: () => void };

export interface ClaudeBackendOptions {
  /** Used when the turn does not name a model. */
  model?: string;
  /** Passed as ANTHROPIC_API_KEY; otherwise the environment's credentials apply. */
  apiKey?: string;
  query?: ClaudeQuery;
  /** Variables that receive the branch URL (DATABASE_URL, and the suite's variable when it differs). */
  urlVars?: readonly string[];
  env?: NodeJS.ProcessEnv;
}

/**
 * The only tools a turn has (names as the SDK's sdk-tools.d.ts defines them): no web access, no
 * subagents, no worktrees, no questions to a person who is not there.
 */
export const CLAUDE_TOOLS = ['Read', 'Glob', 'Grep', 'Bash', 'TodoWrite', ...Object.keys(CLAUDE_EDIT_TOOLS)];

export function turnPrompt(request: AgentTurnRequest): string {
  return `${request.instructions.trim()}\n\n${request.contextPack.markdown}`;
}

/** The PreToolUse hook: denies edits outside `writes`, says nothing about other tools. */
export function writeScopeHook(workspace: string, writes: readonly string[]): HookCallback {
  return async (input) => {
    if (input.hook_event_name !== 'PreToolUse') return {};
    const decision = editToolDecision(workspace, writes, input.tool_name, input.tool_input);
    if (decision === null || decision.allow) return {};
    return {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: `Consort: ${decision.reason}`,
      },
    };
  };
}

export function claudeOptions(
  request: AgentTurnRequest,
  options: ClaudeBackendOptions,
  abortController: AbortController,
  spawner?: Pick<ClaudeSpawner, 'spawn'>,
): Options {
  const urlVars = [...new Set(['DATABASE_URL', ...(options.urlVars ?? [])])];
  // The CLI's complete environment: allow-listed basics, the branch, and its own key (src/core/child-env.ts).
  const env: Record<string, string | undefined> = childEnv(
    { ...branchEnv(request.branchUrl, urlVars), ...(options.apiKey ? { ANTHROPIC_API_KEY: options.apiKey } : {}) },
    { inherit: options.env ?? process.env, secrets: ['ANTHROPIC_API_KEY'] },
  );
  const model = request.model ?? options.model;
  return {
    cwd: request.workspace,
    abortController,
    env,
    ...(model ? { model } : {}),
    ...(request.budget.maxTurns !== undefined ? { maxTurns: request.budget.maxTurns } : {}),
    ...(request.budget.maxCostUsd !== undefined ? { maxBudgetUsd: request.budget.maxCostUsd } : {}),
    tools: CLAUDE_TOOLS,
    allowedTools: CLAUDE_TOOLS,
    permissionMode: 'dontAsk',
    // The repository's CLAUDE.md and settings apply; the runner's personal settings do not.
    settingSources: ['project'],
    // The CLI starts inside the turn's isolation; there are no MCP servers to deliver (this only
    // keeps the SDK's notice about custom spawns quiet).
    ...(spawner ? { spawnClaudeCodeProcess: spawner.spawn, mcpServersDelivery: 'argv' as const } : {}),
    // A hook that throws or times out blocks the edit instead of letting it through.
    hooks: {
      PreToolUse: [
        {
          matcher: Object.keys(CLAUDE_EDIT_TOOLS).join('|'),
          hooks: [writeScopeHook(request.workspace, request.writes)],
          onFailure: 'block',
        },
      ],
    },
  };
}

export function claudeBackend(options: ClaudeBackendOptions = {}): AgentBackend {
  return {
    name: 'claude',
    async runTurn(request: AgentTurnRequest): Promise<AgentTurnResult> {
      const started = performance.now();
      const control = turnControl(request);
      const messages: SDKMessage[] = [];
      let end: ClaudeStreamEnd = { kind: 'completed' };
      let stream: ReturnType<ClaudeQuery> | undefined;
      const spawner = claudeSpawner(request.readOnly);
      try {
        // The SDK is loaded on first use (see sdk.ts); tests pass a replay instead.
        const runQuery: ClaudeQuery = options.query ?? (await loadSdk<ClaudeSdk>(CLAUDE_SDK)).query;
        if (!control.controller.signal.aborted) {
          stream = runQuery({
            prompt: turnPrompt(request),
            options: claudeOptions(request, options, control.controller, spawner),
          });
          await drain(stream, control.stopped, messages);
        }
      } catch (error) {
        if (!control.controller.signal.aborted)
          end = { kind: 'error', message: error instanceof Error ? error.message : String(error) };
      } finally {
        control.dispose();
        if (control.controller.signal.aborted) stream?.close?.();
        spawner.dispose();
      }
      const stopReason = control.reason();
      if (stopReason === 'timeout') end = { kind: 'timeout', timeoutMs: request.budget.timeoutMs };
      else if (stopReason === 'aborted') end = { kind: 'aborted' };

      const secrets = [...connectionSecrets(request.branchUrl), ...(options.apiKey ? [options.apiKey] : [])];
      return mapClaudeTurn(messages, {
        secrets,
        end,
        durationMs: Math.round(performance.now() - started),
        ...(request.budget.maxTurns !== undefined ? { maxTurns: request.budget.maxTurns } : {}),
        ...(request.budget.maxCostUsd !== undefined ? { maxBudgetUsd: request.budget.maxCostUsd } : {}),
      });
    },
  };
}
