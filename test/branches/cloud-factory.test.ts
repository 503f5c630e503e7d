/** `--provider lakebase|neon` through the same factory the CLI, the Action and the App use. */
import { openProvider, parseProviderName, PROVIDERS } from '../../src/branches/factory.js';
import { LakebaseEmulator } from '../emulators/lakebase.js';
import { NeonEmulator } from '../emulators/neon.js';

describe('the provider factory knows the cloud providers', () => {
  it('accepts lakebase and neon as provider names', () => {
    expect(PROVIDERS).toEqual(['local', 'postgres', 'lakebase', 'neon']);
    expect(parseProviderName('lakebase')).toBe('lakebase');
    expect(parseProviderName('neon')).toBe('neon');
    expect(() => parseProviderName('supabase')).toThrow(
      expect.objectContaining({ hint: 'Use one of: local, postgres, lakebase, neon.' }),
    );
  });

  it.each([
    ['lakebase', /DATABRICKS_HOST is not set/],
    ['neon', /NEON_API_KEY is not set/],
  ] as const)('%s without settings names the missing one', async (provider, message) => {
    await expect(openProvider({ provider, projectRoot: '/tmp', env: {} })).rejects.toMatchObject({
      code: 'config',
      message: expect.stringMatching(message),
    });
  });

  it("reads settings by name, the explicit ones (the Action's inputs) over the environment", async () => {
    const secrets: string[] = [];
    const env = { NEON_API_KEY: 'from-env', NEON_PROJECT_ID: 'p-env', UNRELATED_TOKEN: 'never-read' };
    await openProvider({
      provider: 'neon',
      projectRoot: '/tmp',
      env,
      explicit: { NEON_API_KEY: 'from-input' },
      onSecret: (s) => secrets.push(s),
    }).then((p) => p.close());
    expect(secrets).toEqual(['from-input']);
    await expect(
      openProvider({
        provider: 'postgres',
        projectRoot: '/tmp',
        env: { CONSORT_POSTGRES_URL: 'mysql://x' },
        explicit: { CONSORT_POSTGRES_URL: 'postgresql://u:pw@127.0.0.1:1/postgres' },
        onSecret: (s) => secrets.push(s),
      }).then((p) => p.close()),
    ).resolves.toBeUndefined();
    expect(secrets).toEqual(['from-input', 'postgresql://u:pw@127.0.0.1:1/postgres']);
  });

  it('opens both against their stand-ins and reports their secrets for masking', async () => {
    const lakebase = await new LakebaseEmulator({ token: 'dapi-factory-7777' }).start();
    let neon: NeonEmulator | undefined;
    const secrets: string[] = [];
    try {
      neon = await new NeonEmulator().start();
      for (const [provider, env] of [
        ['lakebase', lakebase.env('token')],
        ['neon', neon.env()],
      ] as const) {
        const p = await openProvider({ provider, projectRoot: '/tmp', env, onSecret: (s) => secrets.push(s) });
        expect(await p.capabilities()).toMatchObject({ provider, mode: 'native' });
        expect((await p.list()).map((b) => b.name)).toEqual(['main']);
        await p.close();
      }
      expect(secrets).toEqual(['dapi-factory-7777', neon.o.apiKey]);
    } finally {
      await lakebase.stop();
      await neon?.stop();
    }
  });
});
