/**
 * GitHub's REST API for issue comments, played by a local HTTP server: list (one page), create,
 * update, with the response bodies GitHub documents. It records every request; any other route
 * is answered 404 and recorded as unexpected, so a test can assert nothing else was called.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  userAgent: string | undefined;
  body: unknown;
}

export interface StoredComment {
  id: number;
  issue: number;
  body: string;
  user: { login: string; id: number; type: 'Bot' | 'User' };
  created_at: string;
  updated_at: string;
}

export interface FakeGitHub {
  url: string;
  requests: RecordedRequest[];
  unexpected: string[];
  comments: StoredComment[];
  /** Answer comment creation with 403, as GitHub does for a token without write access. */
  forbidCreate: boolean;
  seed(comment: Omit<StoredComment, 'id' | 'created_at' | 'updated_at'>): StoredComment;
  close(): Promise<void>;
}

export const ACTIONS_BOT = { login: 'github-actions[bot]', id: 41898282, type: 'Bot' as const };

export async function startFakeGitHub(owner: string, repo: string): Promise<FakeGitHub> {
  let nextId = 1_900_000_000;
  let clock = Date.parse('2025-05-04T10:00:00Z');
  const now = () => new Date((clock += 1000)).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const state: FakeGitHub = {
    url: '', requests: [], unexpected: [], comments: [], forbidCreate: false,
    close: () => new Promise((resolve) => server.close(() => resolve())),
    seed: (c) => {
      const stored = { ...c, id: nextId++, created_at: now(), updated_at: now() };
      state.comments.push(stored);
      return stored;
    },
  };
  let base = '';
  const api = `/repos/${owner}/${repo}`;
  const render = (c: StoredComment) => ({
    url: `${base}${api}/issues/comments/${c.id}`,
    html_url: `https://github.com/${owner}/${repo}/pull/${c.issue}#issuecomment-${c.id}`,
    issue_url: `${base}${api}/issues/${c.issue}`,
    id: c.id,
    node_id: `IC_kwDOM_${c.id}`,
    user: {
      login: c.user.login, id: c.user.id, node_id: `MDM6Qm90${c.user.id}`, avatar_url: `https://avatars.githubusercontent.com/u/${c.user.id}?v=4`,
      gravatar_id: '', url: `https://api.github.com/users/${encodeURIComponent(c.user.login)}`, html_url: `https://github.com/${c.user.login}`,
      type: c.user.type, site_admin: false,
    },
    created_at: c.created_at,
    updated_at: c.updated_at,
    author_association: c.user.type === 'Bot' ? 'NONE' : 'MEMBER',
    body: c.body,
    reactions: { url: `${base}${api}/issues/comments/${c.id}/reactions`, total_count: 0, '+1': 0, '-1': 0, laugh: 0, hooray: 0, confused: 0, heart: 0, rocket: 0, eyes: 0 },
    performed_via_github_app: null,
  });

  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const body: unknown = text ? JSON.parse(text) : undefined;
      state.requests.push({ method: req.method ?? '', path: url.pathname + url.search, authorization: req.headers.authorization, userAgent: req.headers['user-agent'], body });
      const send = (status: number, payload: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'x-github-api-version-selected': '2022-11-28' });
        res.end(JSON.stringify(payload));
      };
      const list = new RegExp(`^${api}/issues/(\\d+)/comments$`).exec(url.pathname);
      const one = new RegExp(`^${api}/issues/comments/(\\d+)$`).exec(url.pathname);
      const text_ = (body as { body?: unknown } | undefined)?.body;
      if (list && req.method === 'GET') {
        return send(200, state.comments.filter((c) => c.issue === Number(list[1])).map(render));
      }
      if (list && req.method === 'POST' && typeof text_ === 'string') {
        if (state.forbidCreate) {
          return send(403, { message: 'Resource not accessible by integration', documentation_url: 'https://docs.github.com/rest/issues/comments#create-an-issue-comment', status: '403' });
        }
        return send(201, render(state.seed({ issue: Number(list[1]), body: text_, user: ACTIONS_BOT })));
      }
      const existing = one && state.comments.find((c) => c.id === Number(one[1]));
      if (existing && req.method === 'PATCH' && typeof text_ === 'string') {
        existing.body = text_;
        existing.updated_at = now();
        return send(200, render(existing));
      }
      state.unexpected.push(`${req.method} ${url.pathname}${url.search}`);
      return send(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.url = base;
  return state;
}
