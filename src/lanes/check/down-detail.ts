/**
 * What to say when a JavaScript/TypeScript migration's down could not run: node-pg-migrate could not
 * infer it, or it threw from its own code before sending any SQL.
 *
 * A thrown down: histories
 * often mark a migration that cannot be undone this way (`throw new Error('irreversible')`), where
 * node-pg-migrate has a declaration for it: `down = false`, which the check reports as declared
 * irreversible. A throw reads the same as a down with a bug, so it stays a failed down, with where
 * it threw and the declaration that says it was meant.
 */
import type { MigrationFile } from '../../migrations/files.js';
import type { MigrationError } from '../../ports/migration-runner.js';

const ES_MODULE = /^\s*export\s+(?:const|let|var|async|function|default)\b/m;

const declarationIn = (m: Pick<MigrationFile, 'content'>): string =>
  ES_MODULE.test(m.content) ? 'export const down = false' : 'exports.down = false';

export function thrownDownDetail(m: Pick<MigrationFile, 'file' | 'content'>, error: MigrationError): string {
  const declaration = declarationIn(m);
  const where = error.line === undefined ? '' : ` at ${m.file}:${error.line}`;
  return `its down threw${where}: ${error.message}. If the migration is meant to be irreversible, declare it so (\`${declaration}\`) instead of throwing: the check then reports it as declared irreversible, and node-pg-migrate refuses to roll back past it`;
}

const UNINFERABLE = 'Impossible to automatically infer down migration';

/**
 * node-pg-migrate's "Impossible to automatically infer down migration for "pgm._alter()"": 7.x to 9
 * name the operation by the function inside node-pg-migrate (`_alter` for alterTable, alterView,
 * alterPolicy…; `_drop`, `_add`, `_refresh`), raw SQL by no name (`pgm.sql` is the one operation
 * made from an anonymous function: "pgm.()"), and an up that reads the database (`pgm.db`) gets the
 * message with no name at all. Said with this file's calls where they can be found, and what to
 * write. Undefined for any other message.
 */
export function uninferableDownDetail(m: Pick<MigrationFile, 'content'>, message: string): string | undefined {
  if (!message.startsWith(UNINFERABLE)) return undefined;
  const fix = `write a down that undoes the up, or if it cannot be undone declare it irreversible (\`${declarationIn(m)}\`)`;
  const op = /for "pgm\.(\w*)\(\)"/.exec(message)?.[1];
  if (op === undefined)
    return message.trim() === UNINFERABLE
      ? `node-pg-migrate cannot infer the down of an up that reads the database (pgm.db): ${fix}`
      : `${message}: ${fix}`;
  const calls =
    op === ''
      ? ['pgm.sql()']
      : op.startsWith('_')
        ? [...m.content.matchAll(new RegExp(`\\.(${op.slice(1)}[A-Z]\\w*)\\s*\\(`, 'g'))].map((c) => `pgm.${c[1]}()`)
        : [];
  const named = [...new Set(calls)];
  const which =
    named.length === 0
      ? `pgm.${op}()`
      : `${named.length === 1 ? named[0] : `one of ${named.join(', ')}`} (node-pg-migrate calls it "pgm.${op}()")`;
  return `node-pg-migrate cannot infer the down of ${which}: ${fix}`;
}
