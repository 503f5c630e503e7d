// Writes schema/consort.schema.json from the built zod schema.
// Run after `npx tsc -p tsconfig.build.json`; test/config/json-schema.test.ts fails when it is stale.
import { writeFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_SCHEMA_FILE, configJsonSchemaText } from '../lib/src/config/json-schema.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = join(root, CONFIG_SCHEMA_FILE);
await mkdir(dirname(target), { recursive: true });
await writeFile(target, configJsonSchemaText());
console.log(`wrote ${CONFIG_SCHEMA_FILE}`);
