/**
 * Competing GREEN attempts end to end on the example shop: three driver turns side by side, each
 * in its own git worktree with its own database branches, each proven with the shop's (lean) jest suite; the
 * green one with the fewest changed lines is adopted, the one that weakened the test is refused.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.js';
import { runBuildLane } from '../../src/lanes/tdd/index.js';
import { createFeature } from '../../src/lanes/tdd/feature.js';
import { FeatureStore } from '../../src/lanes/tdd/store.js';
import { useShopWithAgent } from '../helpers/shop-agent.js';
import { tddAdapters, workspaceAt } from '../helpers/tdd.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
const AGENT = fileURLToPath(new URL('../fixtures/agents/experiment-agent.mjs', import.meta.url));

const shop = useShopWithAgent(AGENT, 'lean');

it('adopts the smallest green attempt and refuses the one that touched a test', async () => {
  const { config } = await loadConfig(shop.repo.dir);
  const { feature } = await createFeature(await workspaceAt(shop.repo.dir), 'phones', 'Phone numbers.');
  const lines: string[] = [];
  const r = await runBuildLane({
    workspace: await workspaceAt(shop.repo.dir),
    ...tddAdapters,
    config,
    feature,
    provider: shop.t.provider,
    env: process.env,
    gateMode: 'proxy',
    experiments: 3,
    log: (l) => lines.push(l),
  });
  if (r.stop !== 'done') console.log(lines.join('\n'), r.message);
  expect(r).toMatchObject({ stop: 'done', state: { phase: 'done' } });

  const store = new FeatureStore(shop.repo.dir, feature);
  const green = (await store.turns()).filter((x) => x.step === 'green');
  expect(green.map((x) => [x.id, x.verdict])).toEqual([
    ['turn-0006', 'rejected'],
    ['turn-0007', 'accepted'],
    ['turn-0008', 'refused'],
  ]);
  expect(green[0]!.reason).toMatch(/not picked \(fewest changed lines.*\): \d+ changed lines vs \d+/);
  expect(green[2]!.refused).toEqual(['test/phones.test.js']);
  const events = await store.events();
  expect(events.find((e) => e.type === 'cycle.experiments')).toMatchObject({
    item: 'T1',
    of: 3,
    green: [1, 2],
    picked: 2,
  });

  // The workspace holds exactly the minimal attempt, committed as the driver's GREEN.
  const source = await readFile(path.join(shop.repo.dir, 'src/customers.js'), 'utf8');
  expect(source).toContain('[id, String(phone).trim()]');
  expect(source).not.toContain('normalizePhone');
  expect(existsSync(path.join(shop.repo.dir, 'migrations/1730000400000_add_customer_phone.sql'))).toBe(true);
  const log = (await exec('git', ['log', '--format=%s'], { cwd: shop.repo.dir })).stdout;
  expect(log).toContain(`consort(driver): green ${feature}/T1 (experiment 2 of 3)`);
  const changed = (
    await exec(
      'git',
      [
        'show',
        '--name-only',
        '--format=',
        `HEAD~${log.split('\n').findIndex((l) => l.includes('(experiment 2 of 3)'))}`,
      ],
      { cwd: shop.repo.dir },
    )
  ).stdout
    .trim()
    .split('\n');
  expect(changed.sort()).toEqual(['migrations/1730000400000_add_customer_phone.sql', 'src/customers.js']);

  // Nothing left behind: no worktree, no sibling folder, no branch but the baseline.
  expect(
    (await exec('git', ['worktree', 'list', '--porcelain'], { cwd: shop.repo.dir })).stdout.match(/^worktree /gm),
  ).toHaveLength(1);
  for (const id of ['turn-0006', 'turn-0007', 'turn-0008'])
    expect(existsSync(`${shop.repo.dir}-consort-${id}`)).toBe(false);
  expect(
    (await shop.t.provider.list()).map((b) => b.name).filter((n) => n !== 'main' && !n.startsWith('baseline-')),
  ).toEqual([]);
}, 180_000);
