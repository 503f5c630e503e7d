/**
 * The local host: one repository's dashboard on 127.0.0.1 only. Requests must name this server in
 * their Host header (so a web page cannot reach it through DNS rebinding) and forms carry a token
 * made fresh for each start (so another site cannot post an approval through the person's browser).
 *
 * Anyone on the machine can read the pages; only the person who started it can approve. Approving
 * needs a browser signed in with the one-time link the dashboard prints where it was started
 * (`signInUrl`): the link's key is exchanged once for a browser-session cookie (HttpOnly,
 * SameSite=Strict) and then stops working, so a process that fetches the pages, or finds the link
 * later in a history file, gets neither the form's token nor a way to post one.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { CLIENT_SCRIPT } from './layout.js';
import type { DashboardSource } from './port.js';
import { SECURITY_HEADERS, sameToken, serveDashboard, type DashboardContext } from './routes.js';
import { readCookie, sessionCookie } from './session.js';

export const LOCAL_HOST = '127.0.0.1';

export interface LocalDashboardOptions {
  source: DashboardSource;
  /** 0: any free port. */
  port: number;
  /** The name approvals are recorded under by default (git's user.name); editable in the form. */
  approver: string | null;
}

export interface LocalDashboard {
  url: string;
  /** The one-time link that signs a browser in to approve (print it only to the person). */
  signInUrl: string;
  port: number;
  close(): Promise<void>;
}

export function serveAsset(res: http.ServerResponse): void {
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'content-type': 'text/javascript; charset=utf-8',
    'cache-control': 'no-cache',
  });
  res.end(CLIENT_SCRIPT);
}

export const SIGN_IN_PATH = '/sign-in';

const NOT_SIGNED_IN =
  'Approving here needs the sign-in link `consort dashboard` printed where it was started: open it in this ' +
  'browser (it works once). Or approve with `consort approve` in a terminal.';
const LINK_USED =
  'This sign-in link was already used: approve in the browser that opened it, or restart `consort dashboard` ' +
  'for a new link.';

export async function startLocalDashboard(options: LocalDashboardOptions): Promise<LocalDashboard> {
  const csrf = randomBytes(24).toString('base64url');
  const signInKey = randomBytes(24).toString('base64url');
  const cookieValue = randomBytes(24).toString('base64url');
  let signInUsed = false;
  let cookieName = 'consort_local';
  let origin = '';
  let allowedHosts = new Set<string>();
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    if (!allowedHosts.has(String(req.headers.host ?? ''))) {
      res
        .writeHead(421, { 'content-type': 'text/plain' })
        .end('This dashboard answers only to 127.0.0.1 and localhost.\n');
      return;
    }
    const url = new URL(req.url ?? '/', origin);
    if (url.pathname === '/assets/dashboard.js') return serveAsset(res);
    if (url.pathname === SIGN_IN_PATH) return signIn(url, res);
    const signedIn = sameToken(readCookie(req.headers.cookie, cookieName) ?? '', cookieValue);
    const ctx: DashboardContext = {
      source: options.source,
      base: '',
      assets: '/assets',
      csrf,
      approver: options.approver,
      editableApprover: true,
      canApprove: options.source.approve !== undefined && signedIn,
      ...(options.source.approve !== undefined && !signedIn ? { cannotApprove: NOT_SIGNED_IN } : {}),
      origin: `http://${String(req.headers.host)}`,
    };
    void serveDashboard(ctx, req, res, url.pathname, url).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  function signIn(url: URL, res: http.ServerResponse): void {
    const plain = (status: number, text: string): void =>
      void res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8' }).end(`${text}\n`);
    if (!sameToken(url.searchParams.get('key') ?? '', signInKey))
      return plain(403, 'This is not the sign-in link of this dashboard.');
    if (signInUsed) return plain(403, LINK_USED);
    signInUsed = true;
    res.writeHead(303, {
      ...SECURITY_HEADERS,
      'set-cookie': sessionCookie(cookieValue, { secure: false, path: '/', name: cookieName, sameSite: 'Strict' }),
      location: '/',
    });
    res.end();
  }
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, LOCAL_HOST, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  origin = `http://${LOCAL_HOST}:${port}`;
  allowedHosts = new Set([`${LOCAL_HOST}:${port}`, `localhost:${port}`]);
  // Cookies are per host, not per port: two dashboards must not read each other's.
  cookieName = `consort_local_${port}`;
  return {
    url: origin,
    signInUrl: `${origin}${SIGN_IN_PATH}?key=${signInKey}`,
    port,
    async close() {
      // Open event streams never end by themselves.
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
