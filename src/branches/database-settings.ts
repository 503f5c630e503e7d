/**
 * A database's own settings — `ALTER DATABASE x SET …` and `ALTER ROLE r IN DATABASE x SET …` — live
 * in the shared catalog `pg_db_role_setting`, keyed by the database's oid, so
 * `CREATE DATABASE … TEMPLATE` does not copy them: a branch made that way would run the project's
 * migrations and suite without the parent's `search_path` or `timezone`. `copyDatabaseSettings`
 * re-issues them on the copy (server-ops.ts `copyDatabase` calls it for every database made from
 * another). A rename keeps the oid, so a pooled copy handed out by a rename keeps what it was given.
 *
 * Each `setconfig` entry is `name=value`, with the value in the server's flattened form. They are
 * re-issued as pg_dump does (`makeAlterConfigCommand`): the value as one string literal, except for
 * the variables PostgreSQL marks GUC_LIST_QUOTE (`search_path` and a few more), whose value is a list
 * of already double-quoted elements: it is split (`splitGucList`) and each element given as a literal,
 * which the server quotes again exactly as before (`"$user", public` stays `"$user", public`).
 */
import { ConsortError } from '../core/errors.js';
import { pgErrorCode, quoteIdent, quoteLiteral, type Queryable } from '../db/sql.js';

/** One setting of a database: for every role (`role` null) or for one role in it. */
export interface DatabaseSetting {
  role: string | null;
  name: string;
  value: string;
}

/** The variables whose stored values are lists of quoted elements (pg_dump's `variable_is_guc_list_quote`). */
const LIST_QUOTE = new Set([
  'local_preload_libraries',
  'search_path',
  'session_preload_libraries',
  'shared_preload_libraries',
  'temp_tablespaces',
  'unix_socket_directories',
]);

/** `name=value` (the value may contain `=`); undefined when there is no `=`. */
export function parseSettingEntry(entry: string): { name: string; value: string } | undefined {
  const at = entry.indexOf('=');
  return at <= 0 ? undefined : { name: entry.slice(0, at), value: entry.slice(at + 1) };
}

const SPACE = /\s/;

/**
 * Split a GUC list value the way the server wrote it (PostgreSQL's `SplitGUCList`): elements separated
 * by commas and optional whitespace, each bare or double-quoted with `""` for a quote; bare elements
 * keep their case. Undefined when the value is not such a list.
 */
export function splitGucList(value: string): string[] | undefined {
  const out: string[] = [];
  let i = 0;
  const skipSpace = () => {
    while (i < value.length && SPACE.test(value[i]!)) i++;
  };
  skipSpace();
  if (i === value.length) return out;
  for (;;) {
    let element = '';
    if (value[i] === '"') {
      i++;
      for (;;) {
        const end = value.indexOf('"', i);
        if (end < 0) return undefined; // unmatched quote
        element += value.slice(i, end);
        i = end + 1;
        if (value[i] !== '"') break;
        element += '"';
        i++;
      }
    } else {
      const start = i;
      while (i < value.length && value[i] !== ',' && !SPACE.test(value[i]!)) i++;
      if (i === start) return undefined; // an empty bare element
      element = value.slice(start, i);
    }
    out.push(element);
    skipSpace();
    if (i === value.length) return out;
    if (value[i] !== ',') return undefined;
    i++;
    skipSpace();
  }
}

/** The statement that gives `database` this setting. */
export function settingStatement(database: string, setting: DatabaseSetting): string {
  const target =
    setting.role === null
      ? `DATABASE ${quoteIdent(database)}`
      : `ROLE ${quoteIdent(setting.role)} IN DATABASE ${quoteIdent(database)}`;
  let value: string;
  if (LIST_QUOTE.has(setting.name.toLowerCase())) {
    const elements = splitGucList(setting.value);
    if (elements === undefined) {
      throw new Error(`The stored value of ${setting.name} is not a list PostgreSQL writes: ${setting.value}`);
    }
    // An empty list is written as '' (pg_dump writes nothing after TO, which the server refuses).
    value = elements.length === 0 ? "''" : elements.map(quoteLiteral).join(', ');
  } else {
    value = quoteLiteral(setting.value);
  }
  return `ALTER ${target} SET ${quoteIdent(setting.name)} TO ${value}`;
}

/** The settings of `database`, per-database ones first, each in the order the server keeps them. */
export async function databaseSettings(db: Queryable, database: string): Promise<DatabaseSetting[]> {
  const { rows } = await db.query<{ role: string | null; entry: string }>(
    `SELECT r.rolname AS role, c.entry
       FROM pg_db_role_setting s
       JOIN pg_database d ON d.oid = s.setdatabase
       LEFT JOIN pg_roles r ON r.oid = s.setrole
       CROSS JOIN LATERAL unnest(s.setconfig) WITH ORDINALITY AS c(entry, n)
      WHERE d.datname = $1 AND (s.setrole = 0 OR r.oid IS NOT NULL)
      ORDER BY s.setrole <> 0, r.rolname, c.n`,
    [database],
  );
  return rows.flatMap((r) => {
    const parsed = parseSettingEntry(r.entry);
    return parsed ? [{ role: r.role, ...parsed }] : [];
  });
}

/**
 * Give `target` (a fresh copy of `source`, which has no settings of its own) every setting of
 * `source`. Issued by the provider's admin, which made `target` and so owns it: a setting only a
 * superuser (or a role granted SET on it) may make, or one for a role the admin may not alter, fails
 * with an error that says so — the branch would otherwise silently differ from its parent.
 */
export async function copyDatabaseSettings(db: Queryable, source: string, target: string): Promise<number> {
  const settings = await databaseSettings(db, source);
  for (const setting of settings) {
    try {
      await db.query(settingStatement(target, setting));
    } catch (e) {
      if (pgErrorCode(e) !== '42501') throw e;
      const what =
        setting.role === null
          ? `ALTER DATABASE … SET ${setting.name}`
          : `ALTER ROLE ${setting.role} IN DATABASE … SET ${setting.name}`;
      throw new ConsortError(
        'auth',
        `The branch cannot carry its parent's setting (${what}): the provider's admin may not make it (${e instanceof Error ? e.message : String(e)}).`,
        {
          hint: `Connect the provider as a superuser, GRANT SET ON PARAMETER ${setting.name} to its admin${setting.role === null ? '' : `, let the admin alter role ${setting.role}`}, or remove the setting from database "${source}".`,
          cause: e,
        },
      );
    }
  }
  return settings.length;
}
