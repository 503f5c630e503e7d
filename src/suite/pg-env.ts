/**
 * libpq environment variables for a branch's connection string. Suites reach the database in many
 * ways (DATABASE_URL, psql, an ORM reading PGHOST...), so the branch is handed over in all of them.
 * Parsed by hand rather than with `URL`, which rejects libpq's multi-host form (`h1:5432,h2:5433`).
 */
import { ConsortError } from '../core/errors.js';
import { maskUrl } from '../core/redact.js';

/** URI parameters libpq also reads from the environment, and the variable for each. */
const PARAMETER_ENV: Record<string, string> = {
  host: 'PGHOST',
  port: 'PGPORT',
  user: 'PGUSER',
  password: 'PGPASSWORD',
  dbname: 'PGDATABASE',
  sslmode: 'PGSSLMODE',
  sslrootcert: 'PGSSLROOTCERT',
  sslcert: 'PGSSLCERT',
  sslkey: 'PGSSLKEY',
  channel_binding: 'PGCHANNELBINDING',
  application_name: 'PGAPPNAME',
  connect_timeout: 'PGCONNECT_TIMEOUT',
  options: 'PGOPTIONS',
  target_session_attrs: 'PGTARGETSESSIONATTRS',
};

/** Every variable `pgEnvFromUrl` can set. */
export const PG_ENV_KEYS: readonly string[] = Object.values(PARAMETER_ENV);

const SCHEME = /^postgres(?:ql)?:\/\//i;

function invalid(url: string, why: string): ConsortError {
  return new ConsortError('invalid-input', `Invalid PostgreSQL connection string ${maskUrl(url)}: ${why}.`, {
    hint: 'Use the form postgres://user:password@host:port/database?sslmode=require.',
  });
}

function decode(url: string, text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw invalid(url, `bad percent-encoding in "${text.length > 40 ? `${text.slice(0, 40)}...` : text}"`);
  }
}

/** `host`, `host:port`, `[::1]:port` */
function splitHostPort(url: string, spec: string): { host: string; port: string } {
  const bracketed = /^\[([^\]]*)\](?::(\d*))?$/.exec(spec);
  if (bracketed) return { host: bracketed[1] ?? '', port: bracketed[2] ?? '' };
  const colon = spec.lastIndexOf(':');
  if (colon === -1) return { host: decode(url, spec), port: '' };
  const port = spec.slice(colon + 1);
  if (!/^\d*$/.test(port)) throw invalid(url, `port "${port}" is not a number`);
  return { host: decode(url, spec.slice(0, colon)), port };
}

export function pgEnvFromUrl(url: string): Record<string, string> {
  if (!SCHEME.test(url)) throw invalid(url, 'it must start with postgres:// or postgresql://');
  const env: Record<string, string> = {};
  const rest = url.replace(SCHEME, '').split('#')[0] ?? '';
  const queryAt = rest.indexOf('?');
  const beforeQuery = queryAt === -1 ? rest : rest.slice(0, queryAt);
  const query = queryAt === -1 ? '' : rest.slice(queryAt + 1);
  const slash = beforeQuery.indexOf('/');
  const authority = slash === -1 ? beforeQuery : beforeQuery.slice(0, slash);
  const path = slash === -1 ? '' : beforeQuery.slice(slash + 1);

  const at = authority.lastIndexOf('@');
  if (at !== -1) {
    const userinfo = authority.slice(0, at);
    const colon = userinfo.indexOf(':');
    const user = decode(url, colon === -1 ? userinfo : userinfo.slice(0, colon));
    if (user) env.PGUSER = user;
    if (colon !== -1) env.PGPASSWORD = decode(url, userinfo.slice(colon + 1));
  }
  const hostList = at === -1 ? authority : authority.slice(at + 1);
  if (hostList) {
    const hosts = hostList.split(',').map((spec) => splitHostPort(url, spec));
    env.PGHOST = hosts.map((h) => h.host).join(',');
    if (hosts.some((h) => h.port)) env.PGPORT = hosts.map((h) => h.port).join(',');
  }
  if (path) env.PGDATABASE = decode(url, path);

  for (const pair of query.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const key = decode(url, eq === -1 ? pair : pair.slice(0, eq));
    const variable = PARAMETER_ENV[key];
    // Parameters without a libpq variable still reach the suite through the URL itself.
    if (variable) env[variable] = decode(url, eq === -1 ? '' : pair.slice(eq + 1));
  }
  return env;
}

/**
 * The environment for a command that should use the branch at `url`: the URL under each name in
 * `urlVars`, and the PG* variables. PG* variables the URL does not set map to `undefined` so that
 * values inherited from the caller's shell cannot point the suite at another database.
 */
export function branchEnv(
  url: string,
  urlVars: readonly string[] = ['DATABASE_URL'],
): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const key of PG_ENV_KEYS) env[key] = undefined;
  Object.assign(env, pgEnvFromUrl(url));
  for (const name of urlVars) env[name] = url;
  return env;
}
