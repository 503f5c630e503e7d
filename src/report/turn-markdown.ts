/**
 * The TDD lane on a pull request, as markdown: one review comment per agent turn, the comment that
 * opens a gate, and the run's turn table for the job summary. Everything an agent wrote (its
 * summary, its transcript) is shown as quoted or fenced text, where neither markdown, HTML nor a
 * `/consort` command line has any effect.
 */
import type { TurnRecord } from '../conductor/state.js';
import { formatDuration } from '../core/duration.js';
import { fenced, mdCode, mdText, stripControl } from './escape.js';

export const TURN_MARKER = (id: string) => `<!-- consort:turn ${id} -->`;
export const GATE_MARKER = (gate: string, hash: string) => `<!-- consort:gate ${gate} ${hash} -->`;
/** GitHub refuses bodies over 65,536 characters; the transcript gets what is left. */
const MAX_BODY = 60_000;
const MAX_TRANSCRIPT = 12_000;

const VERDICT_ICON: Record<string, string> = {
  accepted: '✅',
  rejected: '❌',
  refused: '⛔',
  incomplete: '⚠️',
  failed: '💥',
};

export const usd = (cost: number | undefined): string => (cost === undefined ? '—' : `$${cost.toFixed(4)}`);

/** Free text as a block quote, each line escaped so it renders as the words it is (no `/consort` line either). */
function quoted(text: string): string {
  return stripControl(text)
    .trim()
    .split('\n')
    .slice(0, 20)
    .map((l) => `> ${mdText(l).replace(/^\//, '\\/')}`)
    .join('\n');
}

/** A path an agent chose, as code, linked at the commit when there is one. */
function pathLink(file: string, repoUrl: string | undefined, commit: string | null): string {
  return repoUrl && commit
    ? `[${mdCode(file)}](${repoUrl}/blob/${commit}/${file.split('/').map(encodeURIComponent).join('/')})`
    : mdCode(file);
}

function tail(text: string, max: number): { text: string; clipped: boolean } {
  if (text.length <= max) return { text, clipped: false };
  const cut = text.slice(text.length - max);
  return { text: cut.slice(cut.indexOf('\n') + 1), clipped: true };
}

/** The counts in a suite summary ("12 passed, 1 failed, 0 errored, 2 skipped", as summarizeSuite writes it). */
export function suiteCounts(summary: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const m of summary.matchAll(/(\d+)\s+(passed|failed|skipped|errors?|errored|todo|tests?)\b/gi))
    counts[m[2]!.toLowerCase()] = Number(m[1]);
  return counts;
}

export interface TurnView {
  turn: TurnRecord;
  /** The commit holding the turn's change, or null (refused and reverted, or nothing changed). */
  commit: string | null;
  /** The turn's transcript (already redacted). */
  transcript: string | null;
  /** Where the run is, for the link back. */
  runUrl?: string;
  /** https://github.com/owner/repo, for file and commit links. */
  repoUrl?: string;
}

export function renderTurnReview(v: TurnView): string {
  const t = v.turn;
  const what = `${t.step}${t.item ? ` ${t.item}` : ''}`;
  const lines = [
    TURN_MARKER(t.id),
    `### ${VERDICT_ICON[t.verdict] ?? '•'} \`${t.role}\` · ${what} · ${t.feature} — ${t.verdict}`,
    '',
  ];
  if (t.verdict !== 'accepted' && t.reason)
    lines.push(`**Why:** ${mdText(t.reason.split('\n')[0]!.slice(0, 600))}`, '');
  const files =
    t.filesChanged.length === 0
      ? 'none'
      : t.filesChanged
          .slice(0, 15)
          .map((f) => pathLink(f, v.repoUrl, v.commit))
          .join(', ') + (t.filesChanged.length > 15 ? `, and ${t.filesChanged.length - 15} more` : '');
  const commit = v.commit
    ? v.repoUrl
      ? `[\`${v.commit.slice(0, 7)}\`](${v.repoUrl}/commit/${v.commit})`
      : `\`${v.commit.slice(0, 7)}\``
    : t.verdict === 'accepted'
      ? 'none (nothing changed)'
      : 'none (reverted)';
  lines.push(
    '| | |',
    '| --- | --- |',
    `| Role | \`${t.role}\` (${t.backend}${t.model ? `, ${t.model}` : ''}) |`,
    `| Step | ${what}${t.attempt ? ` (attempt ${t.attempt + 1})` : ''} |`,
    `| Verdict | ${t.verdict}${t.refused?.length ? `: outside its scope: ${t.refused.slice(0, 5).map(mdCode).join(', ')}` : ''} |`,
    `| Files changed | ${files} |`,
    `| Commit | ${commit} |`,
    `| Database branch | ${t.branch ? `\`${t.branch}\`` : '—'} |`,
    `| Duration | ${formatDuration(t.durationMs)} |`,
    `| Tokens | ${t.usage.inputTokens.toLocaleString('en-US')} in / ${t.usage.outputTokens.toLocaleString('en-US')} out |`,
    `| Cost | ${usd(t.usage.costUsd)} |`,
    '',
  );
  if (t.suite) {
    const c = suiteCounts(t.suite);
    lines.push(
      "**Suite** (the conductor's own run on a fresh branch):",
      '',
      '| passed | failed | errored | skipped | result |',
      '| ---: | ---: | ---: | ---: | --- |',
      `| ${c.passed ?? '—'} | ${c.failed ?? 0} | ${c.errored ?? 0} | ${c.skipped ?? 0} | ${mdText(t.suite.split('\n')[0]!.slice(0, 300))} |`,
      '',
    );
  }
  if (t.summary) lines.push('**What the agent says it did:**', '', quoted(t.summary.slice(0, 2000)), '');
  const head = lines.join('\n');
  const room = Math.min(MAX_TRANSCRIPT, MAX_BODY - head.length - 200);
  if (v.transcript && room > 500) {
    const excerpt = tail(v.transcript, room);
    const total = v.transcript.split('\n').length;
    lines.push(
      '<details><summary>Transcript' +
        (excerpt.clipped
          ? ` (the last ${excerpt.text.split('\n').length} of ${total} lines; the whole of it is in \`.consort/features/${t.feature}/transcripts/${t.id}.txt\`)`
          : '') +
        '</summary>',
      '',
      fenced(excerpt.text, 'text'),
      '',
      '</details>',
      '',
    );
  }
  if (v.runUrl) lines.push(`<sub>Consort conductor · [workflow run](${v.runUrl}) · ${t.id}</sub>`);
  return lines.join('\n');
}

export interface GateView {
  gate: string;
  feature: string;
  hash: string;
  problems: readonly string[];
  /** Lines the feature added that the person approving reads first; they do not stop an approval. */
  flags?: readonly string[];
  /** Files a reviewer should read before approving (relative to the repository). */
  artifacts: readonly string[];
  repoUrl?: string;
  head: string;
}

/** Flagged lines: no problem of the artifacts, so the gate can still be approved, by a person who read them. */
function flaggedLines(flags: readonly string[]): string[] {
  if (flags.length === 0) return [];
  return [
    `**Read first:** ${flags.length === 1 ? 'a line' : `${flags.length} lines`} the feature added ${flags.length === 1 ? 'looks' : 'look'} like code that behaves differently under test or reaches into the test framework (proxy mode does not pass a flagged gate; a person may, having read ${flags.length === 1 ? 'it' : 'them'}):`,
    '',
    ...flags.slice(0, 10).map((f) => `- ${mdText(f)}`),
    ...(flags.length > 10 ? [`- … and ${flags.length - 10} more`] : []),
    '',
  ];
}

export function renderGateComment(g: GateView): string {
  const lines = [GATE_MARKER(g.gate, g.hash), `### ⏸ Gate \`${g.gate}\` for ${g.feature} — waiting for a human`, ''];
  if (g.problems.length > 0) {
    lines.push(
      'The artifacts this gate covers are not valid yet, so it cannot be approved:',
      '',
      ...g.problems.slice(0, 10).map((p) => `- ${mdText(p)}`),
      '',
    );
  } else {
    lines.push(
      'The conductor stopped here. Read what this gate covers, then approve it to let the lane continue:',
      '',
      ...g.artifacts.map((f) => `- ${pathLink(f, g.repoUrl, g.head)}`),
      '',
      ...flaggedLines(g.flags ?? []),
      'To approve, comment (people with write access only):',
      '',
      '```',
      `/consort approve ${g.gate}`,
      '```',
      '',
      `The approval is recorded for exactly these artifacts (\`${g.hash.slice(0, 19)}…\`) and the head commit it is given on; if they change, the gate opens again.`,
    );
  }
  return lines.join('\n');
}

export interface RunView {
  feature: string;
  stop: string;
  message: string;
  turns: readonly TurnRecord[];
  /** The command that continues from here, when one does. */
  next: string | null;
}

export function renderRunSummary(r: RunView): string {
  const lines = [`## Consort TDD lane: ${r.feature}`, '', `**Stopped:** ${r.stop} — ${r.message}`, ''];
  if (r.turns.length === 0) lines.push('No agent turn ran in this run.', '');
  else {
    lines.push(
      '| # | role | step | verdict | duration | tokens in | tokens out | cost |',
      '| --- | --- | --- | --- | ---: | ---: | ---: | ---: |',
    );
    for (const t of r.turns) {
      lines.push(
        `| ${t.id} | ${t.role} | ${t.step}${t.item ? ` ${t.item}` : ''} | ${t.verdict} | ${formatDuration(t.durationMs)} | ${t.usage.inputTokens} | ${t.usage.outputTokens} | ${usd(t.usage.costUsd)} |`,
      );
    }
    const sum = (f: (t: TurnRecord) => number) => r.turns.reduce((n, t) => n + f(t), 0);
    const costs = r.turns.filter((t) => t.usage.costUsd !== undefined);
    lines.push(
      `| **total** | | | ${r.turns.filter((t) => t.verdict === 'accepted').length} of ${r.turns.length} accepted | ${formatDuration(sum((t) => t.durationMs))} | ${sum((t) => t.usage.inputTokens)} | ${sum((t) => t.usage.outputTokens)} | ${costs.length ? usd(costs.reduce((n, t) => n + (t.usage.costUsd ?? 0), 0)) : '—'}${costs.length < r.turns.length && costs.length ? ' (some backends report no cost)' : ''} |`,
      '',
    );
  }
  if (r.next) lines.push(`**Next:** ${r.next}`, '');
  return lines.join('\n');
}
