/** Neon settings from the environment: each missing or malformed value is named. */
import { parseNeonSettings } from '../../../src/branches/neon/settings.js';

const base = { NEON_API_KEY: 'napi_1', NEON_PROJECT_ID: 'shiny-wind-028834' };

describe('parseNeonSettings', () => {
  it('fills in the public API, database and role', () => {
    expect(parseNeonSettings(base)).toEqual({
      apiKey: 'napi_1',
      projectId: 'shiny-wind-028834',
      apiHost: 'https://console.neon.tech/api/v2',
      database: 'neondb',
      role: 'neondb_owner',
    });
  });

  it('takes the database, role and API host from the environment', () => {
    expect(
      parseNeonSettings({
        ...base,
        NEON_DATABASE: 'shop',
        NEON_ROLE: 'ci',
        NEON_API_HOST: 'https://neon.example.com/api/v2/',
      }),
    ).toMatchObject({ database: 'shop', role: 'ci', apiHost: 'https://neon.example.com/api/v2' });
  });

  it.each([
    [{ NEON_API_KEY: '' }, /NEON_API_KEY is not set/],
    [{ NEON_PROJECT_ID: undefined }, /NEON_PROJECT_ID is not set/],
    [{ NEON_PROJECT_ID: 'My Project' }, /is not a Neon project id/],
    [{ NEON_API_HOST: 'http://neon.example.com' }, /must use https/],
    [{ NEON_API_HOST: 'not a url' }, /is not a URL/],
  ])('%o is refused: %s', (change, message) => {
    expect(() => parseNeonSettings({ ...base, ...change })).toThrow(
      expect.objectContaining({ code: 'config', message: expect.stringMatching(message) }),
    );
  });
});
