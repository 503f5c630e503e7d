/**
 * A feature's status as data: where it is, its gates, items, cycles and what its turns cost.
 * `consort status --json` prints exactly this (the dashboard reads the same records into its own
 * view: src/dashboard/records.ts).
 */
import { readFile } from 'node:fs/promises';
import type { GateName, Item, Phase, Step } from '../../conductor/state.js';
import { CycleRecord } from '../../conductor/effects.js';
import { TestList } from '../../conductor/artifacts.js';
import { describeStep } from './feature.js';
import { FeatureStore, listFeatures } from './store.js';
import { count } from '../../core/plural.js';
import type { Workspace } from '../../ports/workspace.js';
import { reopenedGates } from './gate-check.js';

export interface FeatureStatus {
  feature: string;
  phase: Phase;
  step: Step;
  /** One line, e.g. "green T2" or "waiting for approval of the spec gate". */
  where: string;
  gate: GateName | null;
  item: string | null;
  attempt: number;
  repair: number;
  escalation: { reason: string; step: Step; at: string } | null;
  items: Item[];
  /** `stale`: its artifacts changed since the approval, so the run reopens the gate (known when a workspace was given). */
  gates: Partial<Record<GateName, { approver: string; at: string; proxy: boolean; stale?: boolean } | null>>;
  cycles: {
    cycle: number;
    item: string;
    red: string | null;
    green: string | null;
    refactor: string | null;
    review: string | null;
    rejections: number;
    overheadMs: number;
  }[];
  turns: {
    count: number;
    byVerdict: Record<string, number>;
    inputTokens: number;
    outputTokens: number;
    costUsd: number;
    agentMs: number;
  };
}

/** `ws`: the checkout, to tell an approval whose artifacts changed since (stale) from one that still holds. */
export async function featureStatus(workspace: string, feature: string, ws?: Workspace): Promise<FeatureStatus> {
  const store = new FeatureStore(workspace, feature);
  const { state } = await store.load();
  const [gates, turns, cycleFiles, reopened] = await Promise.all([
    store.gates(),
    store.turns(),
    store.cycleFiles(),
    ws ? reopenedGates(ws, store, state.userFacing).then((g) => new Set<string>(g)) : null,
  ]);
  const cycles: FeatureStatus['cycles'] = [];
  for (const file of cycleFiles) {
    const parsed = CycleRecord.safeParse(JSON.parse(await readFile(store.file(file), 'utf8')));
    if (!parsed.success) continue;
    const c = parsed.data;
    cycles.push({
      cycle: c.cycle,
      item: c.item,
      red: c.red?.at ?? null,
      green: c.green?.at ?? null,
      refactor: c.refactor?.at ?? null,
      review: c.review?.verdict ?? null,
      rejections: c.rejections.length,
      overheadMs: c.timing.overheadMs,
    });
  }
  // Before the build starts (the spec gate, or a test_list gate), the items are the test list's,
  // not yet the state's: shown from test-list.json while it is valid, as the gate will take them.
  const items = state.items.length > 0 ? state.items : await testListItems(store);
  // The gate the feature waits at is listed even before anyone approved it ("spec not approved").
  const waitingAt =
    state.gate !== null && (state.step === 'awaiting-approval' || state.step === 'gate') ? state.gate : null;
  const byVerdict: Record<string, number> = {};
  for (const t of turns) byVerdict[t.verdict] = (byVerdict[t.verdict] ?? 0) + 1;
  return {
    feature,
    phase: state.phase,
    step: state.step,
    where: describeStep(state),
    gate: state.gate,
    item: state.current >= 0 ? (state.items[state.current]?.id ?? null) : null,
    attempt: state.attempt,
    repair: state.repair,
    escalation: state.escalation,
    items,
    gates: Object.fromEntries([
      ...(waitingAt !== null && gates.gates[waitingAt] === undefined ? [[waitingAt, null] as const] : []),
      ...Object.entries(gates.gates).map(([g, e]) => [
        g,
        e.approval
          ? {
              approver: e.approval.approver,
              at: e.approval.at,
              proxy: e.approval.proxy,
              ...(reopened ? { stale: reopened.has(g) } : {}),
            }
          : null,
      ]),
    ]),
    cycles,
    turns: {
      count: turns.length,
      byVerdict,
      inputTokens: turns.reduce((n, t) => n + t.usage.inputTokens, 0),
      outputTokens: turns.reduce((n, t) => n + t.usage.outputTokens, 0),
      costUsd: Math.round(turns.reduce((n, t) => n + (t.usage.costUsd ?? 0), 0) * 1e6) / 1e6,
      agentMs: turns.reduce((n, t) => n + t.durationMs, 0),
    },
  };
}

/** test-list.json's items, or none while it is missing or invalid. */
async function testListItems(store: FeatureStore): Promise<Item[]> {
  try {
    const parsed = TestList.safeParse(JSON.parse(await readFile(store.file('test-list.json'), 'utf8')));
    return parsed.success ? parsed.data.items : [];
  } catch {
    return [];
  }
}

export async function allStatuses(workspace: string, ws?: Workspace): Promise<FeatureStatus[]> {
  return Promise.all((await listFeatures(workspace)).map((f) => featureStatus(workspace, f, ws)));
}

export function renderStatus(s: FeatureStatus): string {
  const lines = [
    // An escalation's reason counts the attempts already ("after 2 attempts").
    `${s.feature} — ${s.phase}: ${s.where}${s.attempt && !s.escalation ? ` (attempt ${s.attempt + 1})` : ''}${s.repair ? ` (repair round ${s.repair})` : ''}`,
  ];
  const gates = Object.entries(s.gates).map(
    ([g, a]) =>
      `${g} ${a ? `approved by ${a.approver}${a.proxy ? ' (proxy)' : ''} at ${a.at}${a.stale ? ' — stale: its artifacts changed since, so the next run reopens it' : ''}` : 'not approved'}`,
  );
  if (gates.length) lines.push(`  gates:  ${gates.join('; ')}`);
  if (s.items.length) lines.push(`  items:  ${s.items.map((i) => `${i.id} ${i.status}`).join(', ')}`);
  for (const c of s.cycles) {
    lines.push(
      `  cycle ${c.cycle} ${c.item}: red ${c.red ? 'proven' : '-'}, green ${c.green ? 'proven' : '-'}, refactor ${c.refactor ? 'done' : '-'}, review ${c.review ?? '-'}${c.rejections ? `, ${count(c.rejections, 'rejection')}` : ''}, conductor ${c.overheadMs} ms`,
    );
  }
  const t = s.turns;
  const verdicts = Object.entries(t.byVerdict)
    .map(([v, n]) => `${n} ${v}`)
    .join(', ');
  lines.push(
    `  turns:  ${t.count}${verdicts ? ` (${verdicts})` : ''}; tokens in ${t.inputTokens}, out ${t.outputTokens}; cost $${t.costUsd.toFixed(4)}; agent time ${Math.round(t.agentMs / 1000)} s`,
  );
  if (s.escalation)
    lines.push(`  needs a human: ${s.escalation.reason.split('\n')[0]} (then: consort run ${s.feature} --retry)`);
  if (s.step === 'awaiting-approval' || s.step === 'gate')
    lines.push(`  next: consort approve ${s.feature} ${s.gate} --as <name>`);
  return lines.join('\n');
}
