/**
 * What to say when a pull request's migration fails with 25001 (`… cannot run inside a transaction
 * block`: CREATE INDEX CONCURRENTLY, DROP INDEX CONCURRENTLY, VACUUM, …), for the migrations stage's
 * summary. node-pg-migrate wraps each migration in a transaction unless `up` calls
 * `pgm.noTransaction()`: an exported `noTransaction = true`, seen in real histories, is read by no
 * version of it (6–9), and a `.sql` migration has no way out at all. The fix differs for each.
 * The same transaction is why an enum value a migration adds (`pgm.addTypeValue`, `ALTER TYPE … ADD
 * VALUE`) cannot be used further down it (55P04, `unsafe use of new value`): PostgreSQL's hint says
 * the value must be committed, not that node-pg-migrate's transaction is what holds it. Where the
 * project deploys with node-pg-migrate's CLI, whose default is one transaction for every pending
 * migration, a value added by an earlier migration of the same deploy is not committed either, and
 * a migration of its own does not help: only one that calls `pgm.noTransaction()`.
 */
import type { MigrationFile } from '../../migrations/files.js';
import type { DeployTransaction } from '../../migrations/deploy-settings.js';

export const ACTIVE_SQL_TRANSACTION = '25001';
export const UNSAFE_NEW_ENUM_VALUE_USAGE = '55P04';

/** A statement of its own that ends a transaction (`COMMIT;`, `END;`, `COMMIT WORK;`), at a line's start. */
const OWN_COMMIT = /^[ \t]*(?:COMMIT|END)(?:[ \t]+(?:WORK|TRANSACTION))?[ \t]*;/im;
/** Whether SQL ends a transaction itself; a function's body (`$$ … END; $$`) and comments are not read. */
const endsTransaction = (sql: string): boolean =>
  OWN_COMMIT.test(sql.replace(/\$([A-Za-z_]\w*)?\$[\s\S]*?\$\1\$/g, '').replace(/--[^\n]*/g, ''));
const CALLS_NO_TRANSACTION = /\.\s*noTransaction\s*\(/;
const EXPORTS_NO_TRANSACTION =
  /\bexports\s*\.\s*noTransaction\s*=|\bexport\s+(?:const|let|var)\s+noTransaction\b|\bmodule\s*\.\s*exports\s*=\s*\{[^}]*\bnoTransaction\b/;

/** The note for `migration`'s failure, or undefined when the failure is not 25001 (or the file is unknown). */
export function transactionBlockNote(
  code: string | undefined,
  migration: MigrationFile | undefined,
  /** How the project's scripts apply the migrations: one transaction for all is node-pg-migrate's CLI default. */
  deploy?: DeployTransaction,
): string | undefined {
  // A migration of its own, the advice below, is not enough there: it commits with all the others.
  if (code === UNSAFE_NEW_ENUM_VALUE_USAGE && migration && deploy?.single)
    return `${deploy.manifest}'s script "${deploy.script}"${deploy.via === undefined ? '' : ` (through ${deploy.via})`} runs node-pg-migrate's CLI, which applies every pending migration in one transaction (--single-transaction, its default), so a value added to an enum is not committed until the whole deploy is: add it in a migration of its own whose up calls pgm.noTransaction() (node-pg-migrate commits before and after such a migration), or deploy with --no-single-transaction`;
  if (code === UNSAFE_NEW_ENUM_VALUE_USAGE && migration) return newEnumValueNote(migration);
  if (code !== ACTIVE_SQL_TRANSACTION || !migration) return undefined;
  if (migration.kind === 'sql' && endsTransaction(migration.content))
    return "its own COMMIT ends node-pg-migrate's transaction, but node-pg-migrate sends a .sql migration as one query, and PostgreSQL runs the statements after that COMMIT as one implicit transaction: a .sql migration cannot run this outside a transaction, so write this one as a JavaScript migration whose up (and down) calls pgm.noTransaction() and gives the statement a pgm.sql() call of its own";
  if (migration.kind === 'sql')
    return 'node-pg-migrate runs a .sql migration inside a transaction and it cannot opt out: write this one as a JavaScript migration whose up (and down) calls pgm.noTransaction()';
  const content = migration.content;
  if (CALLS_NO_TRANSACTION.test(content))
    return 'it calls pgm.noTransaction(), but a pgm.sql() text of several statements runs as one implicit transaction: give the statement a pgm.sql() call of its own';
  if (EXPORTS_NO_TRANSACTION.test(content))
    return 'node-pg-migrate does not read an exported noTransaction: call pgm.noTransaction() in up (and in down) instead';
  return 'node-pg-migrate runs each migration inside a transaction: call pgm.noTransaction() in up (and in down) to run it outside one';
}

/** Why a value the migration added to an enum is not committed yet where it uses it, and what to write. */
function newEnumValueNote(migration: MigrationFile): string {
  const ownMigration = 'add the value in a migration of its own, before the one that uses it';
  if (migration.kind === 'sql')
    return `node-pg-migrate runs a .sql migration inside one transaction, and the value it adds is not committed until that ends: ${ownMigration}`;
  if (CALLS_NO_TRANSACTION.test(migration.content))
    return `it calls pgm.noTransaction(), but a pgm.sql() text of several statements runs as one implicit transaction: give the ALTER TYPE … ADD VALUE a pgm.sql() call of its own, or ${ownMigration}`;
  return `node-pg-migrate runs each migration inside one transaction, and the value it adds is not committed until that ends: ${ownMigration} (node-pg-migrate commits each migration before the next), or call pgm.noTransaction() in up`;
}

/** Where `up` and `down` are defined in a JavaScript/TypeScript migration (-1 when not found). */
function definedAt(content: string, name: 'up' | 'down'): number {
  const at = new RegExp(
    `\\bexports\\s*\\.\\s*${name}\\s*=|\\bexport\\s+(?:const|let|var|(?:async\\s+)?function)\\s+${name}\\b|(?:^|[{,\\s])(?:async\\s+)?${name}\\s*(?::|\\()`,
    'm',
  ).exec(content);
  return at === null ? -1 : at.index;
}

/**
 * The note for a down that failed with 25001 while reversibility took it down. node-pg-migrate runs
 * each direction in a transaction unless that direction's own function calls `pgm.noTransaction()`:
 * the call in up, which let it build the index concurrently, does not carry over to down.
 */
export function downTransactionBlockNote(
  code: string | undefined,
  migration: MigrationFile | undefined,
): string | undefined {
  if (code !== ACTIVE_SQL_TRANSACTION || !migration || migration.kind === 'sql')
    return transactionBlockNote(code, migration);
  const content = migration.content;
  const down = definedAt(content, 'down');
  const up = definedAt(content, 'up');
  if (down === -1) return transactionBlockNote(code, migration);
  const body = content.slice(down, up > down ? up : undefined);
  if (!CALLS_NO_TRANSACTION.test(body) && CALLS_NO_TRANSACTION.test(content))
    return 'node-pg-migrate runs down inside a transaction unless down itself calls pgm.noTransaction(): a call in up does not carry over';
  return transactionBlockNote(code, migration);
}
