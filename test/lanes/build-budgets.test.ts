/**
 * The TDD lane's run budgets and per-turn hook, as the Action uses them: a cost cap and a wall-clock
 * deadline checked before each turn, credentials of the agents' environment redacted from every
 * transcript, and `onTurn` called once per settled turn with the records already committed.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.js';
import type { TurnRecord } from '../../src/conductor/state.js';
import { runBuildLane } from '../../src/lanes/tdd/index.js';
import { createFeature } from '../../src/lanes/tdd/feature.js';
import { FeatureStore } from '../../src/lanes/tdd/store.js';
import { useShopWithAgent } from '../helpers/shop-agent.js';
import { tddAdapters, workspaceAt } from '../helpers/tdd.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
const AGENT = fileURLToPath(new URL('../fixtures/agents/pr-agent.mjs', import.meta.url));
const KEY = 'sk-ant-api03-budget-test-key-0123456789';

const shop = useShopWithAgent(AGENT);

describe('run budgets', () => {
  it("stops at the time limit before any turn, then at the cost limit, redacting the agents' key", async () => {
    const { config } = await loadConfig(shop.repo.dir);
    const { feature } = await createFeature(await workspaceAt(shop.repo.dir), 'phones', 'Phone numbers.');
    const base = {
      workspace: await workspaceAt(shop.repo.dir),
      ...tddAdapters,
      config,
      feature,
      provider: shop.t.provider,
      env: { ...process.env },
      agentEnv: { ...process.env, ANTHROPIC_API_KEY: KEY },
    };

    const late = await runBuildLane({ ...base, deadline: Date.now() - 1 });
    expect(late).toMatchObject({ stop: 'time-limit', turns: 0, costUsd: 0 });

    const seen: { turn: TurnRecord; commit: string | null; head: string; headNow: string }[] = [];
    const r = await runBuildLane({
      ...base,
      maxCostUsd: 0.02,
      onTurn: async (turn, commits) => {
        seen.push({
          turn,
          ...commits,
          headNow: (await exec('git', ['rev-parse', 'HEAD'], { cwd: shop.repo.dir })).stdout.trim(),
        });
      },
    });
    // 0.0125 per turn: the second turn crosses the limit, so no third starts.
    expect(r).toMatchObject({ stop: 'max-cost', turns: 2, costUsd: 0.025 });
    expect(r.message).toBe('stopped after 2 turns, which cost $0.0250: the limit is $0.02 (max-cost-usd)');
    expect(seen.map((s) => `${s.turn.role} ${s.turn.verdict}`)).toEqual([
      'spec-author refused',
      'spec-author accepted',
    ]);
    expect(seen[0]!.commit).toBeNull(); // refused and reverted
    expect(seen[1]!.commit).toMatch(/^[0-9a-f]{40}$/);
    for (const s of seen) expect(s.head).toBe(s.headNow);
    const subject = (
      await exec('git', ['log', '-1', '--format=%s', seen[1]!.commit!], { cwd: shop.repo.dir })
    ).stdout.trim();
    expect(subject).toBe(`consort(spec-author): spec ${feature}`);
    const transcript = await readFile(
      new FeatureStore(shop.repo.dir, feature).file('transcripts/turn-0001.txt'),
      'utf8',
    );
    expect(transcript).toContain('my key is ****');
    expect(transcript).not.toContain(KEY);

    // The stopped run resumes only on a clean tree: a person's edit made since is refused, never
    // taken for the next agent's change and reverted (it was, until 2026-12-03).
    await writeFile(path.join(shop.repo.dir, 'README.md'), 'my own notes\n', { flag: 'a' });
    await expect(runBuildLane({ ...base })).rejects.toThrow(/uncommitted changes outside .*README\.md/);
    expect(await readFile(path.join(shop.repo.dir, 'README.md'), 'utf8')).toMatch(/my own notes\n$/);
  }, 180_000);
});
