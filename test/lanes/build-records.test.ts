/**
 * The conductor's records are not committed before each turn (they join the turn's commit), so
 * while an agent works some of them exist only in the work tree. Any change an agent makes to them —
 * a forged line, an emptied log, a deleted transcript no commit ever held — is its change: refused,
 * and every record put back as the conductor wrote it.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.js';
import { runBuildLane } from '../../src/lanes/tdd/index.js';
import { createFeature } from '../../src/lanes/tdd/feature.js';
import { FeatureStore } from '../../src/lanes/tdd/store.js';
import { useShopWithAgent } from '../helpers/shop-agent.js';
import { tddAdapters, workspaceAt } from '../helpers/tdd.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
const AGENT = fileURLToPath(new URL('../fixtures/agents/records-agent.mjs', import.meta.url));
const shop = useShopWithAgent(AGENT, 'quick');

it("refuses an agent's change to the records not yet committed, and puts them back as written", async () => {
  const { config } = await loadConfig(shop.repo.dir);
  const ws = await workspaceAt(shop.repo.dir);
  const { feature } = await createFeature(ws, 'phones', 'Phone numbers.');
  const store = new FeatureStore(shop.repo.dir, feature);
  const r = await runBuildLane({
    workspace: ws,
    ...tddAdapters,
    config,
    feature,
    provider: shop.t.provider,
    env: { ...process.env },
  });
  expect(r.stop).toBe('escalated');
  const turns = await store.turns();
  expect(turns.map((t) => `${t.id} ${t.role} ${t.verdict}`)).toEqual([
    'turn-0001 spec-author accepted',
    'turn-0002 architect-reviewer refused',
    'turn-0003 architect-reviewer refused',
  ]);
  const dir = `.consort/features/${feature}`;
  expect(turns[1]!.refused).toEqual(expect.arrayContaining([`${dir}/events.jsonl`, `${dir}/turns.jsonl`]));
  expect(turns[2]!.refused).toContain(`${dir}/transcripts/turn-0002.txt`);
  // Put back as written: no forged line, the log whole, the deleted transcript there again.
  const text = await readFile(store.file('turns.jsonl'), 'utf8');
  expect(text).not.toContain('forged');
  expect(text.trim().split('\n')).toHaveLength(3);
  const events = await store.events();
  expect(events.some((e) => e.type === 'turn.usage' && e.turn === 'turn-0001')).toBe(true);
  expect(await readFile(store.file('transcripts/turn-0002.txt'), 'utf8')).toContain('records-agent');
  // One commit per accepted turn, holding the agent's work and the conductor's records: the
  // architect's refused turns left nothing but their records (committed at the end of the run).
  const log = (await exec('git', ['log', '--format=%s', '--name-only'], { cwd: shop.repo.dir })).stdout;
  expect(log).not.toContain('architecture.json');
  expect(log).toContain(`consort(spec-author): spec ${feature}`);
  expect((await exec('git', ['status', '--porcelain'], { cwd: shop.repo.dir })).stdout).toBe('');
}, 180_000);
