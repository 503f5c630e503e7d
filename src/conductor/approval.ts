/**
 * A person's approval of a gate, decided purely: the same rules wherever the person is — `consort
 * approve` and the local dashboard (files on disk), the App's dashboard (records indexed from the
 * pull request's head). The caller reads the gated files and the feature's state its own way, hands
 * them in, and writes back the approval and the log line this returns.
 *
 * Rules: a known gate; a named human (never "proxy"); the feature waiting at exactly that gate;
 * every gated artifact present and schema-valid; and, when the caller says what the person was
 * shown, artifacts that still hash to it — otherwise the approval would cover something nobody read.
 */
import { crossCheck, parseArtifact, type FeatureSpec, type GatesFile, type TestList } from './artifacts.js';
import { CycleRecord } from './effects.js';
import type { GateCheck, LogEvent } from './events.js';
import { approverProblem, gateHash, type GatedFile } from './gates.js';
import { GATES, type ConductorState, type GateName, type Item } from './state.js';
import { ConsortError } from '../core/errors.js';

export interface GateApprovalRecord {
  approver: string;
  at: string;
  hash: string;
  proxy: boolean;
  headSha?: string;
}

function parsesAsCycle(content: string | null): boolean {
  if (content === null) return false;
  try {
    return CycleRecord.safeParse(JSON.parse(content)).success;
  } catch {
    return false;
  }
}

/** Whether the gated files can be approved, and their hash: what the conductor decides a gate on. */
export function checkGate(
  files: readonly GatedFile[],
  approval: GateCheck['approval'],
  flags: readonly string[] = [],
): { check: GateCheck; items?: Item[] } {
  const problems: string[] = [];
  let spec: FeatureSpec | undefined;
  let list: TestList | undefined;
  for (const f of files) {
    if (f.file === 'git:tree') continue;
    if (f.file.startsWith('cycles/')) {
      if (!parsesAsCycle(f.content)) problems.push(`${f.file} is not a valid cycle record`);
      continue;
    }
    const r = parseArtifact(f.file, f.content);
    if (!r.ok) problems.push(...r.problems);
    else if (f.file === 'feature-spec.json') spec = r.value as FeatureSpec;
    else if (f.file === 'test-list.json') list = r.value as TestList;
  }
  problems.push(...crossCheck(spec, list));
  const check: GateCheck = {
    valid: problems.length === 0,
    problems,
    hash: gateHash(files),
    approval,
    ...(flags.length ? { flags: [...flags] } : {}),
  };
  return { check, ...(list && problems.length === 0 ? { items: list.items } : {}) };
}

export interface ApprovalInput {
  feature: string;
  gate: string;
  approver: string;
  state: ConductorState;
  /** The gate's reading now (checkGate over the files as they are). */
  check: GateCheck;
  /** What the person was shown: refused unless the artifacts still hash to it. */
  expectedHash?: string;
  /** The pull request's head commit the approval was given on. */
  headSha?: string;
  at: string;
  /** Where the feature stands, in words (`consort status`'s line), for the refusal. */
  where?: string;
}

export interface ApprovalDecision {
  gate: GateName;
  approval: GateApprovalRecord;
  /** The line for events.jsonl. */
  event: LogEvent;
}

/** The one approval rule (see the module comment); throws a ConsortError that says what to do. */
export function decideApproval(input: ApprovalInput): ApprovalDecision {
  if (!(GATES as readonly string[]).includes(input.gate)) {
    throw new ConsortError('invalid-input', `Unknown gate "${input.gate}".`, { hint: `Gates: ${GATES.join(', ')}.` });
  }
  const gate = input.gate as GateName;
  const problem = approverProblem(input.approver);
  if (problem)
    throw new ConsortError('invalid-input', `Cannot approve: ${problem}.`, {
      hint: 'Approve as a named person: --as <name>.',
    });
  const { state } = input;
  if (state.gate !== gate || (state.step !== 'gate' && state.step !== 'awaiting-approval')) {
    throw new ConsortError(
      'invalid-input',
      `${input.feature} is not at the ${gate} gate (it is at: ${input.where ?? `${state.step}${state.gate ? ` ${state.gate}` : ''}`}).`,
      {
        hint: 'Approve a gate when `consort status` shows it waiting.',
      },
    );
  }
  if (!input.check.valid) {
    throw new ConsortError(
      'invalid-input',
      `The ${gate} gate cannot be approved: ${input.check.problems.slice(0, 8).join('; ')}.`,
      {
        hint: 'Fix the artifacts (or run the design again); a missing or invalid artifact is never approved.',
      },
    );
  }
  if (input.expectedHash !== undefined && input.expectedHash !== input.check.hash) {
    throw new ConsortError(
      'invalid-input',
      `The ${gate} gate's artifacts changed since it was announced, so this approval would cover something nobody was shown.`,
      {
        hint: 'Run the lane again (`/consort build` or `consort run`) to announce the gate with its current content, then approve.',
      },
    );
  }
  const approver = input.approver.trim();
  const approval: GateApprovalRecord = {
    approver,
    at: input.at,
    hash: input.check.hash,
    proxy: false,
    ...(input.headSha ? { headSha: input.headSha } : {}),
  };
  const event: LogEvent = {
    id: `approve:${gate}:${input.at}`,
    at: input.at,
    feature: input.feature,
    type: 'gate.approved',
    gate,
    hash: input.check.hash,
    approver,
    proxy: false,
  };
  return { gate, approval, event };
}

/** gates.json with the approval recorded (history kept; the same approval twice is recorded once). */
export function withApproval(file: GatesFile, gate: GateName, approval: GateApprovalRecord): GatesFile {
  const entry = file.gates[gate] ?? { approval: null, history: [] };
  if (entry.history.some((h) => h.at === approval.at && h.hash === approval.hash && h.approver === approval.approver))
    return file;
  return { ...file, gates: { ...file.gates, [gate]: { approval, history: [...entry.history, approval] } } };
}
