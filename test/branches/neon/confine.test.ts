/**
 * Untrusted code on Neon gets a role of its branch's own (`confinedUri`), made with SQL through the
 * branch's endpoint by the project's owner role — which on Neon is no superuser but has CREATEROLE
 * (a member of `neon_superuser`). Against the Neon emulator (test/emulators/neon.ts), whose owner
 * here is such a role on a real PostgreSQL 18, whose endpoints check a SQL role's password, and
 * whose branches are closed to each other's roles as Neon's clusters are. An owner without
 * CREATEROLE makes no role: null, and the log says why.
 */
import { createNeonProvider } from '../../../src/branches/neon/provider.js';
import { parseNeonSettings } from '../../../src/branches/neon/settings.js';
import type { CloudBranchProvider } from '../../../src/branches/cloud/provider.js';
import { fastClock } from '../../emulators/clock.js';
import { NeonEmulator, type NeonEmulatorOptions } from '../../emulators/neon.js';
import { attempt, query } from '../../helpers/servers.js';

async function withNeon<T>(
  owner: NeonEmulatorOptions['owner'],
  fn: (p: CloudBranchProvider, emu: NeonEmulator, logs: string[]) => Promise<T>,
): Promise<T> {
  const emu = await new NeonEmulator({ owner }).start();
  const logs: string[] = [];
  try {
    const provider = createNeonProvider(parseNeonSettings(emu.env()), {
      clock: fastClock(),
      log: (m) => logs.push(m),
    });
    try {
      return await fn(provider, emu, logs);
    } finally {
      await provider.close();
    }
  } finally {
    await emu.stop();
  }
}

/** The same credentials on another endpoint (host and port). */
const on = (url: string, other: string) => {
  const u = new URL(url);
  u.host = new URL(other).host;
  return u.toString();
};

describe('neon: a confined role for untrusted code', () => {
  it('is made by an owner that has CREATEROLE but is no superuser, and reaches its own branch only', () =>
    withNeon('createrole', async (p, emu) => {
      await query(await p.connectionUri('main'), 'CREATE TABLE t (x int); INSERT INTO t VALUES (1)');
      await p.create({ name: 'pr-1' });
      await p.create({ name: 'pr-2' });
      const url = await p.confinedUri('pr-1');
      if (url === null) throw new Error('no confined role');
      const role = decodeURIComponent(new URL(url).username);
      expect(role).toMatch(/^consort_br_[a-z0-9_]+$/);
      // What a pull request needs on its branch: its data, and migrating it.
      expect(await attempt(url, 'INSERT INTO t VALUES (2) RETURNING x')).toBe('allowed: [{"x":2}]');
      expect(await attempt(url, 'ALTER TABLE t ADD COLUMN y text')).toBe('allowed: []');
      expect(await attempt(url, 'CREATE TABLE mine (id int)')).toBe('allowed: []');
      expect(
        await attempt(url, 'SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = current_user'),
      ).toBe('allowed: [{"rolsuper":false,"rolcreatedb":false,"rolcreaterole":false}]');
      // Nothing more.
      expect(await attempt(url, 'CREATE DATABASE stolen')).toMatch(/^refused: permission denied/);
      expect(await attempt(url, 'CREATE ROLE stolen LOGIN')).toMatch(/^refused: permission denied/);
      expect(await attempt(url, 'ALTER ROLE CURRENT_USER CREATEDB CREATEROLE')).toMatch(/^refused: permission denied/);
      expect(new URL(await p.connectionUri('main')).username).toBe('neondb_owner'); // the emulator's CREATEROLE role
      const o = emu.dbs.owner!;
      expect(await attempt(url, `SET ROLE "${o}"`)).toMatch(/^refused: permission denied to set role/);
      // Another branch's endpoint does not know it; a wrong password is refused.
      expect(await attempt(on(url, await p.connectionUri('pr-2')), 'SELECT 1')).toMatch(
        /^refused: (permission denied for database|password authentication failed)/,
      );
      const wrong = new URL(url);
      wrong.password = 'not-the-password';
      expect(await attempt(wrong.toString(), 'SELECT 1')).toMatch(/^refused: password authentication failed/);
      // main and pr-2 are untouched.
      expect(await query(await p.connectionUri('main'), 'SELECT count(*)::int AS n FROM t')).toEqual([{ n: 1 }]);
    }));

  it("takes over a forked branch's objects from its parent's role (the suite's copy of a pull request's branch)", () =>
    withNeon('createrole', async (p) => {
      await p.create({ name: 'pr-3' });
      const prUrl = (await p.confinedUri('pr-3'))!;
      expect(await attempt(prUrl, "CREATE TABLE orders (id int); CREATE TYPE mood AS ENUM ('a')")).toMatch(/^allowed/);
      await p.create({ name: 'pr-3-suite', parent: 'pr-3' });
      const suiteUrl = (await p.confinedUri('pr-3-suite'))!;
      expect(new URL(suiteUrl).username).not.toBe(new URL(prUrl).username);
      expect(await attempt(suiteUrl, 'ALTER TABLE orders ADD COLUMN at timestamptz')).toBe('allowed: []');
      expect(await attempt(suiteUrl, "ALTER TYPE mood ADD VALUE 'b'")).toBe('allowed: []');
      expect(await attempt(suiteUrl, 'INSERT INTO orders (id) VALUES (1) RETURNING id')).toBe('allowed: [{"id":1}]');
    }));

  it("gives a prepared branch's seed a role of the staging branch, dropped before the branch is published", () =>
    withNeon('createrole', async (p) => {
      let seedUser = '';
      await p.create({
        name: 'baseline-1',
        prepare: async (url, untrusted) => {
          await query(url, 'CREATE TABLE base (id int)');
          const seedUrl = await untrusted!();
          seedUser = decodeURIComponent(new URL(seedUrl).username);
          await query(
            seedUrl,
            "INSERT INTO base VALUES (1); CREATE FUNCTION f() RETURNS int LANGUAGE sql SECURITY DEFINER AS 'SELECT 1'",
          );
        },
      });
      expect(seedUser).toMatch(/^consort_br_/);
      const published = await p.connectionUri('baseline-1');
      expect(await query(published, 'SELECT 1 AS x FROM pg_roles WHERE rolname = $1', [seedUser])).toEqual([]);
      expect(await query(published, "SELECT prosecdef FROM pg_proc WHERE proname = 'f'")).toEqual([
        { prosecdef: false },
      ]);
      expect(await query(published, 'SELECT id FROM base')).toEqual([{ id: 1 }]);
    }));

  it('is null with an owner that has no CREATEROLE, and the log says why', () =>
    withNeon('createdb', async (p, _emu, logs) => {
      await p.create({ name: 'pr-4' });
      expect(await p.confinedUri('pr-4')).toBeNull();
      expect(logs).toContainEqual(
        expect.stringMatching(/no confined role for "pr-4": .*neither a superuser nor has CREATEROLE/),
      );
    }));

  it('is made by a superuser owner too', () =>
    withNeon('superuser', async (p) => {
      await p.create({ name: 'pr-5' });
      const url = await p.confinedUri('pr-5');
      expect(url).not.toBeNull();
      expect(await attempt(url!, 'CREATE TABLE mine (id int)')).toBe('allowed: []');
      expect(await attempt(url!, 'CREATE ROLE stolen')).toMatch(/^refused: permission denied/);
      // The emulator's superuser made it: drop it here (an owner role's cleanup drops what it made).
      await query(await p.connectionUri('pr-5'), 'DROP OWNED BY ' + new URL(url!).username);
      await query(await p.connectionUri('pr-5'), 'DROP ROLE ' + new URL(url!).username);
    }));
});
