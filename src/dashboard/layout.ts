/** The page frame every view shares: navigation, styles, the live-update script and pagination. */
import { html, type Html, withQuery } from './html.js';

export interface PageFrame {
  title: string;
  /** Where this repository's pages live (`` locally, `/dashboard/<owner>/<repo>` in the App). */
  base: string;
  /** Where the static script lives. */
  assets: string;
  repo: string;
  active: 'features' | 'checks' | 'branches';
  /** Which changes refresh this page: a feature name, `*` for any, or null for none. */
  live: string | null;
  /** Signed-in person (App host), shown with a sign-out button (a form POST with the session's CSRF token). */
  user?: { login: string; signOut: string; csrf: string } | null;
  /** A link back to the repository list (App host). */
  home?: string;
}

const STYLE = `
:root{font-family:system-ui,sans-serif;color:#111;background:#fff}
body{margin:0}header{display:flex;gap:1.5rem;align-items:center;padding:.6rem 1rem;background:#f3f3f3;border-bottom:1px solid #ccc}
header nav a{margin-right:1rem}header nav a[aria-current=page]{font-weight:bold;text-decoration:underline 3px}
main{padding:1rem;max-width:1200px}table{border-collapse:collapse;margin:.5rem 0 1rem;font-size:.9rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}th{background:#f7f7f7}
td.num{text-align:right;font-variant-numeric:tabular-nums}pre{background:#f7f7f7;border:1px solid #ddd;padding:.5rem;overflow:auto;max-height:40rem;white-space:pre-wrap;word-break:break-word}
.badge{display:inline-block;padding:0 .4rem;border:1px solid #333;border-radius:3px;font-size:.8rem}
.badge.pending{background:#fff3bf;border-style:dashed}.badge.approved{background:#d3f9d8}.badge.stale{background:#ffe3e3;border-style:dotted}
.verdict-refused,.verdict-failed,.verdict-rejected,.verdict-incomplete{background:#fff0f0}
.charts{display:flex;flex-wrap:wrap;gap:1rem}.empty{color:#555;font-style:italic}
form.sign-out{margin:0}form.sign-out button{font:inherit}
.pager a,.pager span{margin-right:.6rem}#live{font-size:.8rem;color:#555;margin-left:auto}
form.approve{border:2px solid #333;padding:.6rem;margin:.5rem 0;max-width:40rem}form.approve label{display:block;margin:.3rem 0}
`;

export function signOutForm(user: NonNullable<PageFrame['user']>): Html {
  return html`<form class="sign-out" method="post" action="${user.signOut}">${user.login} · <input type="hidden" name="csrf" value="${user.csrf}"><button type="submit">sign out</button></form>`;
}

export function layout(frame: PageFrame, body: Html): Html {
  const link = (name: PageFrame['active'], path: string, text: string) =>
    html`<a href="${frame.base}${path}"${name === frame.active ? html` aria-current="page"` : ''}>${text}</a>`;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${frame.title} · ${frame.repo} · Consort</title><style>${STYLE}</style>
<script src="${frame.assets}/dashboard.js" defer></script></head>
<body data-live="${frame.live ?? ''}" data-events="${frame.base}/events">
<header>${frame.home ? html`<a href="${frame.home}">Repositories</a>` : ''}<strong>${frame.repo}</strong>
<nav>${link('features', '/', 'Features')}${link('checks', '/checks', 'Checks')}${link('branches', '/branches', 'Branches')}</nav>
${frame.user ? signOutForm(frame.user) : ''}
<span id="live" aria-live="polite"></span></header>
<main id="main">${body}</main></body></html>`;
}

/** A page outside any repository (the App's sign-in and repository list): the same styles, no navigation, no script. */
export function plainLayout(frame: { title: string; user?: PageFrame['user'] }, body: Html): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${frame.title} · Consort</title><style>${STYLE}</style></head>
<body><header><strong>Consort</strong>${frame.user ? signOutForm(frame.user) : ''}</header>
<main id="main">${body}</main></body></html>`;
}

export function pager(
  url: string,
  page: number,
  pages: number,
  query: Record<string, string | number | undefined> = {},
): Html {
  if (pages <= 1) return html``;
  const at = (p: number, text: string) => html`<a href="${withQuery(url, { ...query, page: p })}">${text}</a>`;
  return html`<nav class="pager" aria-label="pages">${page > 1 ? at(page - 1, '← newer') : ''}<span>page ${page} of ${pages}</span>${page < pages ? at(page + 1, 'older →') : ''}</nav>`;
}

/** The browser side: live refresh over server-sent events and a confirmation before approving. */
export const CLIENT_SCRIPT = `(() => {
  const body = document.body;
  const live = body.dataset.live;
  const status = document.getElementById('live');
  if (live && window.EventSource) {
    const source = new EventSource(body.dataset.events);
    let busy = false, again = false;
    const refresh = async () => {
      if (busy) { again = true; return; }
      busy = true;
      try {
        const res = await fetch(location.href, { headers: { accept: 'text/html' }, credentials: 'same-origin' });
        if (res.ok) {
          const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
          const next = doc.getElementById('main');
          const active = document.activeElement;
          const typing = active && (active.tagName === 'INPUT' || active.tagName === 'TEXTAREA');
          if (next && !typing) document.getElementById('main').replaceWith(next);
          body.dataset.updated = String(Date.now());
          if (status) status.textContent = 'updated ' + new Date().toLocaleTimeString();
        }
      } finally {
        busy = false;
        if (again) { again = false; refresh(); }
      }
    };
    source.addEventListener('change', (e) => {
      let change = {};
      try { change = JSON.parse(e.data); } catch {}
      if (live === '*' || !change.feature || change.feature === live) refresh();
    });
    source.addEventListener('open', () => { if (status) status.textContent = 'live'; });
  }
  document.addEventListener('submit', (e) => {
    const form = e.target;
    if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) e.preventDefault();
  });
})();
`;
