/**
 * The local host: one repository's dashboard on 127.0.0.1 only. Requests must name this server in
 * their Host header (so a web page cannot reach it through DNS rebinding) and forms carry a token
 * made fresh for each start (so another site cannot post an approval through the person's browser).
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { CLIENT_SCRIPT } from './layout.js';
import type { DashboardSource } from './port.js';
import { SECURITY_HEADERS, serveDashboard, type DashboardContext } from './routes.js';

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

export async function startLocalDashboard(options: LocalDashboardOptions): Promise<LocalDashboard> {
  const csrf = randomBytes(24).toString('base64url');
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
    const ctx: DashboardContext = {
      source: options.source,
      base: '',
      assets: '/assets',
      csrf,
      approver: options.approver,
      editableApprover: true,
      canApprove: options.source.approve !== undefined,
      origin: `http://${String(req.headers.host)}`,
    };
    void serveDashboard(ctx, req, res, url.pathname, url).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
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
  return {
    url: origin,
    port,
    async close() {
      // Open event streams never end by themselves.
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
