/**
 * Git's system attributes file. The conductor's git ignores the system configuration
 * (`GIT_CONFIG_NOSYSTEM`), but until 2026-12-05 it still read `/etc/gitattributes`, which no turn
 * guard compares and which an agent that runs as root writes under bubblewrap too (`/` is shared;
 * dropping every capability does not stop the owner of a file). A proof checks the turn's commit out
 * with git: a rule there (`ident`, `eol`, `working-tree-encoding` need no configuration) changes a
 * file of the driver's between its blob and the proof's tree. Here the committed
 * `src/phone-stamp.js` returns nothing unless its `$Id$` stamp was expanded: checked out anywhere
 * else it implements nothing, while the proof's tree, read through `src/phone-stamp.js ident`,
 * trimmed the phone number and GREEN was proven. RED's tree beside it has no such file, so RED
 * "held". The conductor's git now reads no system attributes (`GIT_ATTR_NOSYSTEM`, src/git/safe.ts).
 *
 * The attack needs root (the file is root's; the test's agent appends one rule and the test removes
 * it): as another user the agent cannot write the rule, and the same run checks only that GREEN
 * with nothing implemented is refused.
 */
import { existsSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gitEnv } from '../../src/git/safe.js';
import { FeatureStore } from '../../src/lanes/tdd/store.js';
import { useShopWithAgent } from '../helpers/shop-agent.js';
import { runNewFeature } from '../helpers/tdd.js';

const AGENT = fileURLToPath(new URL('../fixtures/agents/system-attributes-agent.mjs', import.meta.url));
const SYSTEM_ATTRIBUTES = '/etc/gitattributes';
const RULE = 'src/phone-stamp.js ident';

const asRoot = process.getuid?.() === 0;
const shop = useShopWithAgent(AGENT, 'quick');

let existed = true;
beforeAll(() => {
  existed = existsSync(SYSTEM_ATTRIBUTES);
});
afterAll(() => {
  if (!existsSync(SYSTEM_ATTRIBUTES)) return;
  const left = readFileSync(SYSTEM_ATTRIBUTES, 'utf8')
    .split('\n')
    .filter((line) => line !== RULE)
    .join('\n');
  if (!existed && left.trim() === '') unlinkSync(SYSTEM_ATTRIBUTES);
  else writeFileSync(SYSTEM_ATTRIBUTES, left);
});

it("every git call of the conductor's reads neither system file", () => {
  expect(gitEnv()).toMatchObject({ GIT_CONFIG_NOSYSTEM: '1', GIT_ATTR_NOSYSTEM: '1' });
});

it("a rule in git's system attributes file does not make the proof's tree differ from the commit", async () => {
  const { r, lines, feature } = await runNewFeature(shop.repo.dir, shop.t.provider, 'phones');
  if (r.stop !== 'escalated') console.log(lines.join('\n'), r.message);
  // As root the agent did write the rule: what stops it is the conductor's git not reading it.
  if (asRoot) expect(readFileSync(SYSTEM_ATTRIBUTES, 'utf8').split('\n')).toContain(RULE);
  expect(r.stop).toBe('escalated');
  const store = new FeatureStore(shop.repo.dir, feature);
  const events = await store.events();
  expect(events.some((e) => e.type === 'cycle.red')).toBe(true);
  expect(events.some((e) => e.type === 'cycle.green')).toBe(false);
  const green = (await store.turns()).filter((x) => x.step === 'green');
  expect(green.length).toBeGreaterThan(0);
  expect(green.every((x) => x.verdict !== 'accepted')).toBe(true);
}, 180_000);
