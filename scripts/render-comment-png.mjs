#!/usr/bin/env node
/**
 * Render a sticky PR comment (the markdown `consort check --markdown` writes) to a PNG that looks
 * like it does on GitHub, for the README: a small converter for the markdown the report renderer
 * emits (headings, tables, fences, inline code, bold, <details>), then headless Chromium.
 *
 *   consort check --pr 42 --markdown comment.md
 *   node scripts/render-comment-png.mjs comment.md docs/img/pr-comment.png
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [input, output, width = '900'] = process.argv.slice(2);
if (!input || !output) {
  console.error('usage: node scripts/render-comment-png.mjs <comment.md> <out.png> [width]');
  process.exit(2);
}

const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
/** Inline markdown; the renderer's own HTML (<code>, <sub>, <details>) passes through. */
const inline = (s) =>
  s
    .replace(/\\([\\`*_{}[\]()#+\-.!|])/g, (_, c) => `&#${c.charCodeAt(0)};`)
    .replace(/`([^`]+)`/g, (_, c) => `<code>${esc(c)}</code>`)
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
const cells = (row) =>
  row
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());

function toHtml(md) {
  const lines = md.split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith('```')) {
      const body = [];
      while (++i < lines.length && !lines[i].startsWith('```')) body.push(lines[i]);
      out.push(`<pre><code>${esc(body.join('\n'))}</code></pre>`);
    } else if (/^#{1,6} /.test(line)) {
      const level = line.indexOf(' ');
      out.push(`<h${level}>${inline(line.slice(level + 1))}</h${level}>`);
    } else if (line.startsWith('|') && lines[i + 1]?.startsWith('| ---')) {
      const head = cells(line);
      const align = cells(lines[i + 1]).map((c) => (c.endsWith(':') ? ' style="text-align:right"' : ''));
      i++;
      const rows = [];
      while (lines[i + 1]?.startsWith('|')) rows.push(cells(lines[++i]));
      out.push(
        `<table><thead><tr>${head.map((h, k) => `<th${align[k]}>${inline(h)}</th>`).join('')}</tr></thead><tbody>${rows.map((r) => `<tr>${r.map((c, k) => `<td${align[k]}>${inline(c)}</td>`).join('')}</tr>`).join('')}</tbody></table>`,
      );
    } else if (line.trim() === '' || /^<\/?(details|summary)/.test(line)) {
      out.push(line.replace('<details>', '<details open>'));
    } else {
      out.push(`<p>${inline(line)}</p>`);
    }
  }
  return out.join('\n');
}

const css = `body{margin:0;background:#fff;font:14px/1.5 -apple-system,"Segoe UI","Noto Sans",Helvetica,Arial,sans-serif;color:#1f2328}
.box{margin:16px;border:1px solid #d1d9e0;border-radius:6px}
.hdr{background:#f6f8fa;border-bottom:1px solid #d1d9e0;padding:8px 16px;color:#59636e;border-radius:6px 6px 0 0}
.hdr b{color:#1f2328}.body{padding:4px 16px 12px}
h2{font-size:1.4em;border-bottom:1px solid #d1d9e0;padding-bottom:.3em;margin:16px 0 12px}h3{font-size:1.15em;margin:20px 0 8px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}th,td{border:1px solid #d1d9e0;padding:5px 11px;vertical-align:top}th{background:#f6f8fa;text-align:left}
tr:nth-child(2n) td{background:#f6f8fa}code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;background:#eff1f3;padding:.15em .35em;border-radius:5px}
pre{background:#f6f8fa;padding:12px;border-radius:6px;overflow:auto}pre code{background:none;padding:0}sub{color:#59636e}p{margin:8px 0}`;
const html = `<!doctype html><meta charset="utf-8"><style>${css}</style><div class="box"><div class="hdr"><b>github-actions</b> bot commented</div><div class="body">${toHtml(readFileSync(input, 'utf8'))}</div></div>`;

const dir = mkdtempSync(path.join(os.tmpdir(), 'consort-comment-'));
try {
  const page = path.join(dir, 'comment.html');
  const chromium = (args, stdio) =>
    execFileSync(
      'chromium',
      ['--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', ...args, `file://${page}`],
      { stdio, encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir } },
    );
  // First pass: the page reports its own height, so the PNG is cropped to the comment.
  writeFileSync(page, `${html}<script>document.body.dataset.h = document.documentElement.scrollHeight</script>`);
  const height = Number(
    /data-h="(\d+)"/.exec(chromium([`--window-size=${width},400`, '--dump-dom'], ['ignore', 'pipe', 'ignore']))?.[1] ??
      1200,
  );
  chromium(
    [`--window-size=${width},${height}`, `--screenshot=${path.resolve(output)}`],
    ['ignore', 'ignore', 'ignore'],
  );
  console.log(`${output}: ${width}×${height}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
