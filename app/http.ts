/**
 * The App's HTTP server: GitHub's webhooks (signature-verified by @octokit/webhooks, through
 * Probot) on the webhook path, `/health` for load balancers and process managers, the dashboard
 * under `/dashboard` when it is configured, 404 elsewhere.
 *
 * `/health`: 503 `unavailable` when the store does not answer (the App cannot record webhooks);
 * 200 `degraded` while GitHub cannot be reached (webhooks are still recorded, checks wait and
 * are retried — restarting the App would not help); 200 `ok` otherwise.
 */
import http from 'node:http';
import type { GitHubStatus } from './github-watch.js';

export type NodeMiddleware = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  next?: (err?: Error) => void,
) => unknown;

export interface AppServerOptions {
  webhooks: NodeMiddleware;
  /** True when the App can do its work (its store answers). */
  healthy: () => Promise<boolean>;
  /** Whether GitHub answers (github-watch.ts); absent: not reported. */
  github?: () => Promise<GitHubStatus>;
  version: string;
  /** The dashboard (app/dashboard/host.ts): true when it took the request. */
  dashboard?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean;
}

async function health(options: AppServerOptions): Promise<{ code: number; body: Record<string, unknown> }> {
  const [store, github] = await Promise.all([options.healthy(), options.github?.()]);
  const status = !store ? 'unavailable' : github && !github.reachable ? 'degraded' : 'ok';
  return {
    code: store ? 200 : 503,
    body: { status, version: options.version, store: store ? 'ok' : 'unavailable', ...(github ? { github } : {}) },
  };
}

export function createAppServer(options: AppServerOptions): http.Server {
  return http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/health' && (req.method === 'GET' || req.method === 'HEAD')) {
      void health(options).then(({ code, body }) => {
        res.writeHead(code, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : JSON.stringify(body));
      });
      return;
    }
    if (options.dashboard?.(req, res)) return;
    const notFound = (): void => {
      if (!res.headersSent) res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found\n');
    };
    Promise.resolve(options.webhooks(req, res, notFound)).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
}

export async function listen(server: http.Server, port: number, host: string): Promise<{ port: number; url: string }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const actual = typeof address === 'object' && address !== null ? address.port : port;
  return { port: actual, url: `http://${host.includes(':') ? `[${host}]` : host}:${actual}` };
}

export async function closeServer(server: http.Server): Promise<void> {
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
