/**
 * Competing GREEN attempts (`--experiments`) run side by side: each attempt's agent works in a
 * worktree of its own, and each attempt is proven as soon as its own turn ends, in a fresh tree next
 * to the repository. A proof's tree is covered only for isolated commands started after it was
 * made (src/process/isolate.ts), so an attempt whose agent was still at work — started before the
 * other attempt's tree existed — could write in it: until 2026-12-05 attempt 1's agent planted a
 * `pg` of its own in `test/node_modules/` of attempt 2's proof tree before the proof watched it, and
 * attempt 2, which implements nothing, was proven GREEN. No attempt's proof now starts before every
 * attempt's turn has ended, and no attempt's suite before every attempt's tree is made and covered
 * (src/lanes/tdd/experiments.ts). Under bubblewrap (without it nothing is covered: docs/security.md).
 */
import { fileURLToPath } from 'node:url';
import { useShopWithAgent } from '../helpers/shop-agent.js';
import { runNewFeature } from '../helpers/tdd.js';

const AGENT = fileURLToPath(new URL('../fixtures/agents/attempt-planter-agent.mjs', import.meta.url));
const shop = useShopWithAgent(AGENT, 'quick');

it("an attempt's agent still at work cannot plant a module in another attempt's proof tree", async () => {
  const { r, lines } = await runNewFeature(shop.repo.dir, shop.t.provider, 'phones', { experiments: 2 });
  const log = lines.join('\n');
  if (log.includes('GREEN proven for T1')) console.log(log);
  // Until 2026-12-05 attempt 2 was proven GREEN with the planted `pg`, and the lane ran to `done`.
  expect(log).not.toContain('GREEN proven for T1');
  expect(log).toMatch(
    /GREEN rejected for T1 \(no-green-experiment\): experiment 1: 1 test fails.*; experiment 2: 1 test fails/,
  );
  expect(r.stop).not.toBe('done');
}, 240_000);
