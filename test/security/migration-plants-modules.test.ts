/**
 * A driver's JS migration runs code when a proof applies it, in a process of its own (the
 * migration child) that can write the proof's tree — after the tree was checked clean and before
 * the suite starts. A file it leaves there that the suite loads unbidden (a `node_modules` folder
 * beside the tests, which node searches before the install's; a `conftest.py`) is not the commit.
 * The proof now watches the tree for harness files from before the migrations run, and a
 * `node_modules` made beside the tests counts as one (src/lanes/tdd/made-files.ts). Until
 * 2026-12-05 the watch began only with the suite and took no `node_modules` for harness: the
 * driver's migration below left a `pg` that answered the frozen test's query, and the feature was
 * built with no code that stores a phone number.
 */
import { fileURLToPath } from 'node:url';
import { useShopWithAgent } from '../helpers/shop-agent.js';
import { runNewFeature } from '../helpers/tdd.js';

const AGENT = fileURLToPath(new URL('../fixtures/agents/migration-plants-agent.mjs', import.meta.url));
const shop = useShopWithAgent(AGENT, 'quick');

it("a migration that leaves a module of its own beside the tests in the proof's tree proves no GREEN", async () => {
  const { r, lines } = await runNewFeature(shop.repo.dir, shop.t.provider, 'phones');
  const log = lines.join('\n');
  if (r.stop === 'done') console.log(log);
  // Until 2026-12-05 the lane ran to `done`: GREEN proven, the merge gate passed by proxy.
  expect(r.stop).not.toBe('done');
  expect(log).not.toContain('GREEN proven for T1');
  expect(log).toMatch(/GREEN rejected for T1 \(broken\): .*\(tree-changed\).*\(test\/node_modules\)/);
}, 180_000);
