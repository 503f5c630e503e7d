/**
 * The `openai` agent backend: any OpenAI-compatible chat endpoint (OpenAI, Databricks model
 * serving, a local gateway) through the Vercel AI SDK. Each turn is one tool loop: the role's
 * prompt as the system message, the context pack as the user message, and the tools of
 * `openai-tools.ts`; the loop ends when the model answers without a tool call, after
 * `budget.maxTurns` steps, at the timeout, or when the run is cancelled.
 *
 * Usage is the SDK's token count; the cost is left undefined because the endpoint does not report
 * one and a price table would be a guess.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, stepCountIs, type StepResult, type ToolSet } from 'ai';
import { connectionSecrets, redact } from '../core/redact.js';
import type { AgentBackend, AgentTurnRequest, AgentTurnResult } from '../ports/agent-backend.js';
import { agentTools, type SuiteSettings } from './openai-tools.js';

export type { SuiteSettings } from './openai-tools.js';

const MAX_TRANSCRIPT = 256 * 1024;
const MAX_ENTRY = 8 * 1024;
const MAX_SUMMARY = 1000;
const DEFAULT_MAX_STEPS = 30;

export interface OpenAIBackendOptions {
  /** The endpoint's base URL, up to and including `/v1` (requests go to `<baseUrl>/chat/completions`). */
  baseUrl: string;
  apiKey: string;
  /** The model when the request names none. */
  model: string;
  headers?: Record<string, string>;
  fetch?: typeof fetch;
  /** The project's suite, for the `run_suite` tool; without it the tool says none is configured. */
  suite?: SuiteSettings;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)} [... ${text.length - max} characters dropped]`;
}

function show(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Keeps the first entry and the latest ones when the transcript grows past its bound. */
class Transcript {
  private readonly entries: string[] = [];
  private size = 0;
  private dropped = 0;

  add(entry: string): void {
    const text = clip(entry, MAX_ENTRY);
    this.entries.push(text);
    this.size += text.length + 1;
    while (this.size > MAX_TRANSCRIPT && this.entries.length > 2) {
      const [gone] = this.entries.splice(1, 1);
      this.size -= (gone?.length ?? 0) + 1;
      this.dropped += 1;
    }
  }

  text(): string {
    if (this.dropped === 0) return this.entries.join('\n');
    return [this.entries[0], `[... ${this.dropped} earlier entries dropped ...]`, ...this.entries.slice(1)].join('\n');
  }
}

function recordStep(transcript: Transcript, index: number, step: StepResult<ToolSet>): void {
  transcript.add(`## step ${index}`);
  if (step.text.trim() !== '') transcript.add(`assistant: ${step.text.trim()}`);
  for (const call of step.toolCalls) transcript.add(`tool call ${call.toolName}(${show(call.input)})`);
  for (const result of step.toolResults) transcript.add(`tool result ${result.toolName}: ${show(result.output)}`);
}

/** Header values that carry credentials (a gateway token, an `Authorization` override). */
function secretHeaders(headers: Record<string, string> = {}): string[] {
  return Object.entries(headers)
    .filter(([name]) => /auth|key|token|secret|cookie/i.test(name))
    .map(([, value]) => value);
}

function firstParagraph(text: string): string {
  const paragraph = text.trim().split(/\n\s*\n/)[0] ?? '';
  return clip(paragraph.replace(/\s+/g, ' '), MAX_SUMMARY);
}

/** What a turn whose endpoint answered 401 says (AgentTurnResult.signInRefused). */
export const OPENAI_SIGN_IN_HINT =
  "the openai backend's endpoint refused its key (HTTP 401): export OPENAI_API_KEY (or the variable agent.apiKeyEnv names) before `consort run`";

export function openaiBackend(options: OpenAIBackendOptions): AgentBackend {
  const provider = createOpenAICompatible({
    name: 'openai',
    baseURL: options.baseUrl,
    apiKey: options.apiKey,
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return {
    name: 'openai',
    async runTurn(request: AgentTurnRequest): Promise<AgentTurnResult> {
      const started = performance.now();
      const secrets = [options.apiKey, ...connectionSecrets(request.branchUrl), ...secretHeaders(options.headers)];
      const timeout = AbortSignal.timeout(request.budget.timeoutMs);
      const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
      const transcript = new Transcript();
      const usage = { inputTokens: 0, outputTokens: 0 };
      const steps = request.budget.maxTurns ?? DEFAULT_MAX_STEPS;
      let index = 0;
      const finish = (summary: string, exit: AgentTurnResult['exit']): AgentTurnResult => ({
        summary: redact(summary, secrets),
        transcript: redact(transcript.text(), secrets),
        usage: { ...usage },
        durationMs: Math.round(performance.now() - started),
        exit,
      });
      try {
        const result = await generateText({
          model: provider.chatModel(request.model ?? options.model),
          system: request.instructions,
          prompt: request.contextPack.markdown,
          tools: agentTools({
            workspace: request.workspace,
            writes: request.writes,
            branchUrl: request.branchUrl,
            signal,
            ...(options.suite ? { suite: options.suite } : {}),
            ...(request.migrationEngine ? { migrationEngine: request.migrationEngine } : {}),
          }),
          stopWhen: stepCountIs(steps),
          abortSignal: signal,
          // One retry for a transient endpoint error; the turn's timeout bounds the rest.
          maxRetries: 1,
          onStepFinish: (step) => {
            index += 1;
            usage.inputTokens += step.usage.inputTokens ?? 0;
            usage.outputTokens += step.usage.outputTokens ?? 0;
            recordStep(transcript, index, step);
          },
        });
        const stoppedEarly = result.finishReason === 'tool-calls';
        const summary = firstParagraph(result.text) || (stoppedEarly ? '' : 'the model gave no summary');
        return finish(stoppedEarly ? `${summary}${summary ? ' ' : ''}(stopped after ${steps} steps)` : summary, {
          kind: 'done',
        });
      } catch (e) {
        const why = e instanceof Error ? e.message : String(e);
        transcript.add(`error: ${why}`);
        if (request.signal?.aborted)
          return finish('the turn was cancelled', { kind: 'aborted', message: 'the run was cancelled' });
        if (timeout.aborted) {
          return finish('the turn ran out of time', {
            kind: 'timeout',
            message: `no result within ${Math.round(request.budget.timeoutMs / 1000)}s`,
          });
        }
        const failed = finish(`the model call failed: ${clip(why, 300)}`, {
          kind: 'failed',
          message: redact(clip(why, 300), secrets),
        });
        // The endpoint refused the key (the AI SDK's APICallError, or the last one its retry kept).
        const status =
          (e as { statusCode?: unknown }).statusCode ??
          (e as { lastError?: { statusCode?: unknown } }).lastError?.statusCode;
        return status === 401 ? { ...failed, signInRefused: OPENAI_SIGN_IN_HINT } : failed;
      }
    },
  };
}
