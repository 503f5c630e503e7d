/**
 * From a feature's records to the dashboard's data contract, purely: summaries, gate status, check
 * runs, transcript excerpts and pages. Both hosts' adapters call these, so a feature reads the
 * same whether it comes from a working copy or from the App's index of a pull request's head.
 */
import type { GatesFile } from '../conductor/artifacts.js';
import type { LogEvent } from '../conductor/events.js';
import { gatedFiles, gateEnabled } from '../conductor/gates.js';
import { GATES, type ConductorState, type GateName, type TurnRecord } from '../conductor/state.js';
import { describeStep } from '../lanes/tdd/feature.js';
import { CheckReport, STAGE_ORDER } from '../report/check-report.js';
import type { CheckRunView, FeatureSummary, GateStatus, GateView, Page } from './port.js';

/** What a gate covers: artifacts at the feature's top level, cycle records and reviews (never a path that climbs out). */
export const ARTIFACT_NAME = /^(?:[a-z][a-z0-9-]*\.(?:json|md)|cycles\/cycle-\d+\.json|reviews\/T\d+\.json)$/;

const round6 = (n: number) => Math.round(n * 1e6) / 1e6;

function latest(...stamps: (string | undefined | null)[]): string | null {
  let best: string | null = null;
  for (const s of stamps) if (s && (best === null || s > best)) best = s;
  return best;
}

export function summarize(input: {
  state: ConductorState;
  turns: readonly TurnRecord[];
  events: readonly LogEvent[];
  gates: GatesFile;
  pr?: number | null;
}): FeatureSummary {
  const { state, turns, events } = input;
  const lastTurn = turns[turns.length - 1];
  const lastEvent = events[events.length - 1];
  const approvals = Object.values(input.gates.gates).map((g) => g?.approval?.at);
  const waiting = state.step === 'awaiting-approval' || state.step === 'gate';
  return {
    feature: state.feature,
    phase: state.phase,
    step: state.step,
    where: describeStep(state),
    item: state.current >= 0 ? (state.items[state.current]?.id ?? null) : null,
    openGate: waiting ? state.gate : null,
    items: state.items,
    turns: turns.length,
    inputTokens: turns.reduce((n, t) => n + t.usage.inputTokens, 0),
    outputTokens: turns.reduce((n, t) => n + t.usage.outputTokens, 0),
    costUsd: round6(turns.reduce((n, t) => n + (t.usage.costUsd ?? 0), 0)),
    agentMs: turns.reduce((n, t) => n + t.durationMs, 0),
    escalation: state.escalation,
    updatedAt: latest(
      lastTurn ? new Date(Date.parse(lastTurn.startedAt) + lastTurn.durationMs).toISOString() : null,
      lastEvent?.at,
      ...approvals,
    ),
    pr: input.pr ?? null,
  };
}

/**
 * Where a gate stands: approved while its artifacts still hash to what was approved, stale when
 * they changed since (the conductor reopens it), pending while the feature waits at it.
 */
export function gateStatus(input: {
  gate: GateName;
  state: ConductorState;
  approvalHash: string | null;
  currentHash: string | null;
}): GateStatus {
  if (input.approvalHash !== null)
    return input.currentHash === null || input.currentHash === input.approvalHash ? 'approved' : 'stale';
  const waiting =
    input.state.gate === input.gate && (input.state.step === 'awaiting-approval' || input.state.step === 'gate');
  return waiting ? 'pending' : 'not-reached';
}

/**
 * The flags the run surfaced the gate with, for these artifacts: the last `gate.surfaced` of the
 * gate with this hash (reading the flags again would need the feature's diff; the run has it).
 */
function surfacedFlags(events: readonly LogEvent[], gate: GateName, hash: string): string[] {
  const e = events.findLast((x) => x.type === 'gate.surfaced' && x.gate === gate && x.hash === hash);
  return e?.type === 'gate.surfaced' ? [...(e.flags ?? [])] : [];
}

/** The gates a feature has: the enabled ones, plus any with a recorded approval. */
export function gatesOf(state: ConductorState, gates: GatesFile): GateName[] {
  const optional = state.policy?.optionalGates ?? [];
  return GATES.filter((g) => gateEnabled(g, optional) || gates.gates[g] !== undefined || state.gate === g);
}

/** What reading a gate gives the Gates view: the artifacts' hash and whether they are valid. */
export interface GateReading {
  hash: string;
  valid: boolean;
  problems: readonly string[];
}

/**
 * The Gates view of a feature, the same on both hosts. `read` hashes a gate's artifacts (and, for
 * merge/deploy, the code tree) the host's way; it is asked only for gates a person can act on or
 * was shown (waiting, or approved), since reading costs I/O.
 */
export async function gateViews(
  state: ConductorState,
  gatesFile: GatesFile,
  cycleFiles: readonly string[],
  read: (
    gate: GateName,
    files: readonly string[],
    approval: GateView['approval'],
  ) => Promise<GateReading | null> | GateReading | null,
  events: readonly LogEvent[] = [],
): Promise<GateView[]> {
  const views: GateView[] = [];
  for (const gate of gatesOf(state, gatesFile)) {
    const entry = gatesFile.gates[gate];
    const approval = entry?.approval ?? null;
    const files = gatedFiles(gate, { userFacing: state.userFacing, cycles: [...cycleFiles] });
    const waiting = state.gate === gate && (state.step === 'awaiting-approval' || state.step === 'gate');
    const reading = waiting || approval !== null ? await read(gate, files, approval) : null;
    views.push({
      gate,
      status: gateStatus({ gate, state, approvalHash: approval?.hash ?? null, currentHash: reading?.hash ?? null }),
      hash: reading?.hash ?? '',
      valid: reading?.valid ?? false,
      problems: reading ? [...reading.problems] : [],
      flags: reading ? surfacedFlags(events, gate, reading.hash) : [],
      files,
      approval,
      history: entry?.history ?? [],
    });
  }
  return views;
}

export function paginate<T>(all: readonly T[], page: number, pageSize: number): Page<T> {
  const size = Math.max(1, Math.min(500, Number.isFinite(pageSize) ? Math.floor(pageSize) : 500));
  const pages = Math.max(1, Math.ceil(all.length / size));
  const p = Math.max(1, Math.min(pages, Math.floor(Number.isFinite(page) ? page : 1)));
  return { items: all.slice((p - 1) * size, p * size), total: all.length, page: p, pageSize: size };
}

export function pageCount(page: Page<unknown>): number {
  return Math.max(1, Math.ceil(page.total / page.pageSize));
}

/** A CheckReport (as `consort check --json` writes it) as a row of the check history; undefined when it is not one. */
export function checkRunOf(id: string, value: unknown): CheckRunView | undefined {
  const parsed = CheckReport.safeParse(value);
  if (!parsed.success) return undefined;
  const r = parsed.data;
  return {
    id,
    pr: r.pr,
    headSha: r.head.sha,
    conclusion: r.conclusion,
    startedAt: r.startedAt,
    durationMs: r.durationMs,
    stages: STAGE_ORDER.map((name) => ({
      name,
      status: r.stages[name].status,
      durationMs: r.stages[name].durationMs,
      summary: r.stages[name].summary,
    })),
  };
}

/** The transcript's last lines, bounded, as the turn's PR comment shows them. */
export function transcriptExcerpt(
  text: string,
  maxLines = 120,
  maxChars = 12_000,
): { text: string; clipped: boolean; lines: number } {
  const lines = text.replace(/\r\n?/g, '\n').replace(/\n$/, '').split('\n');
  let kept = lines.slice(-maxLines);
  while (kept.length > 1 && kept.join('\n').length > maxChars) kept = kept.slice(1);
  let out = kept.join('\n');
  if (out.length > maxChars) out = out.slice(-maxChars);
  return { text: out, clipped: kept.length < lines.length || out.length < kept.join('\n').length, lines: lines.length };
}

export interface FeatureFilter {
  /** Substring of the feature's name. */
  q?: string;
  /** `open` (not done), `waiting` (a gate or an escalation needs a person), `done`, or a step name. */
  state?: string;
  pr?: number;
}

export function filterFeatures(rows: readonly FeatureSummary[], filter: FeatureFilter): FeatureSummary[] {
  const q = filter.q?.trim().toLowerCase() ?? '';
  return rows.filter((r) => {
    if (q !== '' && !r.feature.toLowerCase().includes(q)) return false;
    if (filter.pr !== undefined && r.pr !== filter.pr) return false;
    switch (filter.state ?? '') {
      case '':
      case 'all':
        return true;
      case 'open':
        return r.step !== 'done';
      case 'waiting':
        return r.openGate !== null || r.step === 'escalated' || r.step === 'stalled';
      case 'done':
        return r.step === 'done';
      default:
        return r.step === filter.state;
    }
  });
}
