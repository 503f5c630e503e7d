/**
 * RED's tree is proven again beside GREEN, at the same moment, so that a test whose verdict the
 * code does not decide (a time bomb) is caught: it must fail there too. The two suites run side by
 * side, each in a tree of its own next to the repository — and until 2026-12-05 each could see the
 * other's: code GREEN's suite ran (the driver's, imported by an older test) waited for the report
 * RED's tree wrote and rewrote it with the item's test failing, and the feature was built with no
 * implementation. Each proof's tree is now covered for every other isolated command while it is
 * proven (src/process/isolate.ts), and neither suite of the pair starts before both trees are made
 * and covered (src/lanes/tdd/execute.ts, proveBeside). Under bubblewrap.
 */
import { fileURLToPath } from 'node:url';
import { useShopWithAgent } from '../helpers/shop-agent.js';
import { runNewFeature } from '../helpers/tdd.js';

const AGENT = fileURLToPath(new URL('../fixtures/agents/report-forger-agent.mjs', import.meta.url));

const shop = useShopWithAgent(AGENT, 'quick', { markers: 'forged-report' });

it("GREEN's suite cannot rewrite the report of RED's tree proven beside it", async () => {
  const { r, lines } = await runNewFeature(shop.repo.dir, shop.t.provider, 'phones');
  const log = lines.join('\n');
  if (r.stop === 'done') console.log(log);
  expect(r.stop).not.toBe('done');
  expect(log).not.toContain('GREEN proven for T1');
  expect(log).toMatch(/GREEN rejected for T1 \(red-not-held\)/);
}, 180_000);
