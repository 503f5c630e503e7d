/** The example shop as a throwaway git repository whose agents are a scripted `command` backend. */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { scenarioRepo, type ScenarioRepo } from '../../src/demo/scenarios.js';
import { localTestProvider, type TestProvider } from './servers.js';

/**
 * Which of the shop's own test files come along. `full`: all three, the real suite a user of the
 * shop runs. `lean`: only `customers.test.js` (the module the scripted features change), for the
 * driver tests that prove every turn: still the shop's real jest suite on a real branch, so RED
 * fails by an assertion, GREEN passes and a regression in `customers.js` fails the proof, without
 * the orders and concurrency files (about two thirds of the shop's test-file time) in every proof.
 * Exactly one end-to-end test (test/agents/openai-build.test.ts) keeps the full suite.
 */
export type ShopSuite = 'full' | 'lean';
const LEFT_OUT: Record<ShopSuite, string[]> = { full: [], lean: ['test/orders.test.js', 'test/concurrency.test.js'] };

/** The shop's .github/consort.yml with `agents.default` running `node <agent> [args]`, plus any extra YAML. */
export async function shopConfigWithAgent(agent: string, extra = ''): Promise<string> {
  const shopConfig = await readFile(
    fileURLToPath(new URL('../../examples/shop/.github/consort.yml', import.meta.url)),
    'utf8',
  );
  return `${shopConfig}agents:\n  default:\n    backend: command\n    command: node ${agent}\n${extra}`;
}

export async function shopRepoWithAgent(agent: string, extra = '', suite: ShopSuite = 'full'): Promise<ScenarioRepo> {
  return scenarioRepo(null, {
    baseFiles: [{ file: '.github/consort.yml', content: await shopConfigWithAgent(agent, extra) }],
    leaveOut: LEFT_OUT[suite],
  });
}

/** Registers beforeAll/afterAll for a suite on the shop with this agent and a local provider; read the fields in tests. */
export function useShopWithAgent(agent: string, suite: ShopSuite = 'full'): { t: TestProvider; repo: ScenarioRepo } {
  const ctx = {} as { t: TestProvider; repo: ScenarioRepo };
  beforeAll(async () => {
    ctx.t = await localTestProvider();
    ctx.repo = await shopRepoWithAgent(agent, '', suite);
  }, 120_000);
  afterAll(async () => {
    await ctx.repo?.dispose();
    await ctx.t?.cleanup();
  });
  return ctx;
}
