/**
 * The `claude` backend's pure half: the write-scope decision its PreToolUse hook makes, and the
 * mapping from the Agent SDK's message stream to a turn result. Kept apart from `claude.ts` so both
 * are tested with recorded streams, without a Claude Code process.
 */
import path from 'node:path';
import type { SDKMessage, SDKResultMessage } from '@anthropic-ai/claude-agent-sdk';
import type { AgentExit, AgentTurnResult } from '../ports/agent-backend.js';
import { matchesAny } from '../core/glob.js';
import { redact } from '../core/redact.js';

export const MAX_TRANSCRIPT = 256 * 1024;
/** One tool input or output in the transcript; the diff, not the transcript, is the record of edits. */
const MAX_ENTRY = 2000;
const MAX_SUMMARY = 1000;

/**
 * Claude Code's file-editing tools and the input field that names the file, as the SDK's
 * sdk-tools.d.ts defines them (FileWriteInput, FileEditInput, NotebookEditInput; MultiEdit is gone).
 */
export const CLAUDE_EDIT_TOOLS: Readonly<Record<string, string>> = {
  Write: 'file_path',
  Edit: 'file_path',
  NotebookEdit: 'notebook_path',
};

export type ScopeDecision = { allow: true; path: string } | { allow: false; reason: string };

/**
 * Whether a file the agent names (absolute, or relative to the workspace) is inside the role's
 * `writes`. Paths that leave the workspace are refused whatever the globs say. Symlinks are not
 * followed: the conductor's diff check after the turn is the guard, this is early feedback.
 */
export function pathInScope(workspace: string, writes: readonly string[], file: string): ScopeDecision {
  const root = path.resolve(workspace);
  const relative = path.relative(root, path.resolve(root, file));
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) {
    return { allow: false, reason: `${file} is outside the workspace` };
  }
  const rel = relative.split(path.sep).join('/');
  if (!matchesAny(rel, writes))
    return { allow: false, reason: `${rel} is outside this role's writes (${writes.join(', ') || 'none'})` };
  return { allow: true, path: rel };
}

/** The hook's decision for one tool call: `null` when the tool does not edit files. */
export function editToolDecision(
  workspace: string,
  writes: readonly string[],
  toolName: string,
  toolInput: unknown,
): ScopeDecision | null {
  const field = CLAUDE_EDIT_TOOLS[toolName];
  if (field === undefined) return null;
  const value =
    typeof toolInput === 'object' && toolInput !== null ? (toolInput as Record<string, unknown>)[field] : undefined;
  if (typeof value !== 'string' || value === '') return { allow: false, reason: `${toolName} without a ${field}` };
  return pathInScope(workspace, writes, value);
}

function clip(text: string, max = MAX_ENTRY): string {
  return text.length > max ? `${text.slice(0, max)}... [${text.length - max} more characters]` : text;
}

function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return String(value);
  }
}

function toolResultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block: unknown) => {
      const b = block as { type?: unknown; text?: unknown };
      return b.type === 'text' && typeof b.text === 'string' ? b.text : `[${String(b.type)}]`;
    })
    .join('\n');
}

/** The transcript lines for one message; messages that say nothing about the work give none. */
export function describeClaudeMessage(message: SDKMessage): string[] {
  switch (message.type) {
    case 'system':
      if (message.subtype === 'init') {
        return [
          `[init] model ${message.model}, permission mode ${message.permissionMode}, ${message.tools.length} tools`,
        ];
      }
      return [];
    case 'assistant': {
      const lines: string[] = [];
      for (const block of message.message.content) {
        if (block.type === 'text') lines.push(`assistant: ${block.text}`);
        else if (block.type === 'tool_use') lines.push(`tool ${block.name}: ${clip(stringify(block.input))}`);
      }
      if (message.error) lines.push(`assistant error: ${message.error}`);
      return lines;
    }
    case 'user': {
      const content = message.message.content;
      if (typeof content === 'string') return [];
      const lines: string[] = [];
      for (const block of content) {
        if (block.type === 'tool_result')
          lines.push(`${block.is_error ? 'tool error' : 'tool result'}: ${clip(toolResultText(block.content))}`);
      }
      return lines;
    }
    case 'result': {
      const cost = `$${message.total_cost_usd.toFixed(4)}`;
      const errors = message.subtype === 'success' ? [] : message.errors.map((e) => `error: ${e}`);
      return [`[result] ${message.subtype} after ${message.num_turns} turns, ${cost}`, ...errors];
    }
    default:
      return [];
  }
}

/** How the stream ended, as seen by the backend. */
export type ClaudeStreamEnd =
  | { kind: 'completed' }
  | { kind: 'timeout'; timeoutMs: number }
  | { kind: 'aborted' }
  | { kind: 'error'; message: string };

export interface ClaudeMappingOptions {
  /** Strings to mask wherever they appear (branch URL and password, API key). */
  secrets: readonly string[];
  end: ClaudeStreamEnd;
  durationMs: number;
  maxTurns?: number;
  maxBudgetUsd?: number;
}

/** Keeps the end of a long transcript: the last steps say most about how a turn ended. */
export function boundTranscript(lines: readonly string[], max = MAX_TRANSCRIPT): string {
  const text = lines.join('\n');
  if (text.length <= max) return text;
  const dropped = text.length - max;
  return `[... ${dropped} earlier characters dropped]\n${text.slice(dropped)}`;
}

function oneParagraph(text: string): string {
  const flat = text.trim().replace(/\s+/g, ' ');
  return flat.length > MAX_SUMMARY ? `${flat.slice(0, MAX_SUMMARY - 3)}...` : flat;
}

function lastAssistantText(messages: readonly SDKMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.type !== 'assistant' || m.parent_tool_use_id !== null) continue;
    const text = m.message.content
      .flatMap((b) => (b.type === 'text' ? [b.text] : []))
      .join('\n')
      .trim();
    if (text !== '') return text;
  }
  return '';
}

function resultExit(result: SDKResultMessage | undefined, options: ClaudeMappingOptions): AgentExit {
  if (result === undefined) return { kind: 'failed', message: 'the agent ended without a result' };
  switch (result.subtype) {
    case 'success':
      return result.is_error
        ? { kind: 'failed', message: oneParagraph(result.result) || 'the agent reported an error' }
        : { kind: 'done' };
    case 'error_max_turns':
      return {
        kind: 'failed',
        message: `budget: stopped at the turn limit (${options.maxTurns ?? result.num_turns} turns)`,
      };
    case 'error_max_budget_usd': {
      const cap = options.maxBudgetUsd === undefined ? '' : ` of $${options.maxBudgetUsd.toFixed(2)}`;
      return {
        kind: 'failed',
        message: `budget: stopped at the cost cap${cap} ($${result.total_cost_usd.toFixed(4)} spent)`,
      };
    }
    case 'error_max_structured_output_retries':
      return { kind: 'failed', message: 'the agent could not produce the structured output' };
    default:
      return { kind: 'failed', message: result.errors.join('; ') || `error during execution (${result.subtype})` };
  }
}

function endExit(end: ClaudeStreamEnd, result: SDKResultMessage | undefined, options: ClaudeMappingOptions): AgentExit {
  switch (end.kind) {
    case 'timeout':
      return { kind: 'timeout', message: `no result within ${Math.round(end.timeoutMs / 1000)}s` };
    case 'aborted':
      return { kind: 'aborted', message: 'the run was cancelled' };
    case 'error':
      // A process that dies after its result message has still done the turn.
      return result === undefined ? { kind: 'failed', message: end.message } : resultExit(result, options);
    default:
      return resultExit(result, options);
  }
}

/**
 * Claude Code without credentials answers "Not logged in · Please run /login", which names a
 * command of Claude Code, not what to do in Consort: a failed turn whose model call was refused for
 * authentication also says where the backend's key comes from.
 */
export const CLAUDE_SIGN_IN_HINT =
  'the claude backend could not sign in: export ANTHROPIC_API_KEY (or the variable agent.apiKeyEnv names) before `consort run`';

const signInFailed = (messages: readonly SDKMessage[]): boolean =>
  messages.some((m) => m.type === 'assistant' && m.error === 'authentication_failed');

function withSignInHint(exit: AgentExit, messages: readonly SDKMessage[]): AgentExit {
  if (exit.kind !== 'failed') return exit;
  return signInFailed(messages) ? { kind: 'failed', message: `${exit.message} (${CLAUDE_SIGN_IN_HINT})` } : exit;
}

/**
 * Tokens of the whole query from the result's `modelUsage` (every model: subagents, sidechains and
 * auxiliary calls included); the result's `usage` covers the main loop only, so it is the fallback for
 * a result without `modelUsage`. Input tokens include the cache reads and writes, which are billed as input.
 */
export function resultTokens(result: SDKResultMessage): { inputTokens: number; outputTokens: number } {
  const models = Object.values(result.modelUsage ?? {});
  if (models.length === 0) {
    const u = result.usage;
    return {
      inputTokens: u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens,
      outputTokens: u.output_tokens,
    };
  }
  let inputTokens = 0;
  let outputTokens = 0;
  for (const m of models) {
    inputTokens += m.inputTokens + m.cacheReadInputTokens + m.cacheCreationInputTokens;
    outputTokens += m.outputTokens;
  }
  return { inputTokens, outputTokens };
}

/**
 * The turn result for a recorded (or collected) message stream. The result message decides usage
 * and cost: `total_cost_usd` is the SDK's estimate for the whole query, covering the same calls as
 * `modelUsage`.
 */
export function mapClaudeTurn(messages: readonly SDKMessage[], options: ClaudeMappingOptions): AgentTurnResult {
  let result: SDKResultMessage | undefined;
  for (const m of messages) if (m.type === 'result') result = m;
  const lines = messages.flatMap(describeClaudeMessage);
  if (options.end.kind === 'error') lines.push(`[error] ${options.end.message}`);
  const mask = (text: string): string => redact(text, options.secrets);
  const exit = withSignInHint(endExit(options.end, result, options), messages);
  const signInRefused = exit.kind === 'failed' && signInFailed(messages);
  const said = result?.subtype === 'success' ? result.result : lastAssistantText(messages);
  const summary = oneParagraph(said) || (exit.kind === 'done' ? 'the agent finished without a summary' : exit.message);
  const usage: AgentTurnResult['usage'] = result
    ? { ...resultTokens(result), costUsd: result.total_cost_usd }
    : { inputTokens: 0, outputTokens: 0 };
  const maskedExit: AgentExit = exit.kind === 'done' ? exit : { kind: exit.kind, message: mask(exit.message) };
  return {
    summary: mask(summary),
    transcript: boundTranscript(lines.map(mask)),
    usage,
    durationMs: options.durationMs,
    exit: maskedExit,
    ...(signInRefused ? { signInRefused: CLAUDE_SIGN_IN_HINT } : {}),
  };
}
