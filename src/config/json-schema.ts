/**
 * The editor-facing JSON Schema, generated from the zod schema so the two cannot disagree.
 * `schema/consort.schema.json` is a committed copy (written by `scripts/gen-config-schema.mjs`);
 * a test compares it with `configJsonSchemaText()` so it cannot go stale.
 */
import { z } from 'zod';
import { ConsortConfigSchema } from './schema.js';

export const CONFIG_SCHEMA_FILE = 'schema/consort.schema.json';

/**
 * The schema of what users write (`io: 'input'`): defaults are documented as `default`, not
 * required, and transforms (e.g. a single report glob becoming a list) are described by their input.
 */
export function configJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(ConsortConfigSchema, { io: 'input', target: 'draft-2020-12' });
}

/** Exactly the bytes of the committed file: pretty-printed with a trailing newline. */
export function configJsonSchemaText(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}
