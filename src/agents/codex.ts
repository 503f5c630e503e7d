/**
 * The `codex` agent backend: one turn is one streamed run on a new Codex thread in the workspace,
 * sandboxed to it (`workspace-write`) and never asking for approval. Codex honours no per-path
 * write rule, so out-of-scope file changes are only noted; the conductor's diff check reverts them.
 * Each turn gets its own Codex client because the branch URL is passed in the CLI's environment
 * (the SDK's `env` replaces `process.env`, so the rest of it is passed along explicitly).
 * The SDK runs here, in Consort's process; the Codex CLI it starts (and every command the model
 * runs) is started by a launcher script inside the turn's isolation, with its read-only folders
 * (isolated-cli.ts).
 */
import type { CodexOptions, Input, ThreadEvent, ThreadOptions, TurnOptions } from '@openai/codex-sdk';
import type { AgentBackend, AgentTurnRequest, AgentTurnResult } from '../ports/agent-backend.js';
import { connectionSecrets } from '../core/redact.js';
import { branchEnv } from '../suite/pg-env.js';
import { mapCodexTurn, type CodexStreamEnd } from './codex-events.js';
import { codexLauncher, type CodexLauncher } from './isolated-cli.js';
import { CODEX_SDK, codexCliPath, type CodexSdk, loadSdk } from './sdk.js';
import { drain, STOP, turnControl } from './turn-control.js';
import { childEnv } from '../core/child-env.js';

/** What the backend needs of the SDK: `new Codex(options)` fits, and tests pass a replay. */
export interface CodexThreadLike {
  runStreamed(input: Input, turnOptions?: TurnOptions): Promise<{ events: AsyncIterable<ThreadEvent> }>;
}
export interface CodexClient {
  startThread(options?: ThreadOptions): CodexThreadLike;
}
export type CodexFactory = (options: CodexOptions) => CodexClient;

export interface CodexBackendOptions {
  /** Used when the turn does not name a model. */
  model?: string;
  /** Given to the Codex CLI; otherwise its own login or environment applies. */
  apiKey?: string;
  codex?: CodexFactory;
  /** The Codex CLI's Node launcher (default: `@openai/codex/bin/codex.js` next to the SDK). */
  cli?: string;
  /** Variables that receive the branch URL (DATABASE_URL, and the suite's variable when it differs). */
  urlVars?: readonly string[];
  env?: NodeJS.ProcessEnv;
}

export function codexPrompt(request: AgentTurnRequest): string {
  return `${request.instructions.trim()}\n\n${request.contextPack.markdown}`;
}

export function codexClientOptions(
  request: AgentTurnRequest,
  options: CodexBackendOptions,
  launcher?: Pick<CodexLauncher, 'path' | 'env'>,
): CodexOptions {
  const urlVars = [...new Set(['DATABASE_URL', ...(options.urlVars ?? [])])];
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(
    childEnv({ ...branchEnv(request.branchUrl, urlVars), ...launcher?.env }, { inherit: options.env ?? process.env }),
  )) {
    if (value !== undefined) env[key] = value;
  }
  return {
    env,
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
    ...(launcher ? { codexPathOverride: launcher.path } : {}),
  };
}

export function codexThreadOptions(request: AgentTurnRequest, options: CodexBackendOptions): ThreadOptions {
  const model = request.model ?? options.model;
  return {
    workingDirectory: request.workspace,
    sandboxMode: 'workspace-write',
    approvalPolicy: 'never',
    // The conductor owns the workspace (a worktree or a copy); the suite must reach the branch database.
    skipGitRepoCheck: true,
    networkAccessEnabled: true,
    webSearchMode: 'disabled',
    ...(model ? { model } : {}),
  };
}

export function codexBackend(options: CodexBackendOptions = {}): AgentBackend {
  return {
    name: 'codex',
    async runTurn(request: AgentTurnRequest): Promise<AgentTurnResult> {
      const started = performance.now();
      const control = turnControl(request);
      const events: ThreadEvent[] = [];
      let end: CodexStreamEnd = { kind: 'completed' };
      let launcher: CodexLauncher | undefined;
      try {
        // The SDK is loaded on first use (see sdk.ts); tests pass a replay instead.
        const createCodex: CodexFactory =
          options.codex ?? (await loadSdk<CodexSdk>(CODEX_SDK).then((sdk) => (o: CodexOptions) => new sdk.Codex(o)));
        if (!control.controller.signal.aborted) {
          launcher = await codexLauncher(options.cli ?? codexCliPath(), request.readOnly);
          const thread = createCodex(codexClientOptions(request, options, launcher)).startThread(
            codexThreadOptions(request, options),
          );
          const run = await Promise.race([
            thread.runStreamed(codexPrompt(request), { signal: control.controller.signal }),
            control.stopped,
          ]);
          if (run !== STOP) await drain(run.events, control.stopped, events);
        }
      } catch (error) {
        if (!control.controller.signal.aborted)
          end = { kind: 'error', message: error instanceof Error ? error.message : String(error) };
      } finally {
        control.dispose();
        await launcher?.dispose();
      }
      const stopReason = control.reason();
      if (stopReason === 'timeout') end = { kind: 'timeout', timeoutMs: request.budget.timeoutMs };
      else if (stopReason === 'aborted') end = { kind: 'aborted' };

      const secrets = [...connectionSecrets(request.branchUrl), ...(options.apiKey ? [options.apiKey] : [])];
      return mapCodexTurn(events, {
        workspace: request.workspace,
        writes: request.writes,
        secrets,
        end,
        durationMs: Math.round(performance.now() - started),
      });
    },
  };
}
