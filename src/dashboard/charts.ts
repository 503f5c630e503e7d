/**
 * The pictures, drawn on the server as SVG by Observable Plot (a maintained charting library) over
 * a linkedom document, so a page needs no chart code in the browser. Plot writes text through the
 * DOM, so labels and tooltips built from agent-written text are escaped when serialized. Verdicts
 * are told apart by symbols and words as well as colour; every chart has a text title.
 */
import { createHash } from 'node:crypto';
import * as Plot from '@observablehq/plot';
import { parseHTML } from 'linkedom';
import type { Bar, Marker, Share } from './views.js';

const { document } = parseHTML('<!doctype html><html><body></body></html>');

// Drawing is the costly part of a page (tens of ms per chart): a chart of the same data is drawn once.
const drawn = new Map<string, string>();
const MAX_DRAWN = 200;

function memo<F extends (...args: never[]) => string>(kind: string, draw: F): F {
  return ((...args: Parameters<F>) => {
    const key = createHash('sha256').update(kind).update(JSON.stringify(args)).digest('base64');
    const hit = drawn.get(key);
    if (hit !== undefined) return hit;
    const out = draw(...args);
    if (drawn.size >= MAX_DRAWN) drawn.delete(drawn.keys().next().value!);
    drawn.set(key, out);
    return out;
  }) as F;
}

const VERDICT_DOMAIN = ['accepted', 'refused', 'failed', 'incomplete', 'rejected'];
// Colour-blind-safe (Okabe–Ito); the symbols in the bars carry the same information.
const VERDICT_RANGE = ['#009E73', '#D55E00', '#CC79A7', '#E69F00', '#0072B2'];

function svg(plot: { setAttribute(name: string, value: string): void; outerHTML: string }, title: string): string {
  plot.setAttribute('role', 'img');
  plot.setAttribute('aria-label', title);
  return plot.outerHTML;
}

function empty(title: string): string {
  return `<p class="empty">${title}: nothing to draw yet.</p>`;
}

export const timelineSvg = memo(
  'timelineSvg',
  function timelineSvg(bars: readonly Bar[], markers: readonly Marker[], width = 1000): string {
    const title = 'Timeline of turns by role';
    if (bars.length === 0) return empty(title);
    const roles = [...new Set(bars.map((b) => b.role))];
    const plot = Plot.plot({
      document,
      width,
      marginLeft: 130,
      marginTop: 30,
      height: 60 + roles.length * 34,
      x: { type: 'utc', label: 'time (UTC)', grid: true },
      y: { domain: roles, label: null },
      color: { domain: VERDICT_DOMAIN, range: VERDICT_RANGE, legend: true },
      marks: [
        Plot.ruleX(
          markers.filter((m) => m.kind === 'cycle'),
          { x: 'at', stroke: '#555', strokeDasharray: '2,3' },
        ),
        Plot.ruleX(
          markers.filter((m) => m.kind === 'gate'),
          { x: 'at', stroke: '#000', strokeWidth: 2, strokeDasharray: '6,3' },
        ),
        Plot.text(markers, {
          x: 'at',
          text: 'label',
          frameAnchor: 'top',
          dy: -20,
          rotate: 0,
          fontSize: 9,
          textAnchor: 'start',
        }),
        Plot.barX(bars, {
          x1: 'start',
          x2: 'end',
          y: 'role',
          fill: 'verdict',
          inset: 4,
          title: 'label',
          stroke: 'white',
          strokeWidth: 0.5,
        }),
        Plot.text(bars, {
          x: 'start',
          y: 'role',
          text: 'symbol',
          textAnchor: 'start',
          dx: 2,
          fontSize: 11,
          fontWeight: 'bold',
          fill: 'black',
        }),
      ],
    });
    return svg(plot, title);
  },
);

export const sharesSvg = memo(
  'sharesSvg',
  function sharesSvg(rows: readonly Share[], title: string, width = 520): string {
    if (rows.length === 0) return empty(title);
    const plot = Plot.plot({
      document,
      width,
      marginLeft: 150,
      marginRight: 90,
      height: 40 + rows.length * 26,
      x: { label: 'cost (USD)', grid: true },
      y: { label: null, domain: rows.map((r) => r.key) },
      marks: [
        Plot.barX(rows, {
          x: 'costUsd',
          y: 'key',
          fill: '#56B4E9',
          title: (d: Share) => `${d.key}: $${d.costUsd.toFixed(4)}, ${d.turns} turns`,
        }),
        Plot.text(rows, {
          x: 'costUsd',
          y: 'key',
          text: (d: Share) => `$${d.costUsd.toFixed(2)} · ${d.turns} turns`,
          textAnchor: 'start',
          dx: 4,
        }),
        Plot.ruleX([0]),
      ],
    });
    return svg(plot, title);
  },
);

export const turnsPerItemSvg = memo(
  'turnsPerItemSvg',
  function turnsPerItemSvg(rows: readonly { item: string; verdict: string; turns: number }[], width = 520): string {
    const title = 'Turns per test item, by verdict';
    if (rows.length === 0) return empty(title);
    const plot = Plot.plot({
      document,
      width,
      marginLeft: 60,
      height: 260,
      x: { label: 'test item', domain: [...new Set(rows.map((r) => r.item))] },
      y: { label: 'turns', grid: true },
      color: { domain: VERDICT_DOMAIN, range: VERDICT_RANGE, legend: true },
      marks: [
        Plot.barY(
          rows,
          Plot.stackY({
            x: 'item',
            y: 'turns',
            fill: 'verdict',
            title: (d: { item: string; verdict: string; turns: number }) => `${d.item}: ${d.turns} ${d.verdict}`,
          }),
        ),
        Plot.text(
          rows,
          Plot.stackY({
            x: 'item',
            y: 'turns',
            text: (d: { verdict: string; turns: number }) => `${d.turns}${d.verdict === 'accepted' ? '✓' : '✗'}`,
            fill: 'black',
          }),
        ),
        Plot.ruleY([0]),
      ],
    });
    return svg(plot, title);
  },
);

export function costPerFeatureSvg(
  rows: readonly { feature: string; costUsd: number; turns: number }[],
  width = 700,
): string {
  return sharesSvg(
    rows.map((r) => ({ key: r.feature, costUsd: r.costUsd, turns: r.turns, tokens: 0 })),
    'Cost per feature',
    width,
  );
}

export const checkTrendSvg = memo(
  'checkTrendSvg',
  function checkTrendSvg(
    points: readonly { at: Date; stage: string; seconds: number; conclusion: string }[],
    width = 1000,
  ): string {
    const title = 'Check duration trend (seconds)';
    if (points.length === 0) return empty(title);
    const plot = Plot.plot({
      document,
      width,
      height: 300,
      marginLeft: 60,
      marginRight: 90,
      x: { type: 'utc', label: 'check started (UTC)' },
      y: { label: 'seconds', grid: true },
      symbol: { domain: ['success', 'failure', 'error'], range: ['circle', 'times', 'triangle'], legend: true },
      color: { domain: ['total', 'migrations', 'suite'], range: ['#000000', '#E69F00', '#0072B2'], legend: true },
      marks: [
        ...(['total', 'migrations', 'suite'] as const).map((stage, i) =>
          Plot.lineY(
            points.filter((p) => p.stage === stage),
            { x: 'at', y: 'seconds', stroke: 'stage', strokeDasharray: ['', '2,2', '6,3'][i] },
          ),
        ),
        Plot.text(
          points,
          Plot.selectLast({ x: 'at', y: 'seconds', z: 'stage', text: 'stage', textAnchor: 'start', dx: 6 }),
        ),
        Plot.dot(
          points.filter((p) => p.stage === 'total'),
          {
            x: 'at',
            y: 'seconds',
            symbol: 'conclusion',
            stroke: 'black',
            r: 4,
            title: (d: { conclusion: string; seconds: number }) => `${d.conclusion}: ${d.seconds.toFixed(1)} s`,
          },
        ),
      ],
    });
    return svg(plot, title);
  },
);
