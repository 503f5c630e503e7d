/**
 * The App's HTTP server: GitHub's webhooks (signature-verified by @octokit/webhooks, through
 * Probot) on the webhook path, `/health` for load balancers and process managers, 404 elsewhere.
 */
import http from 'node:http';

export type NodeMiddleware = (req: http.IncomingMessage, res: http.ServerResponse, next?: (err?: Error) => void) => unknown;

export interface AppServerOptions {
  webhooks: NodeMiddleware;
  /** True when the App can do its work (its store answers). */
  healthy: () => Promise<boolean>;
  version: string;
}

export function createAppServer(options: AppServerOptions): http.Server {
  return http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/health' && (req.method === 'GET' || req.method === 'HEAD')) {
      void options.healthy().then((ok) => {
        res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : JSON.stringify({ status: ok ? 'ok' : 'unavailable', version: options.version }));
      });
      return;
    }
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
