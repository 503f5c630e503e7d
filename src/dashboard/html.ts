/**
 * HTML that is safe by construction: the `html` tag escapes every interpolated value unless it is
 * already `Html` (made by this module), so agent-written text — summaries, reasons, transcripts,
 * file names — can only ever appear as text. Links take only same-site paths built here.
 */

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(value);
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0]!;
  values.forEach((v, i) => {
    out += render(v) + strings[i + 1]!;
  });
  return new Html(out);
}

/** Markup produced by a trusted renderer (the charting library's SVG of our own data). */
export function trusted(markup: string): Html {
  return new Html(markup);
}

/** A path on this dashboard, with each segment percent-encoded (a feature or turn id can never become a scheme or a query). */
export function href(base: string, ...segments: (string | number)[]): string {
  return `${base}${segments.map((s) => `/${encodeURIComponent(String(s))}`).join('')}`;
}

export function withQuery(url: string, query: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s === '' ? url : `${url}?${s}`;
}

export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
  return `${Math.floor(ms / 3_600_000)} h ${Math.round((ms % 3_600_000) / 60_000)} min`;
}

export function formatUsd(n: number): string {
  return `$${n.toFixed(n >= 100 ? 0 : n >= 1 ? 2 : 4)}`;
}

export function formatCount(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e4 ? `${Math.round(n / 1e3)}k` : String(n);
}
