/**
 * What the App host's sign-in rests on, kept pure so it can be table-tested: sealed session
 * cookies (AES-256-GCM, so the person's OAuth token inside can be neither read nor forged;
 * expiring; `HttpOnly`, `SameSite=Lax`, `Secure` over https), a CSRF token bound to the session,
 * and a short-lived cache of "may this person read / write this repository" answers (GitHub is
 * asked again once an answer is older than its TTL). Wired by app/dashboard/host.ts.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Permission } from '../ports/github.js';

export const SESSION_COOKIE = 'consort_session';

const Session = z.object({
  id: z.string().min(16),
  login: z.string().min(1).max(100),
  token: z.string(),
  exp: z.number().int(),
});
export type Session = z.infer<typeof Session>;

function mac(secret: string, text: string): string {
  return createHmac('sha256', secret).update(text).digest('base64url');
}

export function newSession(login: string, token: string, now: number, ttlMs = 8 * 3_600_000): Session {
  return { id: randomBytes(18).toString('base64url'), login, token, exp: now + ttlMs };
}

const keyOf = (secret: string): Buffer => createHash('sha256').update(`consort-session\0${secret}`).digest();

/** `sealed.tag`, both base64url: the session encrypted and authenticated with a key derived from `secret`. */
export function signSession(session: Session, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(secret), iv);
  const sealed = Buffer.concat([iv, cipher.update(JSON.stringify(session), 'utf8'), cipher.final()]);
  return `${sealed.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`;
}

/** The session in a cookie value, or null when it is forged, malformed or expired. */
export function verifySession(value: string | undefined, secret: string, now: number): Session | null {
  if (!value) return null;
  const [payload, tag, extra] = value.split('.');
  if (!payload || !tag || extra !== undefined) return null;
  let data: unknown;
  try {
    const sealed = Buffer.from(payload, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', keyOf(secret), sealed.subarray(0, 12));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    data = JSON.parse(Buffer.concat([decipher.update(sealed.subarray(12)), decipher.final()]).toString('utf8'));
  } catch {
    return null;
  }
  const parsed = Session.safeParse(data);
  return parsed.success && parsed.data.exp > now ? parsed.data : null;
}

export function sessionCookie(
  value: string,
  options: { secure: boolean; path: string; maxAgeS?: number; name?: string; sameSite?: 'Lax' | 'Strict' },
): string {
  return [
    `${options.name ?? SESSION_COOKIE}=${value}`,
    `Path=${options.path}`,
    // No Max-Age: a browser-session cookie, gone when the browser closes (and never written to disk).
    ...(options.maxAgeS === undefined ? [] : [`Max-Age=${options.maxAgeS}`]),
    'HttpOnly',
    `SameSite=${options.sameSite ?? 'Lax'}`,
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return undefined;
}

/** The form token of a session: derived, so nothing more is stored, and useless with another session. */
export function csrfToken(session: Session, secret: string): string {
  return mac(secret, `csrf:${session.id}`);
}

/** Permission answers per (login, repository), reused for `ttlMs`. */
export class AccessCache {
  private readonly answers = new Map<string, { permission: Permission; at: number }>();

  constructor(
    private readonly ttlMs = 60_000,
    private readonly max = 10_000,
  ) {}

  async permission(login: string, repo: string, now: number, ask: () => Promise<Permission>): Promise<Permission> {
    const key = `${login.toLowerCase()}\0${repo.toLowerCase()}`;
    const hit = this.answers.get(key);
    if (hit !== undefined && now - hit.at < this.ttlMs) return hit.permission;
    const permission = await ask();
    if (this.answers.size >= this.max) this.answers.delete(this.answers.keys().next().value!);
    this.answers.set(key, { permission, at: now });
    return permission;
  }
}

export const canRead = (p: Permission) => p !== 'none';
