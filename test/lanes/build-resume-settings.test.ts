/**
 * A run that stopped between turns leaves its next action planned under its own settings; the next
 * `consort run` with other settings takes those, and says so, rather than silently resuming the
 * old plan (until 2026-12-03, `--experiments` on the resumed run was ignored and `--dry-run`
 * showed the stopped run's competing attempts).
 */
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.js';
import { planBuildRun, runBuildLane } from '../../src/lanes/tdd/index.js';
import { createFeature } from '../../src/lanes/tdd/feature.js';
import { FeatureStore } from '../../src/lanes/tdd/store.js';
import { useShopWithAgent } from '../helpers/shop-agent.js';
import { tddAdapters, workspaceAt } from '../helpers/tdd.js';

const AGENT = fileURLToPath(new URL('../fixtures/agents/experiment-agent.mjs', import.meta.url));

const shop = useShopWithAgent(AGENT, 'quick');

it("a resumed run takes this run's --experiments, and its dry run shows it", async () => {
  const { config } = await loadConfig(shop.repo.dir);
  const { feature } = await createFeature(await workspaceAt(shop.repo.dir), 'phones', 'Phone numbers.');
  const workspace = await workspaceAt(shop.repo.dir);
  const base = {
    workspace,
    ...tddAdapters,
    config,
    feature,
    provider: shop.t.provider,
    env: process.env,
    gateMode: 'proxy' as const,
  };
  // Four design turns and RED: the run stops with three competing GREEN attempts asked for.
  const first = await runBuildLane({ ...base, experiments: 3, maxTurns: 5 });
  expect(first).toMatchObject({ stop: 'max-turns', turns: 5, state: { step: 'green' } });

  const same = await planBuildRun({ ...base, experiments: 3 });
  expect(same.settings).toBeNull();
  expect(same.effects.map((e) => e.type)).toEqual(['run-experiments']);

  const fewer = await planBuildRun({ ...base, experiments: 1 });
  expect(fewer.settings).toBe(
    `${feature}: this run's settings differ from those the last run stopped under (experiments (--experiments, build.experiments): 3 → 1), so the step starts afresh under this run's.`,
  );
  expect(fewer.effects.filter((e) => e.type === 'run-turn' || e.type === 'run-experiments')).toEqual([
    expect.objectContaining({ type: 'run-turn', turn: expect.objectContaining({ role: 'driver', step: 'green' }) }),
  ]);

  const lines: string[] = [];
  const second = await runBuildLane({ ...base, experiments: 1, maxTurns: 1, log: (l) => lines.push(l) });
  expect(second).toMatchObject({ stop: 'max-turns', turns: 1 });
  expect(lines).toContain(fewer.settings);
  // One GREEN turn, not three: without an experiment number the scripted driver weakens the test.
  const green = (await new FeatureStore(shop.repo.dir, feature).turns()).filter((t) => t.step === 'green');
  expect(green).toEqual([expect.objectContaining({ role: 'driver', verdict: 'refused' })]);
}, 180_000);
