/**
 * Where a branch physically lives: a database named after the branch, prefixed with the
 * namespace on shared servers so several projects can use one server without collisions.
 */
import { createHash } from 'node:crypto';
import { ConsortError } from '../core/errors.js';

const MAX_IDENTIFIER = 63;
/** Names Postgres itself owns; refused as branch names on every provider so names stay portable. */
export const RESERVED_BRANCH_NAMES = new Set(['postgres', 'template0', 'template1']);

export function assertNotReserved(name: string): void {
  if (RESERVED_BRANCH_NAMES.has(name)) {
    throw new ConsortError('invalid-input', `"${name}" is reserved by PostgreSQL and cannot be a branch name.`, {
      hint: `Use another name, e.g. "${name}-branch".`,
    });
  }
}

/** Namespaces become identifier prefixes: lowercase letters, digits and '_' only. */
export function sanitizeNamespace(input: string): string {
  const ns = input
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 24);
  return /^[a-z]/.test(ns) ? ns : `ns_${ns}`.replace(/_+$/, '');
}

export function databaseName(prefix: string, branch: string): string {
  const full = `${prefix}${branch}`;
  if (Buffer.byteLength(full) <= MAX_IDENTIFIER) return full;
  // Too long for an identifier: keep it readable and unique with a short hash of the full name.
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 8);
  return `${full.slice(0, MAX_IDENTIFIER - 9)}_${hash}`;
}

/** A scratch name for the copy that replaces a branch's database during `reset`. */
export function scratchDatabaseName(prefix: string, random: string): string {
  return `${prefix}consort_tmp_${random}`.slice(0, MAX_IDENTIFIER);
}

/**
 * What a branch's old database is renamed to when `reset` swaps in the new copy: dropped in the
 * background right after (off the caller's time), and by the next `gc` when the process that
 * renamed it died first. Nothing refers to it any more, so anyone may drop it at any time.
 */
export function asideDatabaseName(prefix: string, random: string): string {
  return `${prefix}consort_old_${random}`.slice(0, MAX_IDENTIFIER);
}

/** The prefix of every `asideDatabaseName` of a namespace (for sweeping them). */
export function asidePattern(prefix: string): string {
  return `${prefix}consort_old_`;
}
