/**
 * A cloud endpoint in miniature: a TCP listener on 127.0.0.1 that speaks just enough of the
 * PostgreSQL protocol to refuse TLS, ask for a password, check it (a login token or a role
 * password the emulator issued), and then hand the session to the run's scratch PostgreSQL (trust
 * auth, see databases.ts) as `postgres` on the branch's own database. So a URL built from an emulated endpoint's host
 * reaches exactly that branch's data, and an expired token is refused like the real service does.
 */
import net from 'node:net';
import { scratchPgUrl } from '../setup/system-postgres.js';

/** `user`: the role the session runs as upstream (default: the scratch server's superuser). */
export type Verdict = { ok: true; database: string; user?: string } | { ok: false; code: string; message: string };

export type Authenticate = (user: string, password: string, database: string) => Verdict | Promise<Verdict>;

export interface PgProxy {
  port: number;
  close(): Promise<void>;
}

const SSL_REQUEST = 80877103;
const GSS_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;

function startup(params: Map<string, string>): Buffer {
  const body = Buffer.concat(
    [...params].flatMap(([k, v]) => [Buffer.from(`${k}\0`), Buffer.from(`${v}\0`)]).concat([Buffer.from([0])]),
  );
  const head = Buffer.alloc(8);
  head.writeInt32BE(body.length + 8, 0);
  head.writeInt32BE(196608, 4);
  return Buffer.concat([head, body]);
}

function errorResponse(code: string, message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0\0`);
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}

const CLEARTEXT = Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3]);

export async function startPgProxy(authenticate: Authenticate): Promise<PgProxy> {
  const upstreamUrl = new URL(await scratchPgUrl());
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    let buf = Buffer.alloc(0);
    let params = new Map<string, string>();
    let stage: 'startup' | 'password' = 'startup';
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        if (stage === 'startup') {
          if (buf.length < 8 || buf.length < buf.readInt32BE(0)) return;
          const len = buf.readInt32BE(0);
          const code = buf.readInt32BE(4);
          const msg = buf.subarray(8, len);
          buf = buf.subarray(len);
          if (code === SSL_REQUEST || code === GSS_REQUEST) {
            client.write('N');
            continue;
          }
          if (code === CANCEL_REQUEST) return void client.destroy();
          const parts = msg.toString('utf8').split('\0');
          params = new Map();
          for (let i = 0; i + 1 < parts.length && parts[i] !== ''; i += 2) params.set(parts[i]!, parts[i + 1]!);
          client.write(CLEARTEXT);
          stage = 'password';
          continue;
        }
        if (buf.length < 5 || buf.length < 1 + buf.readInt32BE(1)) return;
        const type = buf[0];
        const body = buf.subarray(5, 1 + buf.readInt32BE(1));
        buf = buf.subarray(1 + buf.readInt32BE(1));
        if (type !== 0x70) return void client.end(errorResponse('08P01', 'expected a password message'));
        const password = body.subarray(0, body.indexOf(0)).toString('utf8');
        client.off('data', onData);
        client.pause();
        void Promise.resolve(
          authenticate(params.get('user') ?? '', password, params.get('database') ?? params.get('user') ?? ''),
        ).then(
          (verdict) => proceed(verdict),
          (e: unknown) => client.end(errorResponse('XX000', (e as Error).message)),
        );
        return;
      }
    };
    const proceed = (verdict: Verdict) => {
      if (!verdict.ok) return void client.end(errorResponse(verdict.code, verdict.message));
      const upstream = net.connect(Number(upstreamUrl.port || 5432), upstreamUrl.hostname);
      sockets.add(upstream);
      upstream.on('close', () => {
        sockets.delete(upstream);
        client.destroy();
      });
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
      upstream.on('connect', () => {
        const forwarded = new Map(params);
        forwarded.set('user', verdict.user ?? decodeURIComponent(upstreamUrl.username || 'postgres'));
        forwarded.set('database', verdict.database);
        upstream.write(startup(forwarded));
        if (buf.length > 0) upstream.write(buf);
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
    };
    client.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
