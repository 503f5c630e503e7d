/**
 * The variables npm needs to reach the user's registry or mirror through their proxy (npm's own
 * config files stay where HOME says): passed, by name, to an install Consort starts and to the
 * processes that start one (pairing's background job).
 */
export const NPM_PASS: readonly string[] = [
  'NPM_CONFIG_REGISTRY',
  'npm_config_registry',
  'NPM_CONFIG_USERCONFIG',
  'npm_config_userconfig',
  'NPM_CONFIG_CACHE',
  'npm_config_cache',
  'HTTPS_PROXY',
  'https_proxy',
  'HTTP_PROXY',
  'http_proxy',
  'NO_PROXY',
  'no_proxy',
  'NODE_EXTRA_CA_CERTS',
];
