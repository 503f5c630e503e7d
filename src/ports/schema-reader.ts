/**
 * Reading a database's catalog: the snapshot the schema diff, the reversibility proof and the TDD
 * lane's context pack compare, and the relations the lint stage treats as live. The adapter is
 * src/schema/reader.ts (pgSchemaReader: catalog queries over a connection of its own); diffing and
 * rendering snapshots are pure (src/schema/diff.ts, render.ts) and stay plain imports.
 */
import type { BaseRelations } from '../lint/context.js';
import type { SchemaSnapshot, SnapshotOptions } from '../schema/snapshot.js';

export interface SchemaReader {
  /** The catalog snapshot of the database at `url` (credentials in it: never log it unmasked). */
  snapshot(url: string, options?: SnapshotOptions): Promise<SchemaSnapshot>;
  /** Its tables, views and materialized views, each as `schema.name` and as `name` (`materialized`: the last kind). */
  relations(url: string): Promise<BaseRelations>;
  /**
   * A reader that keeps one connection per URL for its reads (a new backend's catalog caches are
   * cold: a snapshot on a kept connection costs about half), until `release`.
   */
  open?(): SchemaSession;
}

/** A SchemaReader over kept connections: `release` ends them (before the branch is reset or dropped); it stays usable. */
export interface SchemaSession extends SchemaReader {
  release(): Promise<void>;
}
