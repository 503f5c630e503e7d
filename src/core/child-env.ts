/**
 * The one place a child process's environment is built. A child (a suite, a seed, an agent, git)
 * gets the basics a toolchain needs, taken by name from an allow-list, plus what its caller sets
 * explicitly — never a copy of Consort's own environment with a few keys deleted, because that
 * leaks whatever the runner adds next (GITHUB_TOKEN, ACTIONS_*_TOKEN, INPUT_*, a provider's API
 * key, the App's PRIVATE_KEY). Explicit additions that look like runner or service credentials are
 * dropped too, unless the caller names them in `secrets` (a model key for its own agent backend,
 * the push token for the push itself).
 */

/** Variables a toolchain needs to find itself, its caches and the user's locale. */
const BASICS = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TMPDIR',
  'TMP',
  'TEMP',
  'TERM',
  'CI',
  'NO_COLOR',
  'FORCE_COLOR',
  // Toolchains found by variable rather than PATH.
  'JAVA_HOME',
  'GOPATH',
  'GOROOT',
  'GOCACHE',
  'GOMODCACHE',
  'CARGO_HOME',
  'RUSTUP_HOME',
  'VIRTUAL_ENV',
  // Windows needs these to start anything at all.
  'SYSTEMROOT',
  'SystemRoot',
  'COMSPEC',
  'ComSpec',
  'PATHEXT',
  'WINDIR',
  'windir',
  'USERPROFILE',
  'APPDATA',
  'LOCALAPPDATA',
  'PROGRAMDATA',
  'ProgramData',
]);

/** Locale categories (LC_ALL, LC_CTYPE, …) are basics too. */
function isBasic(key: string): boolean {
  return BASICS.has(key) || /^LC_[A-Z]+$/.test(key);
}

/**
 * The runner's, the GitHub App's, Consort's and its providers' credentials (the branch URLs Consort
 * hands out are the access a child gets), and NODE_OPTIONS (code injected into every node child).
 */
const OWN_CREDENTIALS =
  'INPUT_.*|ACTIONS_.*|GITHUB_TOKEN|GH_TOKEN|GH_ENTERPRISE_TOKEN|PRIVATE_KEY.*|WEBHOOK_SECRET|NEON_.*|DATABRICKS_.*|CONSORT_POSTGRES_URL|CONSORT_APP_.*|NODE_OPTIONS';

/**
 * Names no child gets unless its caller lists them in `secrets`: those above, and anything named
 * like a key, token or secret. Branch passwords travel as PGPASSWORD and inside DATABASE_URL,
 * which the caller sets on purpose.
 */
const CREDENTIAL = new RegExp(`^(${OWN_CREDENTIALS}|.*_API_KEY|.*_TOKEN|.*_SECRET|.*_PRIVATE_KEY)$`, 'i');

export function isCredentialName(key: string): boolean {
  return CREDENTIAL.test(key);
}

/** What no project code is given even when its configuration asks (`suite.passEnv`): Consort's own variables too. */
const NEVER_PASSED = new RegExp(`^(${OWN_CREDENTIALS}|CONSORT_.*)$`, 'i');

export function isNeverPassed(key: string): boolean {
  return NEVER_PASSED.test(key);
}

export interface ChildEnvOptions {
  /** Where the basics are read from (default: this process's environment). */
  inherit?: NodeJS.ProcessEnv;
  /** Credential-looking names the child may nevertheless receive (from `set` or `inherit`). */
  secrets?: readonly string[];
  /** More names to take from `inherit` besides the basics (a caller's own allow-list); credentials are still dropped. */
  pass?: readonly string[];
}

/**
 * The complete environment for a child: the allow-listed basics of `inherit`, then `set` laid on
 * top (`undefined` removes a variable). The result is all the child sees.
 */
export function childEnv(
  set: Readonly<Record<string, string | undefined>> = {},
  options: ChildEnvOptions = {},
): NodeJS.ProcessEnv {
  const inherit = options.inherit ?? process.env;
  const secrets = new Set(options.secrets ?? []);
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(inherit)) {
    if (value !== undefined && isBasic(key) && !isCredentialName(key)) env[key] = value;
  }
  for (const key of options.pass ?? []) {
    const value = inherit[key];
    if (value !== undefined && !isCredentialName(key)) env[key] = value;
  }
  for (const key of secrets) {
    const value = inherit[key];
    if (value !== undefined && !(key in set)) env[key] = value;
  }
  for (const [key, value] of Object.entries(set)) {
    if (value === undefined) delete env[key];
    else if (!isCredentialName(key) || secrets.has(key)) env[key] = value;
  }
  return env;
}

/**
 * Variables that tell a Postgres client which database to reach: libpq's `PG*` and `DATABASE_URL`.
 * A migration's own code that opened a connection from them would reach the database they name (the
 * caller's development database, say), not the branch node-pg-migrate is applying it to.
 */
const CONNECTION = /^(PG[A-Z]+|DATABASE_URL)$/;

export function isConnectionVariable(key: string): boolean {
  return CONNECTION.test(key);
}

/**
 * What a repository's migration code sees of its caller's environment besides the basics: what the
 * lane's suite sees of it — the project's settings its imports read when they load
 * (`env.get('WAREHOUSE_URL')` in a module a migration imports), as its deploy's `node-pg-migrate up`
 * would have them. `suite.passEnv` (`pass`) names the credential-looking variables the project
 * gives its own code; other credential-looking names are left out, and so are the connection
 * variables and `urlVars` (the suite's `suite.env`): the migrations' child serves several
 * branches, so no single one can be named. `only`: the lane's suite gets the basics and `pass`
 * alone (the TDD lane's proofs), so its migrations get `pass` alone too.
 */
export function migrationEnv(
  env: NodeJS.ProcessEnv,
  urlVars: readonly string[] = [],
  pass: readonly string[] = [],
  only = false,
): Record<string, string> {
  const drop = new Set(urlVars);
  const passed = new Set(pass.filter((k) => !isNeverPassed(k)));
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined || CONNECTION.test(key) || drop.has(key)) continue;
    if (passed.has(key) || (!only && !isCredentialName(key))) out[key] = value;
  }
  return out;
}

/** The credential-looking names of the caller's environment a project's code was not given (for a failure's hint). */
export function withheldNames(env: NodeJS.ProcessEnv, pass: readonly string[]): string[] {
  return Object.keys(env)
    .filter((k) => env[k] !== undefined && isCredentialName(k) && !isNeverPassed(k) && !pass.includes(k))
    .sort();
}
