/**
 * What pairing's children (the hook's background job, a seed command) get: the basics, the
 * providers' and libpq's variables, and npm's registry, proxy and CA variables — the job installs
 * the node-pg-migrate a lockfile pins, which behind a proxy or from a mirror failed without them.
 * Nothing else of the developer's shell.
 */
import { pairingChildEnv } from '../../src/pairing/child-env.js';

/** What a child gets of a developer's shell. */
const KEPT = {
  PATH: '/usr/bin',
  HOME: '/home/dev',
  HTTPS_PROXY: 'http://proxy.internal:3128',
  no_proxy: 'localhost',
  NPM_CONFIG_REGISTRY: 'https://npm.internal/',
  NODE_EXTRA_CA_CERTS: '/etc/ssl/corp.pem',
  CONSORT_PROVIDER: 'local',
  PGHOST: '/run/postgresql',
};

it("passes npm's registry, proxy and CA variables and the providers', and nothing else", () => {
  const env = pairingChildEnv({
    ...KEPT,
    GITHUB_TOKEN: 'ghp_x',
    OPENAI_API_KEY: 'sk-x',
    AWS_SECRET_ACCESS_KEY: 'x',
    NODE_OPTIONS: '--require /tmp/evil.js',
  });
  expect(env).toEqual(KEPT);
});
