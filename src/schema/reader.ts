/** The SchemaReader port's adapter: one connection per read, the catalog queries of snapshot.ts and lint/context.ts. */
import { withClient } from '../db/sql.js';
import { readRelations } from '../lint/context.js';
import type { SchemaReader } from '../ports/schema-reader.js';
import { snapshotSchema } from './snapshot.js';

export const pgSchemaReader: SchemaReader = {
  snapshot: (url, options) => withClient(url, (db) => snapshotSchema(db, options)),
  relations: (url) => withClient(url, readRelations),
};
