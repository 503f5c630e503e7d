/**
 * The `codex` backend's pure half: the mapping from a Codex thread's streamed events to a turn
 * result. Codex reports tokens, not money, so `costUsd` stays undefined rather than guessed. A
 * file change outside the role's `writes` is noted in the transcript; the conductor reverts it.
 */
import type { ThreadEvent, ThreadItem } from '@openai/codex-sdk';
import type { AgentExit, AgentTurnResult } from '../ports/agent-backend.js';
import { redact } from '../core/redact.js';
import { boundTranscript, pathInScope } from './claude-events.js';

const MAX_ENTRY = 2000;
const MAX_SUMMARY = 1000;

function clip(text: string, max = MAX_ENTRY): string {
  return text.length > max ? `${text.slice(0, max)}... [${text.length - max} more characters]` : text;
}

/** Transcript lines for a completed item; only items that record work or words are kept. */
export function describeCodexItem(item: ThreadItem, workspace: string, writes: readonly string[]): string[] {
  switch (item.type) {
    case 'agent_message':
      return [`agent: ${item.text}`];
    case 'command_execution': {
      const how = item.exit_code === undefined ? item.status : `exit ${item.exit_code}`;
      const output = item.aggregated_output.trim();
      return [`$ ${item.command} (${how})`, ...(output ? [clip(output)] : [])];
    }
    case 'file_change': {
      const lines = [`files ${item.status}: ${item.changes.map((c) => `${c.kind} ${c.path}`).join(', ')}`];
      for (const change of item.changes) {
        const decision = pathInScope(workspace, writes, change.path);
        if (!decision.allow) lines.push(`outside writes: ${decision.reason} (the conductor reverts it)`);
      }
      return lines;
    }
    case 'mcp_tool_call':
      return [`mcp ${item.server}.${item.tool} (${item.status})${item.error ? `: ${item.error.message}` : ''}`];
    case 'web_search':
      return [`web search: ${item.query}`];
    case 'error':
      return [`error: ${item.message}`];
    default:
      return [];
  }
}

export function describeCodexEvent(event: ThreadEvent, workspace: string, writes: readonly string[]): string[] {
  switch (event.type) {
    case 'thread.started':
      return [`[thread] ${event.thread_id}`];
    case 'item.started':
      return event.item.type === 'command_execution' ? [`$ ${event.item.command} (started)`] : [];
    case 'item.completed':
      return describeCodexItem(event.item, workspace, writes);
    case 'turn.completed':
      return [`[turn completed] ${event.usage.input_tokens} input tokens, ${event.usage.output_tokens} output tokens`];
    case 'turn.failed':
      return [`[turn failed] ${event.error.message}`];
    case 'error':
      return [`[error] ${event.message}`];
    default:
      return [];
  }
}

export type CodexStreamEnd =
  | { kind: 'completed' }
  | { kind: 'timeout'; timeoutMs: number }
  | { kind: 'aborted' }
  | { kind: 'error'; message: string };

export interface CodexMappingOptions {
  workspace: string;
  writes: readonly string[];
  secrets: readonly string[];
  end: CodexStreamEnd;
  durationMs: number;
}

function oneParagraph(text: string): string {
  const flat = text.trim().replace(/\s+/g, ' ');
  return flat.length > MAX_SUMMARY ? `${flat.slice(0, MAX_SUMMARY - 3)}...` : flat;
}

function streamExit(events: readonly ThreadEvent[], end: CodexStreamEnd): AgentExit {
  if (end.kind === 'timeout')
    return { kind: 'timeout', message: `no result within ${Math.round(end.timeoutMs / 1000)}s` };
  if (end.kind === 'aborted') return { kind: 'aborted', message: 'the run was cancelled' };
  const failure = events.find((e) => e.type === 'turn.failed' || e.type === 'error');
  if (failure?.type === 'turn.failed') return { kind: 'failed', message: failure.error.message };
  if (failure?.type === 'error') return { kind: 'failed', message: failure.message };
  if (events.some((e) => e.type === 'turn.completed')) return { kind: 'done' };
  if (end.kind === 'error') return { kind: 'failed', message: end.message };
  return { kind: 'failed', message: 'the agent ended without completing the turn' };
}

/**
 * The turn result for a recorded (or collected) event stream. Input tokens are Codex's
 * `input_tokens` (cached input is part of it); output tokens include reasoning.
 */
export function mapCodexTurn(events: readonly ThreadEvent[], options: CodexMappingOptions): AgentTurnResult {
  const lines = events.flatMap((e) => describeCodexEvent(e, options.workspace, options.writes));
  if (options.end.kind === 'error') lines.push(`[error] ${options.end.message}`);
  const usage = { inputTokens: 0, outputTokens: 0 };
  let said = '';
  for (const e of events) {
    if (e.type === 'turn.completed') {
      usage.inputTokens += e.usage.input_tokens;
      usage.outputTokens += e.usage.output_tokens;
    } else if (e.type === 'item.completed' && e.item.type === 'agent_message' && e.item.text.trim() !== '')
      said = e.item.text;
  }
  const mask = (text: string): string => redact(text, options.secrets);
  const exit = streamExit(events, options.end);
  const summary = oneParagraph(said) || (exit.kind === 'done' ? 'the agent finished without a summary' : exit.message);
  const maskedExit: AgentExit = exit.kind === 'done' ? exit : { kind: exit.kind, message: mask(exit.message) };
  return {
    summary: mask(summary),
    transcript: boundTranscript(lines.map(mask)),
    usage,
    durationMs: options.durationMs,
    exit: maskedExit,
  };
}
