/**
 * GitHub's REST API, played by a local HTTP server, with the response bodies GitHub documents:
 * issue comments (list one page, create, update), a pull request, a collaborator's permission,
 * pull request reviews, commit statuses and comment reactions. It can also answer like GitHub
 * under load: a secondary rate limit on writes (`limitNext`), a 502 (`failNext`), or a 502 for a
 * write it carried out (`failAfterNext`: GitHub's frontend timing out on a request the API finished),
 * either also for the next request of one route only (`failOn`).
 * Lists are paged as GitHub pages them (`per_page`, default 30 and at most 100, `page`; comments
 * also `since`), and every answer has a `date` header on the stand-in's own clock, the clock of
 * the `created_at` it gives. It records
 * every request; any other route is answered 404 and recorded as unexpected, so a test can
 * assert nothing else was called. It also answers under GitHub Enterprise Server's `/api/v3`
 * prefix, can be unreachable (`down`: connections closed without an answer), and takes more
 * routes from other helpers (`routes`; the App's are in test/app/helpers/app-routes.ts).
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { escapeRegExp } from '../../src/core/regexp.js';
import { githubRepository, githubUser } from './github-shapes.js';

export interface RecordedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  userAgent: string | undefined;
  body: unknown;
  /** When the request arrived (Date.now()). */
  at: number;
  /** The answer's status and JSON body (absent while unanswered, or for a raw body). */
  status?: number;
  response?: unknown;
}

export interface StoredComment {
  id: number;
  issue: number;
  body: string;
  user: { login: string; id: number; type: 'Bot' | 'User' };
  created_at: string;
  updated_at: string;
}

export interface StoredPull {
  number: number;
  state: 'open' | 'closed';
  title: string;
  body: string | null;
  /** `repo` is the head repository's full name, null when that fork was deleted. */
  head: { ref: string; sha: string; repo: string | null };
  base: { ref: string; sha: string };
  /** The author's login (octocat when not given). */
  author?: string;
}

export type StoredPermission = 'admin' | 'maintain' | 'write' | 'triage' | 'read' | 'none';

export interface StoredReview {
  id: number;
  pr: number;
  commitId: string;
  body: string;
  event: string;
}

export interface StoredStatus {
  sha: string;
  state: string;
  context: string;
  description: string;
  targetUrl: string | null;
}

export interface StoredReaction {
  commentId: number;
  content: string;
}

export interface FakeGitHub {
  url: string;
  requests: RecordedRequest[];
  unexpected: string[];
  comments: StoredComment[];
  /** Answer comment creation with 403, as GitHub does for a token without write access. */
  forbidCreate: boolean;
  /**
   * People's tokens (`gho_…`, by token): a comment created with one is that person's, as GitHub
   * attributes a user-to-server token's comment; any other token's is the Actions bot's.
   */
  userTokens: Map<string, string>;
  pulls: Map<number, StoredPull>;
  /** A person's role on the repository, by login; a login not here is not a GitHub user (404). */
  permissions: Map<string, StoredPermission>;
  reviews: StoredReview[];
  statuses: StoredStatus[];
  reactions: StoredReaction[];
  /** While `count` > 0, every write (POST/PATCH) is answered with a secondary rate limit, and `count` goes down. */
  limitNext: { status: 403 | 429; retryAfter: number; count: number } | null;
  /** While > 0, the next request (any) is answered 502, and it goes down. */
  failNext: number;
  /** While > 0, the next write (POST/PATCH/PUT/DELETE) that succeeds is carried out but answered 502, and it goes down. */
  failAfterNext: number;
  /**
   * The next request whose `METHOD path` (path without the query) matches `request` is answered
   * 502: before anything is done, or (`acted`) after a write that succeeded was carried out. Once.
   */
  failOn: { request: RegExp; acted: boolean } | null;
  /** While true, every connection is closed without an answer (GitHub unreachable); requests are still recorded. */
  down: boolean;
  /** Teams' members by `org/team_slug` (GET /orgs/{org}/teams/{team_slug}/memberships/{username}: active; after `routes`). */
  teams: Map<string, string[]>;
  /** Files by `path@ref` (GET /repos/{owner}/{repo}/contents/{path}?ref=…; after `routes`); any other is 404. */
  files: Map<string, string>;
  /** More routes (tried before a request counts as unexpected): `path` without GHES's `/api/v3` prefix. */
  routes: ExtraRoute[];
  seed(comment: Omit<StoredComment, 'id' | 'created_at' | 'updated_at'>): StoredComment;
  setPull(pull: StoredPull): StoredPull;
  close(): Promise<void>;
}

export interface ExtraRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  body: unknown;
  authorization: string | undefined;
}
export interface ExtraReply {
  status: number;
  body?: unknown;
  raw?: Buffer;
  headers?: Record<string, string>;
}
export type ExtraRoute = (req: ExtraRequest) => ExtraReply | undefined;

export const ACTIONS_BOT = { login: 'github-actions[bot]', id: 41898282, type: 'Bot' as const };
/** The author of every pull request and the user of every permission answer not given one. */
const OCTOCAT = { login: 'octocat', id: 583231, type: 'User' as const };

export const SECONDARY_RATE_LIMIT_MESSAGE =
  'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.';
const SECONDARY_RATE_LIMIT_DOCS =
  'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits';
const REACTIONS = ['+1', '-1', 'laugh', 'confused', 'heart', 'hooray', 'rocket', 'eyes'] as const;
const STATUS_STATES = ['error', 'failure', 'pending', 'success'];
/** GitHub's longest comment or review body, in characters. */
const COMMENT_BODY_MAX = 65_536;
const REVIEW_STATES: Record<string, string> = {
  APPROVE: 'APPROVED',
  REQUEST_CHANGES: 'CHANGES_REQUESTED',
  COMMENT: 'COMMENTED',
};
/** `permission` is the legacy field: maintain shows as write and triage as read; `role_name` keeps the role. */
const LEGACY_PERMISSION: Record<StoredPermission, string> = {
  admin: 'admin',
  maintain: 'write',
  write: 'write',
  triage: 'read',
  read: 'read',
  none: 'none',
};

export async function startFakeGitHub(owner: string, repo: string): Promise<FakeGitHub> {
  let nextId = 1_900_000_000;
  let clock = Date.parse('2025-05-04T10:00:00Z');
  const now = () => new Date((clock += 1000)).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const reactionIds = new WeakMap<StoredReaction, { id: number; created_at: string }>();
  /** When each review the stand-in made was submitted (a test's own reviews get the time they are shown). */
  const reviewTimes = new WeakMap<StoredReview, string>();
  const state: FakeGitHub = {
    url: '',
    requests: [],
    unexpected: [],
    comments: [],
    forbidCreate: false,
    userTokens: new Map(),
    pulls: new Map(),
    permissions: new Map(),
    reviews: [],
    statuses: [],
    reactions: [],
    limitNext: null,
    failNext: 0,
    failAfterNext: 0,
    failOn: null,
    down: false,
    teams: new Map(),
    files: new Map(),
    routes: [],
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
    seed: (c) => {
      // As on GitHub: a new comment's updated_at is its created_at (they differ once it is edited).
      const at_ = now();
      const stored = { ...c, id: nextId++, created_at: at_, updated_at: at_ };
      state.comments.push(stored);
      return stored;
    },
    setPull: (p) => {
      state.pulls.set(p.number, p);
      return p;
    },
  };
  let base = '';
  const api = `/repos/${owner}/${repo}`;
  const renderUser = (u: { login: string; id: number; type: 'Bot' | 'User' }) => githubUser(u, base);
  const reactionCounts = (commentId: number) => {
    const counts: Record<string, number> = Object.fromEntries(REACTIONS.map((r) => [r, 0]));
    let total = 0;
    for (const r of state.reactions) {
      if (r.commentId !== commentId) continue;
      counts[r.content] = (counts[r.content] ?? 0) + 1;
      total++;
    }
    return { url: `${base}${api}/issues/comments/${commentId}/reactions`, total_count: total, ...counts };
  };
  const render = (c: StoredComment) => ({
    url: `${base}${api}/issues/comments/${c.id}`,
    html_url: `https://github.com/${owner}/${repo}/pull/${c.issue}#issuecomment-${c.id}`,
    issue_url: `${base}${api}/issues/${c.issue}`,
    id: c.id,
    node_id: `IC_kwDOM_${c.id}`,
    user: renderUser(c.user),
    created_at: c.created_at,
    updated_at: c.updated_at,
    author_association: c.user.type === 'Bot' ? 'NONE' : 'MEMBER',
    body: c.body,
    reactions: reactionCounts(c.id),
    performed_via_github_app: null,
  });
  const renderRepo = (fullName: string) =>
    githubRepository(fullName, { api: base, fork: fullName !== `${owner}/${repo}` });
  const renderPull = (p: StoredPull) => ({
    url: `${base}${api}/pulls/${p.number}`,
    id: 1_000_000 + p.number,
    node_id: `PR_kwDOM_${p.number}`,
    html_url: `https://github.com/${owner}/${repo}/pull/${p.number}`,
    diff_url: `https://github.com/${owner}/${repo}/pull/${p.number}.diff`,
    patch_url: `https://github.com/${owner}/${repo}/pull/${p.number}.patch`,
    issue_url: `${base}${api}/issues/${p.number}`,
    number: p.number,
    state: p.state,
    locked: false,
    title: p.title,
    user: renderUser(p.author ? { login: p.author, id: 9000 + p.author.length, type: 'User' } : OCTOCAT),
    body: p.body,
    labels: [],
    created_at: '2025-05-04T09:00:00Z',
    updated_at: '2025-05-04T09:30:00Z',
    closed_at: p.state === 'closed' ? '2025-05-04T09:30:00Z' : null,
    merged_at: null,
    merge_commit_sha: null,
    draft: false,
    commits_url: `${base}${api}/pulls/${p.number}/commits`,
    review_comments_url: `${base}${api}/pulls/${p.number}/comments`,
    review_comment_url: `${base}${api}/pulls/comments{/number}`,
    comments_url: `${base}${api}/issues/${p.number}/comments`,
    statuses_url: `${base}${api}/statuses/${p.head.sha}`,
    assignee: null,
    assignees: [],
    requested_reviewers: [],
    requested_teams: [],
    milestone: null,
    auto_merge: null,
    active_lock_reason: null,
    _links: {
      self: { href: `${base}${api}/pulls/${p.number}` },
      html: { href: `https://github.com/${owner}/${repo}/pull/${p.number}` },
      issue: { href: `${base}${api}/issues/${p.number}` },
      comments: { href: `${base}${api}/issues/${p.number}/comments` },
      review_comments: { href: `${base}${api}/pulls/${p.number}/comments` },
      review_comment: { href: `${base}${api}/pulls/comments{/number}` },
      commits: { href: `${base}${api}/pulls/${p.number}/commits` },
      statuses: { href: `${base}${api}/statuses/${p.head.sha}` },
    },
    head: {
      label: p.head.repo ? `${p.head.repo.split('/')[0]}:${p.head.ref}` : p.head.ref,
      ref: p.head.ref,
      sha: p.head.sha,
      user: p.head.repo ? renderUser({ login: p.head.repo.split('/')[0] ?? '', id: 1, type: 'User' }) : null,
      repo: p.head.repo ? renderRepo(p.head.repo) : null,
    },
    base: {
      label: `${owner}:${p.base.ref}`,
      ref: p.base.ref,
      sha: p.base.sha,
      user: renderUser({ login: owner, id: 1, type: 'User' }),
      repo: renderRepo(`${owner}/${repo}`),
    },
    author_association: 'CONTRIBUTOR',
    merged: false,
    merged_by: null,
    mergeable: null,
    mergeable_state: 'unknown',
    maintainer_can_modify: false,
    additions: 1,
    deletions: 0,
    changed_files: 1,
    comments: state.comments.filter((c) => c.issue === p.number).length,
    review_comments: 0,
    commits: 1,
  });
  const renderReview = (r: StoredReview) => ({
    id: r.id,
    node_id: `PRR_kwDOM_${r.id}`,
    user: renderUser(ACTIONS_BOT),
    body: r.body,
    state: REVIEW_STATES[r.event] ?? 'PENDING',
    html_url: `https://github.com/${owner}/${repo}/pull/${r.pr}#pullrequestreview-${r.id}`,
    pull_request_url: `${base}${api}/pulls/${r.pr}`,
    _links: {
      html: { href: `https://github.com/${owner}/${repo}/pull/${r.pr}#pullrequestreview-${r.id}` },
      pull_request: { href: `${base}${api}/pulls/${r.pr}` },
    },
    submitted_at: reviewTimes.get(r) ?? now(),
    commit_id: r.commitId,
    author_association: 'NONE',
  });

  const server = http.createServer((req, res) => {
    const at = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      // Decoded whole: a character's UTF-8 bytes may be split between two chunks.
      const text = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://localhost');
      const body: unknown = text ? JSON.parse(text) : undefined;
      const method = req.method ?? '';
      const record: RecordedRequest = {
        method,
        path: url.pathname + url.search,
        authorization: req.headers.authorization,
        userAgent: req.headers['user-agent'],
        body,
        at,
      };
      state.requests.push(record);
      if (state.down) return void req.socket.destroy();
      // GitHub Enterprise Server serves the same REST API under /api/v3.
      const pathname = url.pathname.replace(/^\/api\/v3(?=\/)/, '');
      const failOn = (acted: boolean): boolean => {
        if (state.failOn?.acted !== acted || !state.failOn.request.test(`${method} ${url.pathname}`)) return false;
        state.failOn = null;
        return true;
      };
      /** A write GitHub carried out, answered 502 all the same (`failAfterNext`, `failOn`). */
      const failedAfter = (status: number): boolean => {
        if (method === 'GET' || status < 200 || status >= 300) return false;
        if (failOn(true)) return true;
        if (state.failAfterNext <= 0) return false;
        state.failAfterNext--;
        return true;
      };
      const headersOf = (headers: Record<string, string> = {}) => ({
        'content-type': 'application/json; charset=utf-8',
        'x-github-api-version-selected': '2022-11-28',
        date: new Date(clock).toUTCString(),
        ...headers,
      });
      const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
        if (failedAfter(status)) return send(502, { message: 'Server Error' });
        record.status = status;
        record.response = payload;
        res.writeHead(status, headersOf(headers));
        res.end(JSON.stringify(payload));
      };
      /** One page of a list, as GitHub pages it: `per_page` (default 30, at most 100) and `page` (from 1). */
      const paged = <T>(items: readonly T[]): T[] => {
        const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get('per_page') ?? 30) || 30));
        const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
        return items.slice((page - 1) * perPage, page * perPage);
      };
      const notFound = () =>
        send(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' });
      const invalid = (resource: string, field: string, message: string, docs: string) =>
        send(422, {
          message: 'Validation Failed',
          errors: [{ resource, code: 'custom', field, message }],
          documentation_url: docs,
          status: '422',
        });

      if (state.failNext > 0 || failOn(false)) {
        state.failNext = Math.max(0, state.failNext - 1);
        return send(502, { message: 'Server Error' });
      }
      if (state.limitNext && state.limitNext.count > 0 && (method === 'POST' || method === 'PATCH')) {
        state.limitNext.count--;
        return send(
          state.limitNext.status,
          { message: SECONDARY_RATE_LIMIT_MESSAGE, documentation_url: SECONDARY_RATE_LIMIT_DOCS },
          { 'retry-after': String(state.limitNext.retryAfter) },
        );
      }

      const route = (pattern: string) => new RegExp(`^${escapeRegExp(api)}${pattern}$`).exec(pathname);
      const list = route('/issues/(\\d+)/comments');
      const one = route('/issues/comments/(\\d+)');
      const pull = route('/pulls/(\\d+)');
      const permission = route('/collaborators/([^/]+)/permission');
      const reviews = route('/pulls/(\\d+)/reviews');
      const statuses = route('/statuses/([^/]+)');
      const reactions = route('/issues/comments/(\\d+)/reactions');
      const fields = (body ?? {}) as Record<string, unknown>;
      const text_ = fields.body;
      // GitHub counts a comment's or review's body in characters (code points) and refuses more than 65,536.
      if ((list ?? one ?? reviews) && (method === 'POST' || method === 'PATCH') && typeof text_ === 'string') {
        if ([...text_].length > COMMENT_BODY_MAX)
          return send(422, {
            message: 'Validation Failed',
            errors: [
              {
                resource: reviews ? 'PullRequestReview' : 'IssueComment',
                code: 'unprocessable',
                field: 'data',
                message: `Body is too long (maximum is ${COMMENT_BODY_MAX} characters)`,
              },
            ],
            documentation_url: 'https://docs.github.com/rest/issues/comments#create-an-issue-comment',
            status: '422',
          });
      }
      if (list && method === 'GET') {
        // `since`: "only show results that were last updated after the given time" (ISO 8601).
        const since = url.searchParams.get('since');
        if (since !== null && !Number.isFinite(Date.parse(since)))
          return invalid(
            'IssueComment',
            'since',
            'since is not a timestamp',
            'https://docs.github.com/rest/issues/comments',
          );
        const shown = state.comments.filter(
          (c) => c.issue === Number(list[1]) && (since === null || Date.parse(c.updated_at) >= Date.parse(since)),
        );
        return send(200, paged(shown).map(render));
      }
      if (list && method === 'POST' && typeof text_ === 'string') {
        if (state.forbidCreate) {
          return send(403, {
            message: 'Resource not accessible by integration',
            documentation_url: 'https://docs.github.com/rest/issues/comments#create-an-issue-comment',
            status: '403',
          });
        }
        const person = state.userTokens.get((req.headers.authorization ?? '').replace(/^(token|bearer) /i, ''));
        const user = person ? { login: person, id: 5000 + person.length, type: 'User' as const } : ACTIONS_BOT;
        return send(201, render(state.seed({ issue: Number(list[1]), body: text_, user })));
      }
      const existing = one && state.comments.find((c) => c.id === Number(one[1]));
      if (existing && method === 'DELETE') {
        state.comments.splice(state.comments.indexOf(existing), 1);
        record.status = 204;
        res.writeHead(204, { 'x-github-api-version-selected': '2022-11-28' });
        res.end();
        return;
      }
      if (existing && method === 'PATCH' && typeof text_ === 'string') {
        existing.body = text_;
        existing.updated_at = now();
        return send(200, render(existing));
      }
      if (pull && method === 'GET') {
        const p = state.pulls.get(Number(pull[1]));
        return p ? send(200, renderPull(p)) : notFound();
      }
      if (permission && method === 'GET') {
        const login = decodeURIComponent(permission[1] ?? '');
        const role = state.permissions.get(login);
        if (!role) return notFound();
        const legacy = LEGACY_PERMISSION[role];
        return send(200, {
          permission: legacy,
          role_name: role,
          user: {
            ...renderUser({ login, id: 1000 + [...state.permissions.keys()].indexOf(login), type: 'User' }),
            permissions: {
              admin: role === 'admin',
              maintain: ['admin', 'maintain'].includes(role),
              push: legacy === 'admin' || legacy === 'write',
              triage: role !== 'read' && role !== 'none',
              pull: role !== 'none',
            },
            role_name: role,
          },
        });
      }
      if (reviews && method === 'GET') {
        const p = state.pulls.get(Number(reviews[1]));
        if (!p) return notFound();
        return send(200, paged(state.reviews.filter((r) => r.pr === p.number)).map(renderReview));
      }
      if (reviews && method === 'POST') {
        const p = state.pulls.get(Number(reviews[1]));
        if (!p) return notFound();
        const event = typeof fields.event === 'string' ? fields.event : '';
        if (event && !(event in REVIEW_STATES)) {
          return invalid(
            'PullRequestReview',
            'event',
            `event is not included in the list`,
            'https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request',
          );
        }
        // "Required when using REQUEST_CHANGES or COMMENT for the event parameter."
        if ((event === 'COMMENT' || event === 'REQUEST_CHANGES') && !(typeof text_ === 'string' && text_ !== '')) {
          return invalid(
            'PullRequestReview',
            'body',
            `body is required when event is ${event}`,
            'https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request',
          );
        }
        const stored: StoredReview = {
          id: nextId++,
          pr: p.number,
          commitId: typeof fields.commit_id === 'string' ? fields.commit_id : p.head.sha,
          body: typeof text_ === 'string' ? text_ : '',
          event,
        };
        reviewTimes.set(stored, now());
        state.reviews.push(stored);
        return send(200, renderReview(stored));
      }
      if (statuses && method === 'POST') {
        const docs = 'https://docs.github.com/rest/commits/statuses#create-a-commit-status';
        const st = fields.state;
        const description = typeof fields.description === 'string' ? fields.description : null;
        if (typeof st !== 'string' || !STATUS_STATES.includes(st))
          return invalid('Status', 'state', 'state is not included in the list', docs);
        if (description !== null && description.length > 140)
          return invalid('Status', 'description', 'description is too long (maximum is 140 characters)', docs);
        const stored: StoredStatus = {
          sha: statuses[1] ?? '',
          state: st,
          context: typeof fields.context === 'string' ? fields.context : 'default',
          description: description ?? '',
          targetUrl: typeof fields.target_url === 'string' ? fields.target_url : null,
        };
        state.statuses.push(stored);
        const id = nextId++;
        const at_ = now();
        return send(201, {
          url: `${base}${api}/statuses/${stored.sha}`,
          avatar_url: `https://avatars.githubusercontent.com/in/15368?v=4`,
          id,
          node_id: `SC_kwDOM_${id}`,
          state: stored.state,
          description: description,
          target_url: stored.targetUrl,
          context: stored.context,
          created_at: at_,
          updated_at: at_,
          creator: renderUser(ACTIONS_BOT),
        });
      }
      if (reactions && method === 'POST') {
        const commentId = Number(reactions[1]);
        if (!state.comments.some((c) => c.id === commentId)) return notFound();
        const content = fields.content;
        if (typeof content !== 'string' || !(REACTIONS as readonly string[]).includes(content)) {
          return invalid(
            'Reaction',
            'content',
            'content is not included in the list',
            'https://docs.github.com/rest/reactions/reactions#create-reaction-for-an-issue-comment',
          );
        }
        // The same reaction by the same user again is answered 200 with the one already there.
        const again = state.reactions.find((r) => r.commentId === commentId && r.content === content);
        const stored = again ?? { commentId, content };
        if (!again) {
          state.reactions.push(stored);
          reactionIds.set(stored, { id: nextId++, created_at: now() });
        }
        const meta = reactionIds.get(stored) ?? { id: 0, created_at: now() };
        return send(again ? 200 : 201, {
          id: meta.id,
          node_id: `REA_lADOM_${meta.id}`,
          user: renderUser(ACTIONS_BOT),
          content,
          created_at: meta.created_at,
        });
      }
      for (const extra of state.routes) {
        const reply = extra({
          method,
          path: pathname,
          query: url.searchParams,
          body,
          authorization: req.headers.authorization,
        });
        if (!reply) continue;
        if (failedAfter(reply.status)) return send(502, { message: 'Server Error' });
        record.status = reply.status;
        if (reply.raw === undefined) record.response = reply.body;
        res.writeHead(reply.status, headersOf(reply.headers));
        return void res.end(reply.raw ?? (reply.body === undefined ? undefined : JSON.stringify(reply.body)));
      }
      // Tried after the extra routes, so a test's own answers for these win.
      const membership = /^\/orgs\/([^/]+)\/teams\/([^/]+)\/memberships\/([^/]+)$/.exec(pathname);
      if (membership && method === 'GET') {
        const [, org = '', team = '', login = ''] = membership.map((x) => decodeURIComponent(x));
        if (!(state.teams.get(`${org}/${team}`) ?? []).includes(login)) return notFound();
        return send(200, {
          url: `${base}/organizations/1/team/${team.length}/memberships/${encodeURIComponent(login)}`,
          role: 'member',
          state: 'active',
        });
      }
      const contents = new RegExp(`^${escapeRegExp(api)}/contents/(.+)$`).exec(pathname);
      if (contents && method === 'GET') {
        const file = decodeURIComponent(contents[1] ?? '');
        const ref = url.searchParams.get('ref') ?? 'main';
        const text = state.files.get(`${file}@${ref}`);
        if (text === undefined) return notFound();
        const bytes = Buffer.from(text);
        const sha = createHash('sha1')
          .update(Buffer.concat([Buffer.from(`blob ${bytes.length}\0`), bytes]))
          .digest('hex');
        const self = `${base}${api}/contents/${file}?ref=${encodeURIComponent(ref)}`;
        const html = `https://github.com/${owner}/${repo}/blob/${ref}/${file}`;
        const gitUrl = `${base}${api}/git/blobs/${sha}`;
        return send(200, {
          name: file.split('/').pop(),
          path: file,
          sha,
          size: bytes.length,
          url: self,
          html_url: html,
          git_url: gitUrl,
          download_url: `https://raw.githubusercontent.com/${owner}/${repo}/${ref}/${file}`,
          type: 'file',
          // GitHub wraps the base64 at 60 characters.
          content: bytes.toString('base64').replace(/(.{60})/g, '$1\n'),
          encoding: 'base64',
          _links: { self, git: gitUrl, html },
        });
      }
      state.unexpected.push(`${method} ${url.pathname}${url.search}`);
      return notFound();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.url = base;
  return state;
}

/**
 * A comment or review body Consort created, as people see it: the text before the post marker it
 * must end with (src/github/post-marker.ts, `\n\n<!-- consort:post <uuid> -->`).
 */
export function postedText(body: string): string {
  const m = /\n\n<!-- consort:post [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12} -->$/.exec(body);
  if (!m) throw new Error(`no post marker at the end of …${JSON.stringify(body.slice(-80))}`);
  return body.slice(0, m.index);
}
