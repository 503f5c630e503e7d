/**
 * Untrusted code on Lakebase gets a native Postgres role of its branch's own (`confinedUri`), made
 * with SQL through the branch's endpoint, when the project accepts password logins for such roles;
 * when it does not, null (the caller uses the identity's credentials and says so) and the role made
 * is left unable to log in. Against the Lakebase emulator (test/emulators/lakebase.ts).
 */
import { randomBytes } from 'node:crypto';
import { createLakebaseProvider } from '../../../src/branches/lakebase/provider.js';
import { parseLakebaseSettings } from '../../../src/branches/lakebase/settings.js';
import type { CloudBranchProvider } from '../../../src/branches/cloud/provider.js';
import { fastClock } from '../../emulators/clock.js';
import { LakebaseEmulator } from '../../emulators/lakebase.js';
import { attempt, query } from '../../helpers/servers.js';
import { scratchPgUrl } from '../../setup/system-postgres.js';

/** Branch names of this run's own: the emulated branches share one server, and so their roles. */
const tag = randomBytes(3).toString('hex');

async function withLakebase<T>(
  nativeLogin: boolean,
  fn: (p: CloudBranchProvider, logs: string[]) => Promise<T>,
): Promise<T> {
  const emu = await new LakebaseEmulator({ clientId: 'sp-1', clientSecret: 'secret-1', nativeLogin }).start();
  const logs: string[] = [];
  const provider = createLakebaseProvider(parseLakebaseSettings(emu.env()), {
    clock: fastClock(),
    sslMode: 'disable',
    log: (l) => logs.push(l),
  });
  try {
    return await fn(provider, logs);
  } finally {
    await provider.close();
    await emu.stop();
    const roles = await query<{ r: string }>(
      await scratchPgUrl(),
      'SELECT rolname AS r FROM pg_roles WHERE rolname LIKE $1',
      [`consort\\_%${tag}%`],
    );
    for (const { r } of roles) await query(await scratchPgUrl(), `DROP ROLE IF EXISTS "${r}"`);
  }
}

it("gives untrusted code a role of the branch's own, which reaches that branch only", () =>
  withLakebase(true, async (p) => {
    await query(await p.connectionUri('main'), 'CREATE TABLE t (x int)');
    await p.create({ name: `a-${tag}` });
    await p.create({ name: `b-${tag}` });
    const url = await p.confinedUri(`a-${tag}`);
    if (url === null) throw new Error('no confined role');
    expect(decodeURIComponent(new URL(url).username)).toBe(`consort_a_${tag}`);
    expect(await attempt(url, 'INSERT INTO t VALUES (1) RETURNING x')).toBe('allowed: [{"x":1}]');
    expect(await attempt(url, 'ALTER TABLE t ADD COLUMN y int')).toBe('allowed: []');
    expect(await attempt(url, 'CREATE DATABASE stolen')).toMatch(/^refused: permission denied/);
    expect(await attempt(url, 'CREATE ROLE stolen')).toMatch(/^refused: permission denied/);
    expect(await attempt(url, 'ALTER ROLE CURRENT_USER CREATEROLE')).toMatch(/^refused: permission denied/);
    const other = new URL(url);
    other.host = new URL(await p.connectionUri(`b-${tag}`)).host;
    expect(await attempt(other.toString(), 'SELECT 1')).toMatch(/^refused: permission denied for database/);
    // The role owns what it made: dropped with the branch's database when the emulator stops.
    await query(await p.connectionUri(`a-${tag}`), `DROP OWNED BY "consort_a_${tag}"`);
  }));

it('is null when the project refuses password logins for native roles, and the role made cannot log in', () =>
  withLakebase(false, async (p, logs) => {
    await p.create({ name: `c-${tag}` });
    expect(await p.confinedUri(`c-${tag}`)).toBeNull();
    expect(logs).toContainEqual(
      expect.stringMatching(/no confined role for "c-.*": the endpoint refused a password login/),
    );
    const admin = await p.connectionUri(`c-${tag}`);
    expect(await query(admin, 'SELECT rolcanlogin FROM pg_roles WHERE rolname = $1', [`consort_c_${tag}`])).toEqual([
      { rolcanlogin: false },
    ]);
    await query(admin, `DROP OWNED BY "consort_c_${tag}"`);
  }));
