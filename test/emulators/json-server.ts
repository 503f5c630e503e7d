/**
 * The HTTP side of an emulator: a node:http server on 127.0.0.1 (port 0) that routes JSON requests
 * to a handler, records every exchange for assertions, and can be told to fail the next matching
 * requests with a given status, body and headers (429 with Retry-After, 503, 423, …) — either
 * instead of handling them, or after handling them (the server acted, then answered 500/504 or
 * dropped the connection: the ambiguous outcome a client must not answer by sending again).
 */
import http from 'node:http';
import type net from 'node:net';

export interface Req {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: unknown;
  rawBody: string;
}

export interface Res {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface Fault {
  method?: string;
  path: RegExp;
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** How many matching requests fail (default 1). */
  times?: number;
  /** Handle the request for real first, then fail (the server acted but the client cannot tell). */
  afterHandling?: boolean;
  /** Close the connection without any answer (status is then ignored). */
  drop?: boolean;
  /** Something else happens on the service at that moment (another client acts). */
  meanwhile?: () => Promise<void> | void;
}

export interface Exchange {
  method: string;
  path: string;
  query: string;
  status: number;
  body: unknown;
  /** What the handler answered (also when a fault replaced it after handling). */
  response: unknown;
  /** The handler's status, when it ran. */
  handledStatus?: number;
}

/** Thrown by handlers: becomes the response. */
export class HttpReply extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(`HTTP ${status}`);
  }
}

export class JsonServer {
  readonly exchanges: Exchange[] = [];
  private readonly faults: (Fault & { left: number })[] = [];
  private server: http.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(private readonly handler: (req: Req) => Promise<Res>) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => void this.serve(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Forget the request log and any faults not yet served (the emulator's reset). */
  reset(): void {
    this.exchanges.length = 0;
    this.faults.length = 0;
  }

  fail(fault: Fault): void {
    this.faults.push({ ...fault, left: fault.times ?? 1 });
  }

  /** Injected failures not yet served (a test asserts none are left unused). */
  pendingFaults(): number {
    return this.faults.reduce((n, f) => n + f.left, 0);
  }

  count(method: string, path: RegExp): number {
    return this.sent(method, path).length;
  }

  sent(method: string, path: RegExp): Exchange[] {
    return this.exchanges.filter((e) => e.method === method && path.test(e.path));
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    let parsed: unknown = rawBody;
    if (req.headers['content-type']?.includes('application/json') && rawBody) parsed = JSON.parse(rawBody);
    const fault = this.faults.find(
      (f) => f.left > 0 && (!f.method || f.method === method) && f.path.test(url.pathname),
    );
    if (fault) fault.left--;
    let handled: Res | undefined;
    if (!fault || fault.afterHandling) {
      try {
        handled = await this.handler({
          method,
          path: url.pathname,
          query: url.searchParams,
          headers: req.headers,
          body: parsed,
          rawBody,
        });
      } catch (e) {
        handled =
          e instanceof HttpReply
            ? { status: e.status, body: e.body, headers: e.headers }
            : { status: 500, body: { message: (e as Error).message } };
      }
    }
    await fault?.meanwhile?.();
    const reply: Res = fault
      ? { status: fault.drop ? 0 : fault.status, body: fault.body ?? {}, headers: fault.headers ?? {} }
      : handled!;
    this.exchanges.push({
      method,
      path: url.pathname,
      query: url.search,
      status: reply.status,
      body: parsed,
      response: handled?.body,
      ...(handled ? { handledStatus: handled.status } : {}),
    });
    if (fault?.drop) return void req.socket.destroy();
    res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
    res.end(reply.body === undefined || reply.status === 204 ? undefined : JSON.stringify(reply.body));
  }
}
