/**
 * Live tests against the real services: not part of `npm test` (jest.config.js leaves this file
 * out unless CONSORT_LIVE_TESTS=1, which also lifts the no-network guard of
 * test/setup/no-network.ts for the run). `npm run test:live` runs every provider whose credentials
 * are in the environment, and fails when none are:
 *
 *   DATABRICKS_HOST=… DATABRICKS_TOKEN=… CONSORT_LAKEBASE_PROJECT=… npm run test:live
 *   NEON_API_KEY=… NEON_PROJECT_ID=… npm run test:live
 */
import { randomBytes } from 'node:crypto';
import { openProvider } from '../../src/branches/factory.js';
import type { ProviderName } from '../../src/ports/branch-provider.js';
import { query } from '../helpers/servers.js';

const env = process.env;
const live = env.CONSORT_LIVE_TESTS === '1';
const targets: { provider: ProviderName; needs: string[]; present: boolean }[] = [
  {
    provider: 'lakebase',
    needs: [
      'DATABRICKS_HOST',
      'DATABRICKS_TOKEN or DATABRICKS_CLIENT_ID+DATABRICKS_CLIENT_SECRET',
      'CONSORT_LAKEBASE_PROJECT',
    ],
    present: Boolean(
      env.DATABRICKS_HOST &&
      env.CONSORT_LAKEBASE_PROJECT &&
      (env.DATABRICKS_TOKEN || (env.DATABRICKS_CLIENT_ID && env.DATABRICKS_CLIENT_SECRET)),
    ),
  },
  {
    provider: 'neon',
    needs: ['NEON_API_KEY', 'NEON_PROJECT_ID'],
    present: Boolean(env.NEON_API_KEY && env.NEON_PROJECT_ID),
  },
];

if (!live) throw new Error('The live tests run with CONSORT_LIVE_TESTS=1: npm run test:live (see this file).');

if (!targets.some((t) => t.present))
  it('has the credentials of at least one service', () => {
    throw new Error(
      `No credentials for a live test: set ${targets.map((t) => `${t.needs.join(', ')} (${t.provider})`).join(', or ')}.`,
    );
  });

for (const target of targets.filter((t) => t.present)) {
  describe(`live ${target.provider}`, () => {
    it('creates a branch, writes to it, resets and deletes it', async () => {
      const provider = await openProvider({
        provider: target.provider,
        projectRoot: process.cwd(),
        env,
        log: (l) => process.stderr.write(`${l}\n`),
      });
      const name = `consort-live-${randomBytes(3).toString('hex')}`;
      try {
        expect(await provider.capabilities()).toMatchObject({ provider: target.provider, mode: 'native' });
        const record = await provider.create({ name, ttlMs: 3_600_000, annotations: { test: 'live' } });
        expect(record).toMatchObject({ name, parent: 'main' });
        const url = await provider.connectionUri(name);
        await query(url, 'CREATE TABLE consort_live (id int)');
        await provider.reset(name);
        expect(await query(await provider.connectionUri(name), "SELECT to_regclass('consort_live') AS t")).toEqual([
          { t: null },
        ]);
      } finally {
        await provider.delete(name).catch(() => undefined);
        await provider.close();
      }
    }, 300_000);
  });
}
