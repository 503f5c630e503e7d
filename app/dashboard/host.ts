/**
 * The App's `/dashboard`: sign-in with GitHub, the repositories a person can read, and each
 * repository's dashboard — the same pages, JSON and live events as `consort dashboard`, from the
 * App's index. Who may see a repository is asked of GitHub (the collaborator-permission endpoint,
 * the one `/consort approve` asks) and reused for a minute; someone who cannot read it gets the
 * same 404 as for a repository that does not exist. Approval needs write access, asked afresh.
 *
 *   /dashboard                      sign-in link, or the repositories you can read
 *   /dashboard/login, /callback     the OAuth web flow;  /dashboard/logout
 *   /dashboard/api/repositories     the same list as JSON
 *   /dashboard/<owner>/<repo>/…     one repository (routes.ts: pages, /api/…, /events, approve)
 */
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { ConsortError, isConsortError } from '../../src/core/errors.js';
import { html } from '../../src/dashboard/html.js';
import { CLIENT_SCRIPT, plainLayout } from '../../src/dashboard/layout.js';
import type { BranchView } from '../../src/dashboard/port.js';
import { DASHBOARD_API_VERSION } from '../../src/dashboard/port.js';
import {
  decodeSegments,
  readBody,
  SECURITY_HEADERS,
  sameToken,
  sendJson,
  serveDashboard,
  type DashboardContext,
} from '../../src/dashboard/routes.js';
import {
  AccessCache,
  canRead,
  csrfToken,
  newSession,
  readCookie,
  SESSION_COOKIE,
  sessionCookie,
  signSession,
  verifySession,
  type Session,
} from '../../src/dashboard/session.js';
import { WRITE_PERMISSIONS, type Permission } from '../../src/ports/github.js';
import type { OctokitClient as OctokitLike } from '../../src/github/octokit.js';
import type { DashboardSettings } from '../settings.js';
import type { Store } from '../store/db.js';
import { dashboardApprovalRefusal } from './approval-policy.js';
import { approveFromDashboard } from './approve.js';
import { ChangeHub } from './changes.js';
import { githubCommits, githubRecords, type RecordsApi } from './github-records.js';
import { knownRepositories, repositoryByName, type IndexedRepository } from './index-store.js';
import { authorizeUrl, currentUser, exchangeCode, type OAuthClient } from './oauth.js';
import { restClient } from './rest-client.js';
import { AppSource, IndexCache } from './source.js';

export const DASHBOARD_PATH = '/dashboard';
const STATE_COOKIE = 'consort_oauth';
const SESSION_TTL_MS = 8 * 3_600_000;
/** Live-update streams one person may hold open at once (a browser holds one per open page). */
export const STREAMS_PER_PERSON = 16;

export interface AppDashboardOptions {
  store: Store;
  /** For the listening connection of live updates. */
  storeUrl: string;
  settings: DashboardSettings;
  github: { apiUrl: string; webUrl: string };
  /** GitHub as the App's installation (Probot's `auth(id)` in the App). */
  installation(installationId: number): Promise<OctokitLike>;
  branches?(repositoryId: number): Promise<BranchView[]>;
  fetch?: typeof fetch;
  now?: () => number;
  accessTtlMs?: number;
}

export interface AppDashboard {
  /** Serve a request under /dashboard; false for any other path. */
  handle(req: http.IncomingMessage, res: http.ServerResponse): boolean;
  readonly changes: ChangeHub;
  close(): Promise<void>;
}

function redirect(res: http.ServerResponse, location: string, cookies: string[] = []): void {
  res.writeHead(302, { ...SECURITY_HEADERS, location, ...(cookies.length ? { 'set-cookie': cookies } : {}) });
  res.end();
}

type SignedIn = { login: string; signOut: string; csrf: string };

function page(
  res: http.ServerResponse,
  status: number,
  title: string,
  body: ReturnType<typeof html>,
  user: SignedIn | null = null,
): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8' });
  res.end(plainLayout({ title, user }, body).text);
}

/** Only a path on this dashboard (never `//host` or a scheme) is a place to return to after sign-in. */
const safeNext = (next: string | null): string =>
  next && /^\/dashboard(\/[^/\\][^\\]*)?$/.test(next) && !next.includes('//') ? next : `${DASHBOARD_PATH}/`;

export function createAppDashboard(o: AppDashboardOptions): AppDashboard {
  const now = o.now ?? Date.now;
  const secure = o.settings.publicUrl.startsWith('https:');
  const cookiePath = DASHBOARD_PATH;
  const access = new AccessCache(o.accessTtlMs ?? 60_000);
  const cache = new IndexCache();
  const changes = new ChangeHub(o.storeUrl);
  const streams = new Set<http.ServerResponse>();
  const streamsOf = new Map<string, number>();
  const oauth: OAuthClient = {
    clientId: o.settings.clientId,
    clientSecret: o.settings.clientSecret,
    webUrl: o.github.webUrl,
    apiUrl: o.github.apiUrl,
    redirectUri: `${o.settings.publicUrl}${DASHBOARD_PATH}/callback`,
    ...(o.fetch ? { fetch: o.fetch } : {}),
  };
  const records = async (installationId: number): Promise<RecordsApi> =>
    githubRecords(await o.installation(installationId));
  const askPermission = async (repo: IndexedRepository, login: string): Promise<Permission> =>
    (await records(repo.installationId)).permission({ owner: repo.owner, repo: repo.repo }, login);
  const permission = (session: Session, repo: IndexedRepository) =>
    access.permission(session.login, `${repo.owner}/${repo.repo}`, now(), () => askPermission(repo, session.login));

  const sessionOf = (req: http.IncomingMessage): Session | null =>
    verifySession(readCookie(req.headers.cookie, SESSION_COOKIE), o.settings.sessionSecret, now());
  const frameUser = (session: Session | null): SignedIn | null =>
    session
      ? {
          login: session.login,
          signOut: `${DASHBOARD_PATH}/logout`,
          csrf: csrfToken(session, o.settings.sessionSecret),
        }
      : null;

  /**
   * Sign-out is a form POST carrying the session's token from this origin, so another site cannot
   * sign a person out (a GET shows the button). The sealed cookie is cleared in the browser.
   */
  async function logout(req: http.IncomingMessage, res: http.ServerResponse, session: Session | null): Promise<void> {
    const clear = [sessionCookie('', { secure, path: cookiePath, maxAgeS: 0 })];
    if (session === null) return redirect(res, `${DASHBOARD_PATH}/`, clear);
    if (req.method !== 'POST') return page(res, 200, 'Sign out', html`<h1>Sign out</h1>`, frameUser(session));
    const origin = req.headers.origin;
    const token = new URLSearchParams(await readBody(req, 4096)).get('csrf') ?? '';
    if (
      (origin !== undefined && origin !== o.settings.publicUrl) ||
      !sameToken(token, csrfToken(session, o.settings.sessionSecret))
    ) {
      return page(
        res,
        403,
        'Sign out',
        html`<h1>Not signed out</h1><p>This request did not come from this dashboard's own sign-out button.</p>`,
        frameUser(session),
      );
    }
    redirect(res, `${DASHBOARD_PATH}/`, clear);
  }

  async function login(res: http.ServerResponse, url: URL): Promise<void> {
    const state = randomBytes(18).toString('base64url');
    const next = safeNext(url.searchParams.get('next'));
    redirect(res, authorizeUrl(oauth, state), [
      sessionCookie(`${state}|${encodeURIComponent(next)}`, {
        secure,
        path: cookiePath,
        maxAgeS: 600,
        name: STATE_COOKIE,
      }),
    ]);
  }

  async function callback(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    const [state = '', nextRaw = ''] = (readCookie(req.headers.cookie, STATE_COOKIE) ?? '').split('|');
    const code = url.searchParams.get('code');
    if (!code || !sameToken(state, url.searchParams.get('state') ?? '')) {
      return page(
        res,
        400,
        'Sign-in failed',
        html`<h1>Sign-in failed</h1><p>This sign-in did not start here or took too long (the state does not match).</p><p><a href="${DASHBOARD_PATH}/login">Sign in again</a></p>`,
      );
    }
    const token = await exchangeCode(oauth, code);
    const user = await currentUser(oauth, token);
    const session = newSession(user.login, token, now(), SESSION_TTL_MS);
    redirect(res, safeNext(decodeURIComponent(nextRaw)), [
      sessionCookie(signSession(session, o.settings.sessionSecret), {
        secure,
        path: cookiePath,
        maxAgeS: SESSION_TTL_MS / 1000,
      }),
      sessionCookie('', { secure, path: cookiePath, maxAgeS: 0, name: STATE_COOKIE }),
    ]);
  }

  async function readable(session: Session): Promise<{ repo: IndexedRepository; permission: Permission }[]> {
    const all = await knownRepositories(o.store.pool);
    const answers = await Promise.all(
      all.map(async (repo) => ({ repo, permission: await permission(session, repo).catch((): Permission => 'none') })),
    );
    return answers.filter((a) => canRead(a.permission));
  }

  async function home(res: http.ServerResponse, session: Session | null, api: boolean): Promise<void> {
    if (session === null) {
      if (api) return sendJson(res, 401, { error: 'sign in first', signIn: `${DASHBOARD_PATH}/login` });
      return page(
        res,
        200,
        'Sign in',
        html`<h1>Consort</h1><p>See the features, turns, gates and checks of the repositories you can read.</p><p><a id="sign-in" href="${DASHBOARD_PATH}/login">Sign in with GitHub</a></p>`,
      );
    }
    const repos = await readable(session);
    if (api) {
      return sendJson(res, 200, {
        version: DASHBOARD_API_VERSION,
        login: session.login,
        repositories: repos.map((r) => ({
          owner: r.repo.owner,
          repo: r.repo.repo,
          permission: r.permission,
          url: `${DASHBOARD_PATH}/${r.repo.owner}/${r.repo.repo}/`,
        })),
      });
    }
    page(
      res,
      200,
      'Repositories',
      html`<h1>Repositories</h1>${
        repos.length === 0
          ? html`<p class="empty" id="no-repositories">You cannot read any repository this App is installed on (or it has seen no pull request yet).</p>`
          : html`<ul id="repositories">${repos.map((r) => html`<li><a href="${DASHBOARD_PATH}/${encodeURIComponent(r.repo.owner)}/${encodeURIComponent(r.repo.repo)}/">${r.repo.owner}/${r.repo.repo}</a> (${r.permission})</li>`)}</ul>`
      }`,
      frameUser(session),
    );
  }

  /** Open a live-update stream for this person, or say no (429) when they hold too many already. */
  function holdStream(res: http.ServerResponse, login: string): boolean {
    const key = login.toLowerCase();
    const held = streamsOf.get(key) ?? 0;
    if (held >= STREAMS_PER_PERSON) {
      sendJson(res, 429, {
        error: `You have ${held} live-update streams open already; close some pages of this dashboard.`,
      });
      return false;
    }
    streamsOf.set(key, held + 1);
    streams.add(res);
    res.on('close', () => {
      streams.delete(res);
      const left = (streamsOf.get(key) ?? 1) - 1;
      if (left > 0) streamsOf.set(key, left);
      else streamsOf.delete(key);
    });
    return true;
  }

  async function repository(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    url: URL,
    session: Session | null,
    owner: string,
    name: string,
    rest: string,
  ): Promise<void> {
    const api = rest.startsWith('/api/') || rest === '/api';
    if (session === null) {
      if (api || req.method !== 'GET')
        return sendJson(res, 401, { error: 'sign in first', signIn: `${DASHBOARD_PATH}/login` });
      return redirect(res, `${DASHBOARD_PATH}/login?next=${encodeURIComponent(url.pathname)}`);
    }
    const repo = await repositoryByName(o.store.pool, owner, name);
    const perm = repo ? await permission(session, repo) : 'none';
    if (!repo || !canRead(perm)) {
      // The same answer whether it does not exist or this person may not see it.
      return api
        ? sendJson(res, 404, { error: 'repository not found' })
        : page(res, 404, 'Not found', html`<h1>404</h1><p>No such repository here.</p>`, frameUser(session));
    }
    if (rest === '/events' && !holdStream(res, session.login)) return;
    const where = { owner: repo.owner, repo: repo.repo };
    const source = new AppSource({
      store: o.store,
      repository: repo,
      cache,
      changes,
      records: () => records(repo.installationId),
      // A change reaches an open stream only while the person may still read the repository (asked
      // again once the cached answer is older than its TTL); otherwise the stream ends, and the
      // browser's reconnection meets the 404 of someone who cannot read it.
      stillReadable: async () => {
        const ok = canRead(await permission(session, repo).catch((): Permission => 'none'));
        if (!ok) res.end();
        return ok;
      },
      ...(o.branches ? { branches: () => o.branches!(repo.repositoryId) } : {}),
      ...(WRITE_PERMISSIONS.includes(perm)
        ? {
            approve: async (request) => {
              // The write is judged on the permission now, not on the cached answer.
              const fresh = await askPermission(repo, session.login);
              if (!WRITE_PERMISSIONS.includes(fresh))
                throw new ConsortError(
                  'invalid-input',
                  'You cannot approve gates here: approving needs write access to the repository.',
                );
              const installation = await o.installation(repo.installationId);
              return approveFromDashboard(
                {
                  store: o.store,
                  repository: repo,
                  records: await records(repo.installationId),
                  commits: githubCommits(restClient(o.github.apiUrl, session.token, o.fetch)),
                  refusal: (pr) =>
                    dashboardApprovalRefusal(installation, { owner: repo.owner, repo: repo.repo }, pr, session.login),
                },
                { ...request, approver: session.login },
              );
            },
          }
        : {}),
    });
    const base = `${DASHBOARD_PATH}/${encodeURIComponent(where.owner)}/${encodeURIComponent(where.repo)}`;
    const ctx: DashboardContext = {
      source,
      base,
      assets: `${DASHBOARD_PATH}/assets`,
      csrf: csrfToken(session, o.settings.sessionSecret),
      approver: session.login,
      editableApprover: false,
      canApprove: source.approve !== undefined,
      origin: o.settings.publicUrl,
      user: frameUser(session)!,
      home: `${DASHBOARD_PATH}/`,
    };
    await serveDashboard(ctx, req, res, rest, url);
  }

  async function serve(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    const rest = url.pathname.slice(DASHBOARD_PATH.length);
    const session = sessionOf(req);
    if (rest === '/assets/dashboard.js') {
      res.writeHead(200, {
        ...SECURITY_HEADERS,
        'content-type': 'text/javascript; charset=utf-8',
        'cache-control': 'no-cache',
      });
      return void res.end(CLIENT_SCRIPT);
    }
    if (rest === '/login') return login(res, url);
    if (rest === '/callback') return callback(req, res, url);
    if (rest === '/logout') return logout(req, res, session);
    if (rest === '' || rest === '/') return home(res, session, false);
    if (rest === '/api/repositories') return home(res, session, true);
    const m = /^\/([^/]+)\/([^/]+)(\/.*)?$/.exec(rest);
    if (!m) return page(res, 404, 'Not found', html`<h1>404</h1>`, frameUser(session));
    if (m[3] === undefined) return redirect(res, `${url.pathname}/`);
    const [owner, name] = decodeSegments([m[1]!, m[2]!]) ?? [];
    if (owner === undefined || name === undefined)
      return page(
        res,
        400,
        'Bad request',
        html`<h1>400</h1><p>The address is not valid (a malformed %-escape).</p>`,
        frameUser(session),
      );
    return repository(req, res, url, session, owner, name, m[3]);
  }

  return {
    changes,
    handle(req, res) {
      const url = new URL(req.url ?? '/', o.settings.publicUrl);
      if (url.pathname !== DASHBOARD_PATH && !url.pathname.startsWith(`${DASHBOARD_PATH}/`)) return false;
      serve(req, res, url).catch((e: unknown) => {
        if (res.headersSent) return void res.end();
        const message = isConsortError(e)
          ? `${e.message}${e.hint ? ` ${e.hint}` : ''}`
          : 'The dashboard could not answer.';
        page(res, isConsortError(e) ? 400 : 500, 'Error', html`<h1>Error</h1><p>${message}</p>`);
      });
      return true;
    },
    async close() {
      for (const res of streams) res.end();
      await changes.close();
    },
  };
}
