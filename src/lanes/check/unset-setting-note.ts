/**
 * What to say when a JavaScript/TypeScript migration's statement fails holding `undefined` (`GRANT
 * SELECT ON app.projects TO undefined`, `role "undefined" does not exist`): the migration put a value
 * it did not have into its SQL, most often a setting read from the environment
 * (`process.env.APP_READER_ROLE`) that its deploy has and the check's migrations were not given.
 * Postgres' error alone points at the statement; the fix is where the check runs.
 */
import { isConnectionVariable, isCredentialName, isNeverPassed } from '../../core/child-env.js';
import type { MigrationFile } from '../../migrations/files.js';

/** `undefined` as SQL text or a quoted identifier, not inside a string literal. */
const UNDEFINED_IN_SQL = /(?:^|[^\w$'])"?undefined"?(?![\w$'])/;
const ENV_READ = /\bprocess\s*\.\s*env\s*(?:\.\s*([A-Za-z_$][\w$]*)|\[\s*(['"`])([^'"`]+)\2\s*\])/g;

/** The environment variables a migration's source reads, in order of first use. */
export function envReads(content: string): string[] {
  return [...new Set([...content.matchAll(ENV_READ)].map((m) => m[1] ?? m[3]!))];
}

/**
 * The note for a failed statement of `migration`, or undefined when the statement holds no
 * `undefined`. `env`: the environment the check runs in; `passEnv`: suite.passEnv as the check uses it.
 */
export function unsetSettingNote(
  statement: string,
  migration: MigrationFile | undefined,
  env: NodeJS.ProcessEnv,
  passEnv: readonly string[],
): string | undefined {
  if (!migration || migration.kind === 'sql') return undefined;
  const sql = statement.replace(/'(?:[^']|'')*'/g, "''");
  if (!UNDEFINED_IN_SQL.test(sql)) return undefined;
  const reads = envReads(migration.content);
  const why = (name: string): string | undefined => {
    if (isConnectionVariable(name))
      return `${name} (the connection variables never reach the migrations: they serve several branches)`;
    if (env[name] === undefined)
      return `${name} (not set where the check runs: export it there — in the Action, the workflow step's env:)`;
    if (isNeverPassed(name)) return `${name} (one of the names no project code is given)`;
    if (isCredentialName(name) && !passEnv.includes(name))
      return `${name} (withheld as credential-looking: list it in suite.passEnv of the base branch's configuration)`;
    return undefined;
  };
  const missing = reads.flatMap((n) => why(n) ?? []);
  const start = 'the statement holds undefined where the migration put a value it did not have';
  if (missing.length > 0) return `${start}: it reads ${missing.join(', ')}`;
  return `${start}, such as a setting read from the environment (by it or a module it imports) that its deploy has: export it where the check runs (credential-looking names also in suite.passEnv)`;
}
