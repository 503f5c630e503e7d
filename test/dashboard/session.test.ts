/** Signed session cookies, CSRF tokens and the permission cache of the App host, table-driven. */
import {
  AccessCache,
  canRead,
  csrfToken,
  newSession,
  readCookie,
  sessionCookie,
  signSession,
  verifySession,
} from '../../src/dashboard/session.js';

const SECRET = 's'.repeat(32);
const NOW = 1_900_000_000_000;

describe('session cookies', () => {
  const session = newSession('ada', 'gho_token', NOW, 1000);
  const value = signSession(session, SECRET);
  const [payload, signature] = value.split('.') as [string, string];
  const forged = Buffer.from(JSON.stringify({ ...session, login: 'mallory' })).toString('base64url');

  it.each([
    ['valid', value, NOW, 'ada'],
    ['expired', value, NOW + 1000, null],
    ['another secret', signSession(session, 'x'.repeat(32)), NOW, null],
    ['payload swapped', `${forged}.${signature}`, NOW, null],
    ['no signature', payload, NOW, null],
    ['extra part', `${value}.x`, NOW, null],
    ['garbage', 'not-a-cookie', NOW, null],
    ['missing', undefined, NOW, null],
  ])('%s', (_name, cookie, now, login) => {
    expect(verifySession(cookie, SECRET, now)?.login ?? null).toBe(login);
  });

  it('sets HttpOnly, SameSite and Secure on https, and reads it back', () => {
    const header = sessionCookie(value, { secure: true, path: '/dashboard', maxAgeS: 3600 });
    expect(header).toBe(`consort_session=${value}; Path=/dashboard; Max-Age=3600; HttpOnly; SameSite=Lax; Secure`);
    expect(sessionCookie(value, { secure: false, path: '/', maxAgeS: 1 })).not.toContain('Secure');
    expect(readCookie(`a=1; consort_session=${value}; b=2`, 'consort_session')).toBe(value);
  });

  it('derives a CSRF token per session', () => {
    const other = newSession('ada', 'gho_token', NOW);
    expect(csrfToken(session, SECRET)).toBe(csrfToken(session, SECRET));
    expect(csrfToken(session, SECRET)).not.toBe(csrfToken(other, SECRET));
  });
});

describe('AccessCache', () => {
  it('asks GitHub once per TTL per person and repository', async () => {
    const cache = new AccessCache(60_000);
    let asked = 0;
    const ask = async () => {
      asked += 1;
      return 'read' as const;
    };
    expect(await cache.permission('Ada', 'o/r', NOW, ask)).toBe('read');
    expect(await cache.permission('ada', 'O/R', NOW + 59_000, ask)).toBe('read');
    expect(asked).toBe(1);
    await cache.permission('ada', 'o/r', NOW + 60_000, ask);
    await cache.permission('bob', 'o/r', NOW + 60_000, ask);
    expect(asked).toBe(3);
    expect([canRead('none'), canRead('triage'), canRead('read')]).toEqual([false, true, true]);
  });
});
