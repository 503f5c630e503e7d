/** Lakebase settings from the environment: each missing or malformed value is named. */
import { parseLakebaseSettings } from '../../../src/branches/lakebase/settings.js';

const base = {
  DATABRICKS_HOST: 'dbc-1234.cloud.databricks.com',
  DATABRICKS_TOKEN: 'dapi-1',
  CONSORT_LAKEBASE_PROJECT: 'shop',
};

describe('parseLakebaseSettings', () => {
  it('reads a PAT setup, adding https and the default database', () => {
    expect(parseLakebaseSettings(base)).toEqual({
      host: 'https://dbc-1234.cloud.databricks.com',
      auth: { kind: 'token', token: 'dapi-1' },
      project: 'shop',
      database: 'databricks_postgres',
    });
  });

  it('prefers OAuth M2M when a client id and secret are given', () => {
    const s = parseLakebaseSettings({
      ...base,
      DATABRICKS_CLIENT_ID: 'sp-1',
      DATABRICKS_CLIENT_SECRET: 'sec',
      CONSORT_LAKEBASE_DATABASE: 'app',
    });
    expect(s).toMatchObject({ auth: { kind: 'oauth-m2m', clientId: 'sp-1', clientSecret: 'sec' }, database: 'app' });
  });

  it.each([
    [{ DATABRICKS_HOST: undefined }, /DATABRICKS_HOST is not set/],
    [{ DATABRICKS_TOKEN: '' }, /DATABRICKS_TOKEN is not set/],
    [{ DATABRICKS_CLIENT_ID: 'sp-1' }, /DATABRICKS_CLIENT_SECRET is not set/],
    [{ DATABRICKS_CLIENT_SECRET: 'sec' }, /DATABRICKS_CLIENT_ID is not set/],
    [{ CONSORT_LAKEBASE_PROJECT: undefined }, /CONSORT_LAKEBASE_PROJECT is not set/],
    [{ CONSORT_LAKEBASE_PROJECT: 'Projects/Shop' }, /is not a project id/],
    [{ DATABRICKS_HOST: 'http://dbc-1234.cloud.databricks.com' }, /must use https/],
  ])('%o is refused: %s', (change, message) => {
    expect(() => parseLakebaseSettings({ ...base, ...change })).toThrow(
      expect.objectContaining({ code: 'config', message: expect.stringMatching(message) }),
    );
  });

  it('allows plain http only to a loopback stand-in', () => {
    expect(parseLakebaseSettings({ ...base, DATABRICKS_HOST: 'http://127.0.0.1:8080' }).host).toBe(
      'http://127.0.0.1:8080',
    );
  });
});
