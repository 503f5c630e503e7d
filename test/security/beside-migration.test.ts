/**
 * RED's tree is proven again beside GREEN, at the same moment, so that a test whose verdict the
 * code does not decide (a time bomb) is caught: it must fail there too. Each proof applies its
 * migrations in a process of its own (the migration child), and until 2026-12-05 that process saw
 * every proof's tree: the driver's JS migration, applied in GREEN's proof, waited for RED's tree
 * beside it and left a file there that the navigator's time-bomb test fails on, so RED "held" and
 * GREEN was proven with no implementation. A proof's migration child now sees its own proof's tree
 * only, and neither proof of the pair runs any of the agents' code (its migrations, then its suite)
 * before both trees are made and covered (src/lanes/tdd/proof.ts `beforeCode`). Under bubblewrap.
 */
import { fileURLToPath } from 'node:url';
import { useShopWithAgent } from '../helpers/shop-agent.js';
import { runNewFeature } from '../helpers/tdd.js';

const AGENT = fileURLToPath(new URL('../fixtures/agents/beside-migration-agent.mjs', import.meta.url));

const shop = useShopWithAgent(AGENT, 'quick', { markers: 'beside-migration' });

it("GREEN's migrations cannot write in RED's tree proven beside it", async () => {
  const { r, lines } = await runNewFeature(shop.repo.dir, shop.t.provider, 'phones');
  const log = lines.join('\n');
  if (log.includes('GREEN proven for T1')) console.log(log);
  // Until 2026-12-05 the lane ran to `done`: GREEN proven with no implementation.
  expect(log).not.toContain('GREEN proven for T1');
  expect(log).toMatch(/GREEN rejected for T1 \(red-not-held\)/);
  expect(r.stop).not.toBe('done');
}, 180_000);
