/**
 * View models: what each picture and table shows, computed purely from the data contract so it can
 * be table-tested without a browser. Every verdict has a word and a symbol as well as a colour,
 * so no picture depends on colour alone.
 */
import type { CycleRecord } from '../conductor/effects.js';
import type { LogEvent } from '../conductor/events.js';
import type { TurnRecord } from '../conductor/state.js';
import type { CheckRunView, FeatureSummary } from './port.js';

export const VERDICT_SYMBOL: Record<string, string> = {
  accepted: '✓',
  refused: '✗',
  failed: '!',
  incomplete: '…',
  rejected: '⊘',
};

export interface Bar {
  turn: string;
  role: string;
  start: Date;
  end: Date;
  verdict: string;
  symbol: string;
  /** One line for the tooltip: turn, step, item, verdict, reason. */
  label: string;
}

export interface Marker {
  at: Date;
  /** Short text drawn on the axis: `T1 red`, `spec ✓ alice`. */
  label: string;
  kind: 'cycle' | 'gate';
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function timelineBars(turns: readonly TurnRecord[]): Bar[] {
  return turns.flatMap((t) => {
    const start = Date.parse(t.startedAt);
    if (!Number.isFinite(start)) return [];
    const symbol = VERDICT_SYMBOL[t.verdict] ?? '?';
    const reason = t.reason ? ` — ${clip(t.reason, 160)}` : '';
    return [
      {
        turn: t.id,
        role: t.role,
        start: new Date(start),
        end: new Date(start + Math.max(t.durationMs, 1)),
        verdict: t.verdict,
        symbol,
        label: `${t.id} ${t.role} ${t.step}${t.item ? ` ${t.item}` : ''}: ${symbol} ${t.verdict}${reason}`,
      },
    ];
  });
}

/** Cycle stamps and gate approvals inside [from, to] (the turns shown), for the same axis. */
export function timelineMarkers(
  cycles: readonly CycleRecord[],
  events: readonly LogEvent[],
  from: Date,
  to: Date,
): Marker[] {
  const inRange = (at: string) => {
    const t = Date.parse(at);
    return Number.isFinite(t) && t >= from.getTime() && t <= to.getTime();
  };
  const out: Marker[] = [];
  for (const c of cycles) {
    for (const [step, stamp] of [
      ['red', c.red],
      ['green', c.green],
      ['refactor', c.refactor],
    ] as const) {
      if (stamp && inRange(stamp.at)) out.push({ at: new Date(stamp.at), label: `${c.item} ${step}`, kind: 'cycle' });
    }
  }
  for (const e of events) {
    if (e.type === 'gate.approved' && inRange(e.at))
      out.push({ at: new Date(e.at), label: `${e.gate} ✓ ${clip(e.approver, 24)}`, kind: 'gate' });
    if (e.type === 'gate.surfaced' && inRange(e.at))
      out.push({ at: new Date(e.at), label: `${e.gate} ?`, kind: 'gate' });
  }
  return out.sort((a, b) => a.at.getTime() - b.at.getTime());
}

export interface Share {
  key: string;
  costUsd: number;
  turns: number;
  tokens: number;
}

function shares(turns: readonly TurnRecord[], key: (t: TurnRecord) => string): Share[] {
  const by = new Map<string, Share>();
  for (const t of turns) {
    const k = key(t);
    const s = by.get(k) ?? { key: k, costUsd: 0, turns: 0, tokens: 0 };
    s.costUsd += t.usage.costUsd ?? 0;
    s.turns += 1;
    s.tokens += t.usage.inputTokens + t.usage.outputTokens;
    by.set(k, s);
  }
  return [...by.values()].map((s) => ({ ...s, costUsd: Math.round(s.costUsd * 1e6) / 1e6 }));
}

export function costByRole(turns: readonly TurnRecord[]): Share[] {
  return shares(turns, (t) => t.role).sort(
    (a, b) => b.costUsd - a.costUsd || b.turns - a.turns || a.key.localeCompare(b.key),
  );
}

/** Turns per test-list item, by verdict (design turns have no item and are left out). */
export function turnsPerItem(turns: readonly TurnRecord[]): { item: string; verdict: string; turns: number }[] {
  const by = new Map<string, { item: string; verdict: string; turns: number }>();
  for (const t of turns) {
    if (t.item === null) continue;
    const k = `${t.item}\0${t.verdict}`;
    const row = by.get(k) ?? { item: t.item, verdict: t.verdict, turns: 0 };
    row.turns += 1;
    by.set(k, row);
  }
  const num = (id: string) => Number(/\d+/.exec(id)?.[0] ?? Number.MAX_SAFE_INTEGER);
  return [...by.values()].sort(
    (a, b) => num(a.item) - num(b.item) || a.item.localeCompare(b.item) || a.verdict.localeCompare(b.verdict),
  );
}

export function costPerFeature(rows: readonly FeatureSummary[]): { feature: string; costUsd: number; turns: number }[] {
  return rows
    .map((r) => ({ feature: r.feature, costUsd: r.costUsd, turns: r.turns }))
    .sort((a, b) => b.costUsd - a.costUsd || a.feature.localeCompare(b.feature));
}

/** Check durations, oldest first, per stage and in total: the trend plot's points. */
export function checkTrend(
  runs: readonly CheckRunView[],
): { at: Date; run: string; stage: string; seconds: number; conclusion: string }[] {
  const points: { at: Date; run: string; stage: string; seconds: number; conclusion: string }[] = [];
  for (const r of [...runs].sort((a, b) => (a.startedAt < b.startedAt ? -1 : a.startedAt > b.startedAt ? 1 : 0))) {
    const at = new Date(r.startedAt);
    if (!Number.isFinite(at.getTime())) continue;
    points.push({ at, run: r.id, stage: 'total', seconds: r.durationMs / 1000, conclusion: r.conclusion });
    for (const s of r.stages)
      if (s.name === 'suite' || s.name === 'migrations')
        points.push({ at, run: r.id, stage: s.name, seconds: s.durationMs / 1000, conclusion: r.conclusion });
  }
  return points;
}

/** The branch tree, depth-first from the roots, with each branch's depth for indentation. */
export function branchTree<T extends { name: string; parent: string | null }>(
  branches: readonly T[],
): { branch: T; depth: number }[] {
  const names = new Set(branches.map((b) => b.name));
  const children = new Map<string | null, T[]>();
  for (const b of branches) {
    const p = b.parent !== null && names.has(b.parent) ? b.parent : null;
    children.set(p, [...(children.get(p) ?? []), b]);
  }
  const out: { branch: T; depth: number }[] = [];
  const seen = new Set<string>();
  const visit = (parent: string | null, depth: number) => {
    for (const b of (children.get(parent) ?? []).sort((x, y) => x.name.localeCompare(y.name))) {
      if (seen.has(b.name)) continue;
      seen.add(b.name);
      out.push({ branch: b, depth });
      visit(b.name, depth + 1);
    }
  };
  visit(null, 0);
  return out;
}
