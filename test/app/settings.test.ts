/**
 * The App's operator settings that decide where it talks to and what it offers: GitHub's address
 * from Probot's GHE_HOST/GHE_PROTOCOL (or GITHUB_API_URL), the branch providers repositories may
 * choose (CONSORT_APP_PROVIDERS, credentials), and the bounded rate-limit waits.
 */
import { resolveGitHubHost, webUrlOf } from '../../app/github-host.js';
import { DEFAULT_OCTOKIT_POLICY, retryRateLimited } from '../../app/octokit.js';
import { chooseProvider, parseProviderOffer } from '../../app/provider-choice.js';
import { parseAppSettings } from '../../app/settings.js';
import type { ProviderName } from '../../src/ports/branch-provider.js';

const base = {
  APP_ID: '42',
  PRIVATE_KEY: '-----BEGIN RSA PRIVATE KEY-----\\nabc\\n-----END RSA PRIVATE KEY-----',
  WEBHOOK_SECRET: 'a-long-enough-secret',
};
const LAKEBASE = {
  DATABRICKS_HOST: 'https://dbc-1.cloud.databricks.com',
  DATABRICKS_TOKEN: 'dapi-x',
  CONSORT_LAKEBASE_PROJECT: 'shop',
};
const NEON = { NEON_API_KEY: 'napi_x', NEON_PROJECT_ID: 'shiny-wind-028834' };

describe('which GitHub the App talks to', () => {
  it.each([
    [
      'nothing set: github.com',
      {},
      { apiUrl: 'https://api.github.com', webUrl: 'https://github.com', source: 'default', baseUrl: undefined },
    ],
    [
      'GHE_HOST (https by default), as Probot builds it',
      { GHE_HOST: 'ghe.example.com' },
      {
        apiUrl: 'https://ghe.example.com/api/v3',
        webUrl: 'https://ghe.example.com',
        source: 'GHE_HOST',
        baseUrl: 'https://ghe.example.com/api/v3',
      },
    ],
    [
      'GHE_HOST with a port and GHE_PROTOCOL=http',
      { GHE_HOST: '127.0.0.1:8080', GHE_PROTOCOL: 'http' },
      { apiUrl: 'http://127.0.0.1:8080/api/v3', webUrl: 'http://127.0.0.1:8080', source: 'GHE_HOST' },
    ],
    [
      'GITHUB_API_URL still works',
      { GITHUB_API_URL: 'https://ghe.corp.example/api/v3/' },
      { apiUrl: 'https://ghe.corp.example/api/v3', webUrl: 'https://ghe.corp.example', source: 'GITHUB_API_URL' },
    ],
    [
      'both, naming the same server',
      { GHE_HOST: 'ghe.example.com', GITHUB_API_URL: 'https://ghe.example.com/api/v3' },
      { source: 'GHE_HOST' },
    ],
  ])('%s', (_label, env, expected) => {
    expect(resolveGitHubHost(env)).toMatchObject(expected);
  });

  it.each([
    [
      'both, naming different servers',
      { GHE_HOST: 'a.example.com', GITHUB_API_URL: 'https://b.example.com/api/v3' },
      /GHE_HOST points the App at https:\/\/a\.example\.com\/api\/v3, but GITHUB_API_URL at/,
    ],
    ['a URL in GHE_HOST', { GHE_HOST: 'https://ghe.example.com' }, /GHE_HOST must be a host name/],
    ['GHE_PROTOCOL alone', { GHE_PROTOCOL: 'http' }, /GHE_PROTOCOL is set without GHE_HOST/],
  ])('refuses %s', (_label, env, message) => {
    expect(() => resolveGitHubHost(env)).toThrow(message);
  });

  it('web addresses of API addresses', () => {
    expect(webUrlOf('https://api.github.com')).toBe('https://github.com');
    expect(webUrlOf('https://api.octo.ghe.com')).toBe('https://octo.ghe.com');
    expect(webUrlOf('http://127.0.0.1:9/api/v3')).toBe('http://127.0.0.1:9');
  });

  it('the App settings carry it, and refuse a GHE_PROTOCOL that is not http or https', () => {
    expect(parseAppSettings({ ...base, GHE_HOST: 'ghe.example.com' })).toMatchObject({
      githubApiUrl: 'https://ghe.example.com/api/v3',
      github: { webUrl: 'https://ghe.example.com', source: 'GHE_HOST' },
    });
    expect(() => parseAppSettings({ ...base, GHE_HOST: 'ghe.example.com', GHE_PROTOCOL: 'ftp' })).toThrow(
      /GHE_PROTOCOL must be http or https/,
    );
  });
});

describe('the dashboard settings', () => {
  const dashboard = {
    GITHUB_CLIENT_ID: 'Iv1.abc',
    GITHUB_CLIENT_SECRET: 'shh',
    CONSORT_DASHBOARD_URL: 'https://consort.example.com/somewhere',
    CONSORT_DASHBOARD_SECRET: 'x'.repeat(32),
  };

  it('are off without them, on with all four (the public URL reduced to its origin)', () => {
    expect(parseAppSettings(base).dashboard).toBeNull();
    expect(parseAppSettings({ ...base, ...dashboard }).dashboard).toEqual({
      clientId: 'Iv1.abc',
      clientSecret: 'shh',
      publicUrl: 'https://consort.example.com',
      sessionSecret: 'x'.repeat(32),
    });
  });

  it.each([
    [
      'some missing',
      { GITHUB_CLIENT_ID: 'Iv1.abc' },
      /needs all of GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET, CONSORT_DASHBOARD_URL and CONSORT_DASHBOARD_SECRET/,
    ],
    [
      'a short secret',
      { ...dashboard, CONSORT_DASHBOARD_SECRET: 'short' },
      /CONSORT_DASHBOARD_SECRET must be at least 32 characters/,
    ],
    [
      'not a URL',
      { ...dashboard, CONSORT_DASHBOARD_URL: 'consort.example.com' },
      /CONSORT_DASHBOARD_URL must be the URL people open/,
    ],
  ])('refuse %s', (_label, env, message) => {
    expect(() => parseAppSettings({ ...base, ...env })).toThrow(message);
  });
});

describe('the branch providers the App offers', () => {
  it('by default: local, and every provider whose credentials are set', () => {
    expect(parseProviderOffer({})).toEqual({ offered: ['local'], fallback: 'local' });
    const offer = parseProviderOffer({ ...LAKEBASE, ...NEON, CONSORT_POSTGRES_URL: 'postgres://a@h/postgres' });
    expect(offer).toMatchObject({
      offered: ['local', 'postgres', 'lakebase', 'neon'],
      fallback: 'local',
      lakebase: { project: 'shop' },
      neon: { projectId: 'shiny-wind-028834' },
    });
  });

  it('CONSORT_APP_PROVIDERS limits the offer; CONSORT_PROVIDER is the default, else the first listed', () => {
    expect(parseProviderOffer({ ...LAKEBASE, ...NEON, CONSORT_APP_PROVIDERS: 'neon' })).toEqual({
      offered: ['neon'],
      fallback: 'neon',
      neon: expect.any(Object),
    });
    expect(
      parseProviderOffer({ ...LAKEBASE, ...NEON, CONSORT_APP_PROVIDERS: 'lakebase, neon', CONSORT_PROVIDER: 'neon' }),
    ).toMatchObject({ offered: ['neon', 'lakebase'], fallback: 'neon' });
  });

  it.each([
    [
      'a provider without its credentials',
      { CONSORT_APP_PROVIDERS: 'local,neon' },
      /NEON_API_KEY is not set \(needed by the neon provider\)/,
    ],
    [
      'lakebase without a project',
      { DATABRICKS_HOST: 'https://dbc-1.cloud.databricks.com', DATABRICKS_TOKEN: 't' },
      /CONSORT_LAKEBASE_PROJECT is not set/,
    ],
    ['an unknown provider', { CONSORT_APP_PROVIDERS: 'local,supabase' }, /unknown provider\(s\): supabase/],
    [
      'a default that is not offered',
      { CONSORT_APP_PROVIDERS: 'local', CONSORT_PROVIDER: 'postgres', CONSORT_POSTGRES_URL: 'postgres://a@h/p' },
      /CONSORT_PROVIDER is postgres, which CONSORT_APP_PROVIDERS \(local\) does not offer/,
    ],
    ['postgres without its URL', { CONSORT_PROVIDER: 'postgres' }, /CONSORT_POSTGRES_URL/],
  ])('refuses %s', (_label, env, message) => {
    expect(() => parseProviderOffer(env)).toThrow(message);
    expect(() => parseAppSettings({ ...base, ...env })).toThrow(message);
  });

  it('a repository gets what it chose when offered, the default when it did not choose, and a clear refusal otherwise', () => {
    const o = { offered: ['postgres', 'neon'] as ProviderName[], fallback: 'postgres' as const };
    expect(chooseProvider(o, 'neon')).toEqual({ ok: true, provider: 'neon' });
    expect(chooseProvider(o, undefined)).toEqual({ ok: true, provider: 'postgres' });
    const refused = chooseProvider(o, 'lakebase');
    expect(refused).toMatchObject({
      ok: false,
      message: expect.stringContaining(
        'asks for database.provider "lakebase", which this Consort App does not offer (it offers: postgres, neon)',
      ),
    });
  });
});

describe('rate limits: bounded waits', () => {
  it.each([
    [60, 0, true],
    [60, 1, true],
    [60, 2, false],
    [DEFAULT_OCTOKIT_POLICY.maxRateLimitWaitSeconds + 1, 0, false],
  ])('wait %i s on retry %i: %s', (retryAfter, retryCount, expected) => {
    expect(retryRateLimited(DEFAULT_OCTOKIT_POLICY, retryAfter, retryCount)).toBe(expected);
  });
});
