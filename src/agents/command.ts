/**
 * The `command` agent backend: runs a shell command in the workspace for each turn — a scripted
 * agent in tests, or any CLI agent wrapped in a script. The contract (documented in the README):
 *
 *   CONSORT_ROLE, CONSORT_STEP, CONSORT_FEATURE, CONSORT_ITEM (when the turn is about an item),
 *   CONSORT_CONTEXT (the context pack as JSON), CONSORT_CONTEXT_MD (the same as markdown),
 *   CONSORT_RESULT (where the command may write {"summary", "usage"}), CONSORT_EXPERIMENT (`2/3`
 *   for the second of three competing GREEN attempts), DATABASE_URL (the turn's
 *   branch, also as PG* variables). Exit 0 when the turn is done; stdout is the transcript.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { AgentBackend, AgentTurnRequest, AgentTurnResult } from '../ports/agent-backend.js';
import { childEnv } from '../core/child-env.js';
import { redact } from '../core/redact.js';
import type { ProcessRunner } from '../ports/process.js';
import { localProcessRunner } from '../process/runner.js';
import { branchEnv } from '../suite/pg-env.js';

const MAX_TRANSCRIPT = 256 * 1024;

const ResultFile = z.object({
  summary: z.string().optional(),
  usage: z
    .object({ inputTokens: z.number().min(0), outputTokens: z.number().min(0), costUsd: z.number().min(0).optional() })
    .optional(),
});

export interface CommandBackendOptions {
  command: string;
  /** Variables that receive the branch URL (DATABASE_URL, and the suite's variable when it differs). */
  urlVars?: readonly string[];
  /** Where the allow-listed basics (PATH, HOME, …) and the named `keys` are read from (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** Model-key variables this agent may receive from `env` (its own API key); no other credential reaches it. */
  keys?: readonly string[];
  /** Starts the agent's command (default: the local runner). */
  processes?: ProcessRunner;
}

function lastLine(text: string): string {
  const line =
    text
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '')
      .at(-1) ?? '';
  return clip(line);
}

const clip = (line: string): string => (line.length > 300 ? `${line.slice(0, 297)}...` : line);

/**
 * Why a command failed, from its output: the last line that names an error (Node ends a crash with
 * its stack and "Node.js v20.x", Python with the exception after its traceback), else the last line.
 */
export function failureLine(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^at\s/.test(l) && !/^Node\.js v\d/.test(l));
  const thrown = lines.findLast((l) => /^(?:Uncaught )?[\w.]*(?:Error|Exception)\b/.test(l));
  const named = lines.findLast((l) => /\b(?:[A-Z]\w*(?:Error|Exception)|error|fatal|panic)\b/.test(l));
  return clip(thrown ?? named ?? lines.at(-1) ?? '');
}

async function readResult(
  file: string,
): Promise<{ summary?: string; usage?: AgentTurnResult['usage']; problem?: string }> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return {};
  try {
    const parsed = ResultFile.safeParse(JSON.parse(text));
    if (parsed.success) return parsed.data;
    return { problem: `ignored CONSORT_RESULT: ${parsed.error.issues[0]?.message ?? 'invalid'}` };
  } catch {
    return { problem: 'ignored CONSORT_RESULT: not JSON' };
  }
}

export function commandBackend(options: CommandBackendOptions): AgentBackend {
  return {
    name: 'command',
    async runTurn(request: AgentTurnRequest): Promise<AgentTurnResult> {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'consort-turn-'));
      try {
        const files = {
          json: path.join(dir, 'context.json'),
          md: path.join(dir, 'context.md'),
          result: path.join(dir, 'result.json'),
        };
        await writeFile(files.json, request.contextPack.json);
        await writeFile(files.md, request.contextPack.markdown);
        const urlVars = [...new Set(['DATABASE_URL', ...(options.urlVars ?? [])])];
        const env: Record<string, string | undefined> = {
          ...branchEnv(request.branchUrl, urlVars),
          CONSORT_ROLE: request.role,
          CONSORT_STEP: request.step,
          CONSORT_FEATURE: request.feature,
          CONSORT_ITEM: request.item ?? undefined,
          CONSORT_CONTEXT: files.json,
          CONSORT_CONTEXT_MD: files.md,
          CONSORT_RESULT: files.result,
          CONSORT_MODEL: request.model ?? undefined,
          CONSORT_EXPERIMENT: request.experiment ? `${request.experiment.index}/${request.experiment.of}` : undefined,
        };
        const run = await (options.processes ?? localProcessRunner).run({
          command: options.command,
          cwd: request.workspace,
          env: childEnv(env, { inherit: options.env ?? process.env, secrets: options.keys ?? [] }),
          isolate: true,
          ...(request.readOnly ? { readOnly: request.readOnly } : {}),
          timeoutMs: request.budget.timeoutMs,
          maxOutputBytes: MAX_TRANSCRIPT,
          ...(request.signal ? { signal: request.signal } : {}),
        });
        const transcript = redact(run.output, [new URL(request.branchUrl).password]);
        const result = await readResult(files.result);
        const summary = result.summary ?? lastLine(transcript);
        const base = {
          transcript,
          usage: result.usage ?? { inputTokens: 0, outputTokens: 0 },
          durationMs: run.durationMs,
        };
        const tail = failureLine(transcript);
        if (run.aborted) return { ...base, summary, exit: { kind: 'aborted', message: 'the run was cancelled' } };
        if (run.timedOut)
          return {
            ...base,
            summary,
            exit: { kind: 'timeout', message: `no result within ${Math.round(request.budget.timeoutMs / 1000)}s` },
          };
        if (run.notFound)
          return { ...base, summary, exit: { kind: 'failed', message: `command not found: ${options.command}` } };
        if (run.exitCode !== 0) {
          const how = run.exitCode === null ? `killed by ${run.signal}` : `exit ${run.exitCode}`;
          return { ...base, summary, exit: { kind: 'failed', message: `${how}${tail ? `: ${tail}` : ''}` } };
        }
        return {
          ...base,
          summary: result.problem ? `${summary} (${result.problem})` : summary,
          exit: { kind: 'done' },
        };
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}
