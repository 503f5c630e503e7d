/**
 * A migration that rewrites the seed's rows: the navigator's RED test reads the seeded first
 * customer's phone, and the driver's GREEN adds the column and UPDATEs that row to the expected
 * value in the same migration. No code stores a phone, yet the proof — the seeded baseline forked,
 * the migration applied — is green, and a deploy's customers get one made-up number. Whether a
 * data change in a migration is the deploy's or the tests' cannot be told from the SQL, so it is
 * flagged on the merge gate for the person approving, and proxy mode does not pass a flagged gate.
 * Until 2026-12-05 the lane ran to `done` in proxy mode.
 */
import { fileURLToPath } from 'node:url';
import { lineFlag, testEnvironmentFlags } from '../../src/lanes/tdd/test-env-flags.js';
import { useShopWithAgent } from '../helpers/shop-agent.js';
import { runNewFeature, workspaceAt } from '../helpers/tdd.js';

const AGENT = fileURLToPath(new URL('../fixtures/agents/seeded-rows-agent.mjs', import.meta.url));
const shop = useShopWithAgent(AGENT, 'quick');

it('a migration that UPDATEs the seeded rows a frozen test reads is flagged; proxy mode stops at the merge gate', async () => {
  const base = await (await workspaceAt(shop.repo.dir)).head();
  const { r, lines } = await runNewFeature(shop.repo.dir, shop.t.provider, 'phones');
  if (r.stop !== 'awaiting-approval') console.log(lines.join('\n'));
  expect(r).toMatchObject({ stop: 'awaiting-approval', message: 'waiting for a human to approve the merge gate' });
  expect(lines.join('\n')).toContain('GREEN proven for T1');
  expect(await testEnvironmentFlags(await workspaceAt(shop.repo.dir), base)).toEqual([
    expect.stringMatching(
      /^migrations\/1730000400000_add_customer_phone\.sql:3 changes rows in a migration .*: UPDATE customers SET phone/,
    ),
  ]);
}, 180_000);

it.each([
  ['flags', "UPDATE customers SET phone = '1' WHERE id = 1;", true],
  ['flags', 'UPDATE ONLY customers', true],
  ['flags', "INSERT INTO customers (email) VALUES ('a@b');", true],
  ['flags', 'DELETE FROM orders;', true],
  ['flags', 'TRUNCATE customers;', true],
  ['flags', "pgm.sql(`UPDATE customers SET phone = '1'`);", true],
  ['does not flag', 'ALTER TABLE orders ADD FOREIGN KEY (c) REFERENCES customers ON UPDATE CASCADE', false],
  ['does not flag', 'CREATE TRIGGER t BEFORE UPDATE ON customers FOR EACH ROW EXECUTE FUNCTION f();', false],
  ['does not flag', 'GRANT SELECT, UPDATE ON customers TO app;', false],
  ['does not flag', 'SELECT * FROM customers FOR UPDATE;', false],
])('%s %s', (_what, line, flagged) => {
  expect(lineFlag('migrations/1730000500000_x.sql', line)?.startsWith('changes rows') ?? false).toBe(flagged);
  expect(lineFlag('src/customers.js', line)).toBeNull();
});
