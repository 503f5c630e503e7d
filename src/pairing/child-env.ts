/**
 * The environment handed to processes pairing starts (the hook's background job, a seed command):
 * built from an allow-list, never the whole parent environment, so tokens that happen to be
 * exported in a developer's shell do not travel further than they must.
 */
import { NPM_PASS } from '../tools/npm-env.js';

const BASICS = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'TZ',
  'TMPDIR',
  'TERM',
  'XDG_CACHE_HOME',
  'XDG_CONFIG_HOME',
  'SYSTEMROOT',
];
// What the providers read (CONSORT_*: provider choice, postgres URL, data dir; the cloud providers'
// own variables), and libpq's, for a seed command that uses psql.
const PREFIXES = ['CONSORT_', 'DATABRICKS_', 'LAKEBASE_', 'NEON_', 'PG'];
// npm's registry, proxy and CA variables: the node-pg-migrate a lockfile pins is installed from
// inside the hook's background job, which would otherwise not reach a mirror or a proxy.
const NPM = new Set(NPM_PASS);

export function pairingChildEnv(env: NodeJS.ProcessEnv, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) continue;
    if (BASICS.includes(k) || NPM.has(k) || PREFIXES.some((p) => k.startsWith(p))) out[k] = v;
  }
  return { ...out, ...extra };
}
