/**
 * Stand-in lanes for tests about the queue and the store: they record when they ran and return a
 * real (schema-valid) CheckReport, or wait until their run is cancelled.
 */
import type { Lane } from '../../../app/jobs/deps.js';
import type { CheckInput } from '../../../src/lanes/check/run.js';
import { initialStages } from '../../../src/lanes/check/stages.js';
import { CHECK_REPORT_VERSION, CheckReport } from '../../../src/report/check-report.js';

export function reportFor(input: CheckInput, conclusion: 'success' | 'failure'): CheckReport {
  const stages = initialStages(input.config, 'not run (stand-in lane)');
  stages.plan = { ...stages.plan, status: 'passed', summary: 'stand-in' };
  if (conclusion === 'failure') stages.suite = { ...stages.suite, status: 'failed', summary: 'stand-in failure' };
  return CheckReport.parse({
    schemaVersion: CHECK_REPORT_VERSION,
    tool: { name: 'consort', version: 'test' },
    conclusion,
    startedAt: new Date().toISOString(),
    durationMs: 1,
    provider: input.provider.name,
    branchMode: null,
    base: { ref: input.base.ref, sha: input.base.sha },
    head: { ref: input.head.ref, sha: input.head.sha },
    pr: input.pr,
    branch: null,
    configSource: input.configSource,
    stages,
  });
}

export interface LaneCall {
  head: string | null;
  started: number;
  ended?: number;
  aborted?: boolean;
}

/** A lane that, for heads in `hold`, waits until its run is cancelled (or `release` is called); others pass at once. */
export function recordingLane(hold: Set<string> = new Set()): { lane: Lane; calls: LaneCall[]; release: () => void } {
  const calls: LaneCall[] = [];
  const waiting: (() => void)[] = [];
  const lane: Lane = async (input) => {
    const call: LaneCall = { head: input.head.sha, started: Date.now() };
    calls.push(call);
    if (input.head.sha !== null && hold.has(input.head.sha)) {
      await new Promise<void>((resolve) => {
        waiting.push(resolve);
        input.signal?.addEventListener('abort', () => resolve(), { once: true });
      });
      call.aborted = input.signal?.aborted === true;
    }
    call.ended = Date.now();
    return reportFor(input, 'success');
  };
  return { lane, calls, release: () => waiting.splice(0).forEach((r) => r()) };
}
