/** The example shop as a throwaway git repository whose agents are a scripted `command` backend. */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { scenarioRepo, type ScenarioRepo } from '../../src/demo/scenarios.js';
import { localTestProvider, type TestProvider } from './servers.js';

/** The shop's .github/consort.yml with `agents.default` running `node <agent> [args]`, plus any extra YAML. */
export async function shopConfigWithAgent(agent: string, extra = ''): Promise<string> {
  const shopConfig = await readFile(fileURLToPath(new URL('../../examples/shop/.github/consort.yml', import.meta.url)), 'utf8');
  return `${shopConfig}agents:\n  default:\n    backend: command\n    command: node ${agent}\n${extra}`;
}

export async function shopRepoWithAgent(agent: string, extra = ''): Promise<ScenarioRepo> {
  return scenarioRepo(null, { baseFiles: [{ file: '.github/consort.yml', content: await shopConfigWithAgent(agent, extra) }] });
}

/** Registers beforeAll/afterAll for a suite on the shop with this agent and a local provider; read the fields in tests. */
export function useShopWithAgent(agent: string): { t: TestProvider; repo: ScenarioRepo } {
  const ctx = {} as { t: TestProvider; repo: ScenarioRepo };
  beforeAll(async () => {
    ctx.t = await localTestProvider();
    ctx.repo = await shopRepoWithAgent(agent);
  }, 120_000);
  afterAll(async () => {
    await ctx.repo?.dispose();
    await ctx.t?.cleanup();
  });
  return ctx;
}
