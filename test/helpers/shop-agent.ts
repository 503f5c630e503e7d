/** The example shop as a throwaway git repository whose agents are a scripted `command` backend. */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { scenarioRepo, type ScenarioRepo } from '../../src/demo/scenarios.js';
import { localTestProvider, type TestProvider } from './servers.js';

/**
 * Which of the shop's own test files come along, and what runs them. `full`: all three under jest,
 * the real suite a user of the shop runs. `lean`: only `customers.test.js` (the module the scripted
 * features change) under jest, without the orders and concurrency files (about two thirds of the
 * shop's test-file time). `quick`: the lean files under test/fixtures/quick-suite/run.mjs instead
 * of jest: the same test files, jest's own `expect`, the same branch database and the shop's own
 * JUnit reporter, at the cost of a plain node start instead of a jest start (seconds of CPU) per
 * proof: for the driver tests whose subject is the conductor, which prove every turn. RED still
 * fails by a real assertion, GREEN passes and a regression in `customers.js` fails the proof.
 * Exactly one end-to-end test (test/agents/openai-build.test.ts) keeps jest on the full suite.
 */
export type ShopSuite = 'full' | 'lean' | 'quick';
const LEAN = ['test/orders.test.js', 'test/concurrency.test.js'];
const LEFT_OUT: Record<ShopSuite, string[]> = { full: [], lean: LEAN, quick: LEAN };
const QUICK_SUITE = fileURLToPath(new URL('../fixtures/quick-suite/run.mjs', import.meta.url));
/** The shop's suite command (jest), as examples/shop/.github/consort.yml spells it. */
const JEST_COMMAND = /^( {2}command: )node --experimental-vm-modules test\/run-jest\.js --ci$/m;

/** The shop's .github/consort.yml with `agents.default` running `node <agent> [args]`, plus any extra YAML. */
export async function shopConfigWithAgent(agent: string, extra = ''): Promise<string> {
  const shopConfig = await readFile(
    fileURLToPath(new URL('../../examples/shop/.github/consort.yml', import.meta.url)),
    'utf8',
  );
  return `${shopConfig}agents:\n  default:\n    backend: command\n    command: node ${agent}\n${extra}`;
}

export async function shopRepoWithAgent(agent: string, extra = '', suite: ShopSuite = 'full'): Promise<ScenarioRepo> {
  let config = await shopConfigWithAgent(agent, extra);
  if (suite === 'quick') {
    if (!JEST_COMMAND.test(config)) throw new Error("shopRepoWithAgent: the shop's suite command is not the jest one");
    config = config.replace(JEST_COMMAND, `$1node ${QUICK_SUITE}`);
  }
  return scenarioRepo(null, {
    baseFiles: [{ file: '.github/consort.yml', content: config }],
    leaveOut: LEFT_OUT[suite],
  });
}

/**
 * Registers beforeAll/afterAll for a suite on the shop with this agent and a local provider; read the
 * fields in tests. With `markers` (a name for the folder), the agent is started with
 * `<that folder>/armed` as its argument: a folder of its own for what it leaves between runs (a
 * time bomb's marker), removed with the rest.
 */
export function useShopWithAgent(
  agent: string,
  suite: ShopSuite = 'full',
  options: { markers?: string } = {},
): { t: TestProvider; repo: ScenarioRepo; markers: string } {
  const ctx = {} as { t: TestProvider; repo: ScenarioRepo; markers: string };
  beforeAll(async () => {
    ctx.t = await localTestProvider();
    if (options.markers !== undefined)
      ctx.markers = await mkdtemp(path.join(os.tmpdir(), `consort-${options.markers}-`));
    const command = options.markers === undefined ? agent : `${agent} ${path.join(ctx.markers, 'armed')}`;
    ctx.repo = await shopRepoWithAgent(command, '', suite);
  }, 120_000);
  afterAll(async () => {
    await ctx.repo?.dispose();
    if (ctx.markers) await rm(ctx.markers, { recursive: true, force: true });
    await ctx.t?.cleanup();
  });
  return ctx;
}
