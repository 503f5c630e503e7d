import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { CONFIG_SCHEMA_FILE, configJsonSchema, configJsonSchemaText } from '../../src/config/json-schema.js';

describe('the committed JSON Schema', () => {
  // To regenerate: npx tsc -p tsconfig.build.json && node scripts/gen-config-schema.mjs
  it('matches the zod schema', async () => {
    const committed = await readFile(fileURLToPath(new URL(`../../${CONFIG_SCHEMA_FILE}`, import.meta.url)), 'utf8');
    expect(committed).toBe(configJsonSchemaText());
  });

  it('describes what users write: closed objects, defaults, and input forms', () => {
    const schema = configJsonSchema() as {
      additionalProperties: boolean;
      properties: Record<string, { properties: Record<string, Record<string, unknown>>; additionalProperties: false }>;
    };
    expect(schema.additionalProperties).toBe(false);
    const sections = [
      '$schema',
      'database',
      'migrations',
      'suite',
      'lint',
      'reversibility',
      'check',
      'roles',
      'agents',
      'gates',
      'build',
      'pairing',
    ];
    expect(Object.keys(schema.properties)).toEqual(sections);
    const database = schema.properties['database'];
    expect(database?.additionalProperties).toBe(false);
    const providers = ['local', 'postgres', 'lakebase', 'neon'];
    expect(database?.properties['provider']).toMatchObject({ default: 'local', enum: providers });
    expect(database?.properties).not.toHaveProperty('postgres');
    expect(schema.properties['suite']?.properties['reports']).toHaveProperty('anyOf');
    expect(schema.properties['suite']?.properties['timeout']).toMatchObject({ default: '15m', type: 'string' });
    expect(configJsonSchemaText().endsWith('}\n')).toBe(true);
  });
});
