/**
 * Tests must never reach the network: every socket to anything but loopback (or a unix socket)
 * fails loudly, so a test that forgets to point an adapter at its local stand-in cannot pass by luck.
 */
import net from 'node:net';

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/i;
const original = net.Socket.prototype.connect;

function hostOf(args: unknown[]): string | undefined {
  const [first, second] = args;
  if (typeof first === 'object' && first !== null && !Array.isArray(first)) {
    const o = first as { host?: string; path?: string; port?: number };
    if (o.path) return undefined; // unix socket
    return o.host ?? 'localhost';
  }
  if (typeof first === 'string' && Number.isNaN(Number(first))) return undefined; // unix socket path
  if (Array.isArray(first)) return hostOf(first);
  return typeof second === 'string' ? second : 'localhost';
}

// The one exception: live tests against the real cloud services, run only on explicit request
// (test/branches/live.test.ts); CI never sets this.
const liveTests = process.env.CONSORT_LIVE_TESTS === '1';

net.Socket.prototype.connect = function patchedConnect(this: net.Socket, ...args: unknown[]) {
  const host = hostOf(args);
  if (host !== undefined && !LOOPBACK.test(host) && !liveTests) {
    throw new Error(`Network access to ${host} is forbidden in tests (only loopback is allowed)`);
  }
  return (original as (...a: unknown[]) => net.Socket).apply(this, args);
} as typeof net.Socket.prototype.connect;
