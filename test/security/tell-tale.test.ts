/**
 * A test that asks which proof it is in instead of what the code does: the commit's message, the
 * step Consort's committed records name, its database's name. Until 2026-12-05 a proof's suite
 * could read all three — the proof tree was a git worktree with the repository's history and the
 * feature's records, and a proof's branch was named after its purpose (`…-green-2`) — so a RED test
 * that passes only where they say GREEN proved a GREEN that implements nothing, and RED's tree
 * proven beside it (whose message says `red`, whose branch is another) did not catch it. Now the
 * suite sees no history and no records (under bubblewrap) and its database's name says nothing.
 */
import { fileURLToPath } from 'node:url';
import { FeatureStore } from '../../src/lanes/tdd/store.js';
import { isolationKind } from '../../src/process/isolate.js';
import { useShopWithAgent } from '../helpers/shop-agent.js';
import { runNewFeature } from '../helpers/tdd.js';

const AGENT = fileURLToPath(new URL('../fixtures/agents/tell-tale-agent.mjs', import.meta.url));

const shop = useShopWithAgent(AGENT, 'quick');

// The history and the records are hidden where bubblewrap can bind (the test machines have it).
(isolationKind() === 'bwrap' ? it : it.skip)(
  'a RED test that passes where the history, the records or the branch name say GREEN does not prove GREEN',
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
    // No branch of the run is left under a name that says what it proved.
    expect((await shop.t.provider.list()).map((b) => b.name).filter((n) => /-(red|green|refactor)-\d/.test(n))).toEqual(
      [],
    );
  },
  180_000,
);
