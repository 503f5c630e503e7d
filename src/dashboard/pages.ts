/**
 * The views, server-rendered from the data contract. Every value an agent or a pull request wrote
 * passes through the escaping `html` tag; charts are SVG drawn by charts.ts from our own models.
 */
import type { CycleRecord } from '../conductor/effects.js';
import type { LogEvent } from '../conductor/events.js';
import type { TurnRecord } from '../conductor/state.js';
import { checkTrendSvg, costPerFeatureSvg, sharesSvg, timelineSvg, turnsPerItemSvg } from './charts.js';
import { formatCount, formatMs, formatUsd, href, html, type Html, trusted } from './html.js';
import { pager } from './layout.js';
import type { BranchView, CheckRunView, FeatureDetail, FeatureSummary, GateView, Page, TurnDetail } from './port.js';
import { STAGE_ORDER } from '../report/check-report.js';
import { pageCount, type FeatureFilter } from './records.js';
import {
  branchTree,
  checkTrend,
  costByRole,
  costPerFeature,
  timelineBars,
  timelineMarkers,
  turnsPerItem,
  VERDICT_SYMBOL,
} from './views.js';

const STATES = ['all', 'open', 'waiting', 'done'];

const verdict = (v: string) => html`<span class="verdict-${v}">${VERDICT_SYMBOL[v] ?? '?'} ${v}</span>`;
const time = (iso: string | null) =>
  iso ? html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>` : '–';

export function featuresPage(
  base: string,
  rows: readonly FeatureSummary[],
  all: readonly FeatureSummary[],
  filter: FeatureFilter,
): Html {
  return html`<h1>Features</h1>
<form method="get" action="${base}/" class="filter"><label>name <input name="q" value="${filter.q ?? ''}"></label>
${all.some((r) => r.pr !== null) ? html`<label>PR <input name="pr" inputmode="numeric" size="5" value="${filter.pr ?? ''}"></label>` : ''}
<label>state <select name="state">${STATES.map((s) => html`<option${s === (filter.state ?? 'all') ? html` selected` : ''}>${s}</option>`)}</select></label>
<button>filter</button></form>
${
  rows.length === 0
    ? html`<p class="empty">${all.length ? 'No feature matches.' : 'No feature yet: start one with consort feature new <slug>.'}</p>`
    : html`
<table id="features"><thead><tr><th>feature</th><th>PR</th><th>where</th><th>item</th><th>waiting for you</th><th>turns</th><th>tokens in/out</th><th>cost</th><th>agent time</th><th>updated</th></tr></thead><tbody>
${rows.map(
  (
    r,
  ) => html`<tr><td><a href="${href(base, 'features', r.feature)}">${r.feature}</a></td><td>${r.pr ?? '–'}</td><td>${r.phase}: ${r.where}</td><td>${r.item ?? '–'}</td>
<td>${r.openGate ? html`<a href="${href(base, 'features', r.feature, 'gates')}">⏸ ${r.openGate} gate</a>` : r.escalation ? html`⚠ ${r.step}` : '–'}</td>
<td class="num">${r.turns}</td><td class="num">${formatCount(r.inputTokens)} / ${formatCount(r.outputTokens)}</td><td class="num">${formatUsd(r.costUsd)}</td><td class="num">${formatMs(r.agentMs)}</td><td>${time(r.updatedAt)}</td></tr>`,
)}
</tbody></table>`
}
<section class="charts">${trusted(costPerFeatureSvg(costPerFeature(all)))}</section>`;
}

function gateBadge(g: GateView): Html {
  const word = {
    pending: '⏸ pending',
    approved: '✓ approved',
    stale: '↺ stale (changed since approval)',
    'not-reached': '· not reached',
  }[g.status];
  return html`<span class="badge ${g.status}">${word}</span>`;
}

function cyclesTable(cycles: readonly CycleRecord[]): Html {
  if (cycles.length === 0) return html`<p class="empty">No cycle yet.</p>`;
  const stamp = (s: CycleRecord['red']) => (s ? html`${s.verdict}<br><small>${time(s.at)}</small>` : '–');
  return html`<table id="cycles"><thead><tr><th>cycle</th><th>item</th><th>RED</th><th>GREEN</th><th>REFACTOR</th><th>review</th><th>rejections</th><th>repairs</th><th>agent / suite / conductor</th></tr></thead><tbody>
${cycles.map(
  (
    c,
  ) => html`<tr><td>${c.cycle}</td><td>${c.item} (${c.ac})</td><td>${stamp(c.red)}</td><td>${stamp(c.green)}</td><td>${stamp(c.refactor)}</td><td>${c.review?.verdict ?? '–'}</td>
<td>${c.rejections.length ? html`<ul>${c.rejections.map((r) => html`<li>${r.step}: ${r.verdict} — ${r.reason}</li>`)}</ul>` : '0'}</td><td class="num">${c.repairs}</td>
<td class="num">${formatMs(c.timing.agentMs)} / ${formatMs(c.timing.suiteMs)} / ${formatMs(c.timing.overheadMs)}</td></tr>`,
)}</tbody></table>`;
}

export function turnsTable(base: string, feature: string, turns: readonly TurnRecord[]): Html {
  return html`<table id="turns"><thead><tr><th>turn</th><th>role</th><th>step</th><th>item</th><th>verdict</th><th>why</th><th>started</th><th>duration</th><th>tokens in/out</th><th>cost</th><th>database branch</th></tr></thead><tbody>
${turns.map(
  (
    t,
  ) => html`<tr class="verdict-${t.verdict}"><td><a href="${href(base, 'features', feature, 'turns', t.id)}">${t.id}</a></td><td>${t.role}</td><td>${t.step}</td><td>${t.item ?? '–'}</td><td>${verdict(t.verdict)}</td>
<td>${t.reason ? t.reason.slice(0, 300) : ''}</td><td>${time(t.startedAt)}</td><td class="num">${formatMs(t.durationMs)}</td><td class="num">${formatCount(t.usage.inputTokens)} / ${formatCount(t.usage.outputTokens)}</td>
<td class="num">${t.usage.costUsd === undefined ? '–' : formatUsd(t.usage.costUsd)}</td><td>${t.branch ?? '–'}</td></tr>`,
)}</tbody></table>`;
}

export function featurePage(
  base: string,
  detail: FeatureDetail,
  page: Page<TurnRecord>,
  all: readonly TurnRecord[],
): Html {
  const s = detail.summary;
  const bars = timelineBars(page.items);
  const from = bars[0]?.start ?? new Date(0);
  const to = bars.reduce((m, b) => (b.end > m ? b.end : m), from);
  const url = href(base, 'features', s.feature);
  return html`<h1>${s.feature}</h1>
<dl class="summary"><dt>where</dt><dd id="where">${s.phase}: ${s.where}</dd>
${s.escalation ? html`<dt>needs a person</dt><dd>⚠ ${s.escalation.reason}</dd>` : ''}
<dt>turns</dt><dd>${s.turns} · tokens ${formatCount(s.inputTokens)} in / ${formatCount(s.outputTokens)} out · ${formatUsd(s.costUsd)} · agent time ${formatMs(s.agentMs)}</dd>
<dt>items</dt><dd>${s.items.length ? s.items.map((i) => html`<span class="badge">${i.id} ${i.status}</span> `) : '–'}</dd>
<dt>gates</dt><dd><a href="${url}/gates">${detail.gates.map((g) => html`${g.gate} ${gateBadge(g)} `)}</a></dd></dl>
<h2>Timeline</h2><p>Bars are turns (✓ accepted, ✗ refused, ! failed, … incomplete, ⊘ rejected by the proof); thin dashed lines are RED/GREEN/REFACTOR, thick dashed lines gates.${page.total > page.pageSize ? ` Turns ${(page.page - 1) * page.pageSize + 1}–${(page.page - 1) * page.pageSize + page.items.length} of ${page.total}.` : ''}</p>
<figure id="timeline">${trusted(timelineSvg(bars, timelineMarkers(detail.cycles, detail.events, from, to)))}</figure>
<h2>Turns</h2>${pager(url, page.page, pageCount(page))}${turnsTable(base, s.feature, page.items)}${pager(url, page.page, pageCount(page))}
<h2>Cycles${page.total > page.pageSize ? ' of the items on this page' : ''}</h2>${cyclesTable(page.total > page.pageSize ? detail.cycles.filter((c) => page.items.some((t) => t.item === c.item)) : detail.cycles)}
<h2>Cost and effort</h2><section class="charts">${trusted(sharesSvg(costByRole(all), 'Cost per role'))}${trusted(turnsPerItemSvg(turnsPerItem(all)))}</section>`;
}

export function turnPage(base: string, feature: string, d: TurnDetail): Html {
  const t = d.record;
  return html`<h1>${t.id} · ${t.role} · ${t.step}${t.item ? ` ${t.item}` : ''}</h1>
<p><a href="${href(base, 'features', feature)}">← ${feature}</a></p>
<dl><dt>verdict</dt><dd id="verdict">${verdict(t.verdict)}${t.reason ? html` — <span id="reason">${t.reason}</span>` : ''}</dd>
<dt>scope</dt><dd>${t.refused?.length ? html`refused: ${t.refused.map((p) => html`<code>${p}</code> `)}` : 'every change inside the role\u2019s write scope'}</dd>
<dt>attempt</dt><dd>${t.attempt + 1}</dd><dt>backend / model</dt><dd>${t.backend} / ${t.model ?? '–'}</dd>
<dt>started</dt><dd>${time(t.startedAt)} · ${formatMs(t.durationMs)}</dd>
<dt>tokens</dt><dd>${t.usage.inputTokens} in / ${t.usage.outputTokens} out · ${t.usage.costUsd === undefined ? 'cost not reported' : formatUsd(t.usage.costUsd)}</dd>
<dt>database branch</dt><dd>${t.branch ?? '–'}</dd><dt>context pack</dt><dd>${t.context.bytes} bytes · ${t.context.sha256.slice(0, 12)}</dd></dl>
<h2>Files changed (${d.diffStat.length})</h2>${d.diffStat.length ? html`<table id="files"><thead><tr><th>file</th><th>+</th><th>−</th></tr></thead><tbody>${d.diffStat.map((f) => html`<tr><td><code>${f.path}</code></td><td class="num">${f.added ?? '–'}</td><td class="num">${f.removed ?? '–'}</td></tr>`)}</tbody></table>` : html`<p class="empty">none</p>`}
<h2>The proof</h2>${t.suite ? html`<pre id="suite">${t.suite}</pre>` : html`<p class="empty">no suite run for this turn</p>`}
<h2>What the agent says it did</h2>${t.summary ? html`<pre id="summary">${t.summary}</pre>` : html`<p class="empty">no summary</p>`}
<h2>Transcript${d.transcript?.clipped ? ` (the last part of ${d.transcript.lines} lines)` : ''}</h2>${d.transcript ? html`<pre id="transcript">${d.transcript.text}</pre>` : html`<p class="empty">no transcript</p>`}`;
}

export function gatesPage(
  base: string,
  detail: FeatureDetail,
  options: {
    csrf: string;
    approver: string | null;
    canApprove: boolean;
    cannotApprove?: string;
    editableApprover: boolean;
    message?: string;
  },
): Html {
  const f = detail.summary.feature;
  const fileLink = (file: string) =>
    file === 'git:tree'
      ? html`<code>git:tree</code> (the committed code)`
      : html`<a href="${href(base, 'features', f, 'files')}/${file.split('/').map(encodeURIComponent).join('/')}"><code>${file}</code></a>`;
  return html`<h1>Gates of ${f}</h1><p><a href="${href(base, 'features', f)}">← ${f}</a></p>
${options.message ? html`<p role="status" id="message">${options.message}</p>` : ''}
${detail.gates.map(
  (g) => html`<section class="gate" id="gate-${g.gate}"><h2>${g.gate} ${gateBadge(g)}</h2>
<dl>${g.hash ? html`<dt>artifacts now</dt><dd><code>${g.hash}</code></dd>` : ''}
${g.approval ? html`<dt>approved</dt><dd>by ${g.approval.approver}${g.approval.proxy ? ' (proxy)' : ''} at ${time(g.approval.at)} for <code>${g.approval.hash}</code>${g.approval.headSha ? html` on ${g.approval.headSha.slice(0, 12)}` : ''}</dd>` : ''}
${g.history.length > 1 ? html`<dt>earlier</dt><dd><ul>${g.history.slice(0, -1).map((h) => html`<li>${h.approver} at ${time(h.at)} for <code>${h.hash.slice(0, 19)}…</code></li>`)}</ul></dd>` : ''}
<dt>read before approving</dt><dd><ul>${g.files.map((file) => html`<li>${fileLink(file)}</li>`)}</ul></dd>
${g.problems.length ? html`<dt>cannot be approved</dt><dd><ul>${g.problems.map((p) => html`<li>${p}</li>`)}</ul></dd>` : ''}
${g.flags.length ? html`<dt>read first: flagged lines the feature added (code that behaves differently under test, or reaches into the test framework)</dt><dd><ul class="flags">${g.flags.map((f) => html`<li><code>${f}</code></li>`)}</ul></dd>` : ''}</dl>
${
  g.status === 'pending' && g.valid && options.canApprove
    ? html`<form class="approve" method="post" action="${href(base, 'features', f, 'gates', g.gate, 'approve')}"
 data-confirm="${`Approve the ${g.gate} gate of ${f}? This binds your name to ${g.hash.slice(0, 19)}…`}">
<input type="hidden" name="csrf" value="${options.csrf}"><input type="hidden" name="hash" value="${g.hash}">
<label>approve as ${options.editableApprover ? html`<input name="approver" required maxlength="100" value="${options.approver ?? ''}">` : html`<strong>${options.approver ?? ''}</strong>`}</label>
<label><input type="checkbox" name="read" value="yes" required> I have read the files above</label>
<button type="submit">Approve the ${g.gate} gate</button></form>`
    : g.status === 'pending' && !options.canApprove
      ? html`<p class="empty" id="cannot-approve">${options.cannotApprove ?? 'You cannot approve this gate here (approving needs write access to the repository).'}</p>`
      : ''
}
</section>`,
)}`;
}

export function artifactPage(base: string, feature: string, file: string, text: string): Html {
  return html`<h1>${file}</h1><p><a href="${href(base, 'features', feature, 'gates')}">← gates of ${feature}</a></p><pre id="artifact">${text}</pre>`;
}

/** The pipeline's order (a report read back from jsonb has its keys in another). */
const stageRank = (name: string) => {
  const i = (STAGE_ORDER as readonly string[]).indexOf(name);
  return i < 0 ? STAGE_ORDER.length : i;
};

function stagesTable(report: {
  stages: Record<string, { status: string; durationMs: number; summary: string }>;
}): Html {
  return html`<table id="last-report"><thead><tr><th>stage</th><th>status</th><th>time</th><th>what happened</th></tr></thead><tbody>
${Object.entries(report.stages)
  .sort(([a], [b]) => stageRank(a) - stageRank(b))
  .map(
    ([name, s]) =>
      html`<tr><td>${name}</td><td>${s.status === 'passed' ? '✓' : s.status === 'skipped' ? '–' : '✗'} ${s.status}</td><td class="num">${formatMs(s.durationMs)}</td><td>${s.summary}</td></tr>`,
  )}</tbody></table>`;
}

export function checksPage(
  base: string,
  page: Page<CheckRunView>,
  trendRuns: readonly CheckRunView[],
  last: unknown,
): Html {
  const url = `${base}/checks`;
  const report = last as {
    conclusion?: string;
    stages?: Record<string, { status: string; durationMs: number; summary: string }>;
    stages_failures?: unknown;
    pr?: number | null;
  } | null;
  return html`<h1>Checks</h1>
<figure id="trend">${trusted(checkTrendSvg(checkTrend(trendRuns)))}</figure>
${
  page.total === 0
    ? html`<p class="empty">No check yet. Locally, record one with <code>consort check --json .consort/checks/$(date +%s).json</code>.</p>`
    : html`
<h2>History (${page.total})</h2>${pager(url, page.page, pageCount(page))}
<table id="checks"><thead><tr><th>started</th><th>PR</th><th>head</th><th>conclusion</th><th>total</th>${page.items[0]?.stages.map((s) => html`<th>${s.name}</th>`)}</tr></thead><tbody>
${page.items.map(
  (
    r,
  ) => html`<tr><td>${time(r.startedAt)}</td><td>${r.pr ?? '–'}</td><td><code>${r.headSha?.slice(0, 10) ?? '–'}</code></td><td>${r.conclusion === 'success' ? '✓' : '✗'} ${r.conclusion}</td><td class="num">${formatMs(r.durationMs)}</td>
${r.stages.map((s) => html`<td class="num" title="${s.summary}">${s.status === 'passed' ? '' : `${s.status} `}${formatMs(s.durationMs)}</td>`)}</tr>`,
)}</tbody></table>${pager(url, page.page, pageCount(page))}`
}
${report?.stages ? html`<h2>The last report: ${report.conclusion ?? ''}</h2>${stagesTable(report as { stages: Record<string, { status: string; durationMs: number; summary: string }> })}` : ''}`;
}

export function branchesPage(branches: readonly BranchView[], now = new Date()): Html {
  if (branches.length === 0)
    return html`<h1>Database branches</h1><p class="empty">No branch (or no provider opened for this dashboard).</p>`;
  const age = (iso: string) => formatMs(Math.max(0, now.getTime() - Date.parse(iso)));
  return html`<h1>Database branches</h1><table id="branches"><thead><tr><th>branch</th><th>parent</th><th>git branch</th><th>PR</th><th>age</th><th>expires</th><th>size</th><th>mode</th></tr></thead><tbody>
${branchTree(branches).map(
  ({
    branch: b,
    depth,
  }) => html`<tr><td style="padding-left:${0.5 + depth * 1.5}rem">${depth ? '└ ' : ''}${b.name}</td><td>${b.parent ?? '–'}</td><td>${b.gitBranch ?? '–'}</td><td>${b.pr ?? '–'}</td>
<td>${age(b.createdAt)}</td><td>${b.expiresAt ? time(b.expiresAt) : 'never'}</td><td class="num">${b.sizeBytes === null ? '–' : `${(b.sizeBytes / 1048576).toFixed(1)} MB`}</td><td>${b.mode ?? '–'}</td></tr>`,
)}</tbody></table>`;
}

export function eventsList(events: readonly LogEvent[]): Html {
  return html`<ol>${events.map((e) => html`<li>${time(e.at)} ${e.type}</li>`)}</ol>`;
}

export function errorPage(status: number, message: string): Html {
  return html`<h1>${status}</h1><p>${message}</p>`;
}
