/**
 * What to say when a migration's down threw from its own code, before sending any SQL. Histories
 * often mark a migration that cannot be undone this way (`throw new Error('irreversible')`), where
 * node-pg-migrate has a declaration for it: `down = false`, which the check reports as declared
 * irreversible. A throw reads the same as a down with a bug, so it stays a failed down, with where
 * it threw and the declaration that says it was meant.
 */
import type { MigrationFile } from '../../migrations/files.js';
import type { MigrationError } from '../../ports/migration-runner.js';

const ES_MODULE = /^\s*export\s+(?:const|let|var|async|function|default)\b/m;

export function thrownDownDetail(m: Pick<MigrationFile, 'file' | 'content'>, error: MigrationError): string {
  const declaration = ES_MODULE.test(m.content) ? 'export const down = false' : 'exports.down = false';
  const where = error.line === undefined ? '' : ` at ${m.file}:${error.line}`;
  return `its down threw${where}: ${error.message}. If the migration is meant to be irreversible, declare it so (\`${declaration}\`) instead of throwing: the check then reports it as declared irreversible, and node-pg-migrate refuses to roll back past it`;
}
