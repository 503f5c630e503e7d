/**
 * quoteLiteral on a real server (the system PostgreSQL, or the run's stand-in for it): a value
 * comes back byte for byte whatever `standard_conforming_strings` is. With it off (a setting a
 * project's database may carry, and branches copy), a backslash in a plain '…' literal is an
 * escape: `'a\'` would swallow its closing quote.
 */
import { quoteLiteral } from '../../src/db/sql.js';
import { asUser, SYSTEM_PG_URL } from '../helpers/servers.js';

const VALUES = ['plain', "it's", 'C:\\path\\to', 'ends with \\', "\\' OR 1=1 --", 'tab\\tnot a tab', '\\\\', ''];

it.each(['on', 'off'])('reads back every value with standard_conforming_strings %s', async (setting) => {
  await asUser(SYSTEM_PG_URL, async (c) => {
    await c.query(`SET standard_conforming_strings = ${setting}`);
    await c.query('SET escape_string_warning = off');
    for (const value of VALUES) {
      const { rows } = await c.query<{ v: string }>(`SELECT ${quoteLiteral(value)}::text AS v`);
      expect(rows[0]?.v).toBe(value);
    }
  });
});

it('refuses a NUL byte, which PostgreSQL text cannot hold', () => {
  expect(() => quoteLiteral('a\u0000b')).toThrow('NUL');
});
