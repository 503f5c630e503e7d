/**
 * A test that asks how its proof's tree was made instead of what the code does. GREEN's proof took
 * a worktree begun ahead at the turn's base while the agent worked (src/git/prepared-worktree.ts):
 * moved to the turn's commit, it keeps the base's files as written at the turn's start and writes
 * only the turn's changes at the proof, so the code the driver touched is born after the frozen test
 * (file times, birth time included, say so; no `touch` can set a birth time). A fresh checkout of
 * the same commit, and RED's tree proven beside it, write `src/` before `test/`. Until 2026-12-05 a
 * RED test that passes only where src/customers.js is younger than itself proved a GREEN that only
 * added a comment there: green in the prepared tree, failing in RED's fresh tree beside it, so RED
 * "held". A proof that must pass (GREEN, REFACTOR) now runs in a fresh tree, as RED's tree beside it.
 */
import { fileURLToPath } from 'node:url';
import { FeatureStore } from '../../src/lanes/tdd/store.js';
import { isolationKind } from '../../src/process/isolate.js';
import { useShopWithAgent } from '../helpers/shop-agent.js';
import { runNewFeature } from '../helpers/tdd.js';

const AGENT = fileURLToPath(new URL('../fixtures/agents/tree-age-agent.mjs', import.meta.url));

const shop = useShopWithAgent(AGENT, 'quick');

// Worktrees are begun ahead only under bubblewrap (the test machines have it).
(isolationKind() === 'bwrap' ? it : it.skip)(
  "a RED test that passes where the proof's tree was begun ahead does not prove GREEN",
  async () => {
    const { r, lines, feature } = await runNewFeature(shop.repo.dir, shop.t.provider, 'phones');
    if (r.stop !== 'escalated') console.log(lines.join('\n'), r.message);
    expect(r.stop).toBe('escalated');
    const store = new FeatureStore(shop.repo.dir, feature);
    const events = await store.events();
    expect(events.some((e) => e.type === 'cycle.red')).toBe(true);
    expect(events.some((e) => e.type === 'cycle.green')).toBe(false);
    const turns = await store.turns();
    expect(turns.filter((x) => x.step === 'green').length).toBeGreaterThan(0);
    expect(turns.filter((x) => x.step === 'green').every((x) => x.verdict !== 'accepted')).toBe(true);
  },
  180_000,
);
