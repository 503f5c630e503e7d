/**
 * Every place that lists the settings a check reads from the base side's configuration (never
 * the pull request's) names all of them: the `config` input of action.yml (and the docs/action.md
 * table generated from it), `check --config` in docs/cli.md, the opening of docs/configuration.md
 * and docs/security.md. The list is what src/lanes/check/trusted-config.ts really replaces, so a
 * key added there and left out of a description shows here.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import { parseConfigText } from '../../src/config/load.js';
import { defaultConfig } from '../../src/config/schema.js';
import { verdictSettings } from '../../src/lanes/check/base-settings.js';
import { trustedConfig } from '../../src/lanes/check/trusted-config.js';

const ROOT = process.cwd();
const read = (file: string) => readFile(path.join(ROOT, file), 'utf8');

/** A change's file that sets every base-side key to something other than the default. */
const HEAD = `
check:
  blocking: [lint]
  migrationsRole: admin
lint:
  rules: [prefer-robust-stmts]
  failOn: none
  severity: { ban-drop-column: warning }
reversibility:
  enabled: false
  requireDown: true
migrations:
  checkOrder: false
  ignorePattern: 'x.*'
  table: other_migrations
  schema: app
  createSchema: true
  migrationsSchema: meta
  createMigrationsSchema: true
  decamelize: true
database:
  parent: staging
  seed: { command: node seed.mjs }
suite:
  passEnv: [JWT_SECRET]
`;

function baseSideKeys(): string[] {
  const head = parseConfigText(HEAD, '.github/consort.yml');
  const base = {
    settings: { migrationsRole: 'branch' as const, source: null, verdict: verdictSettings(defaultConfig()) },
  };
  return ['check.migrationsRole', ...trustedConfig(head, base).ignored];
}

/** Whether `text` names `key`: spelled out, as `section.*`, or (after its section is named) as a bare `name`. */
function names(text: string, key: string): boolean {
  const [section, name] = key.split('.') as [string, string];
  const flat = text.replace(/\s+/g, ' ');
  return (
    flat.includes(key) ||
    flat.includes(`${section}.*`) ||
    (flat.includes(`${section}.`) && new RegExp(`\`${name}\``).test(flat))
  );
}

it('finds every base-side key, the ones added last among them', () => {
  const keys = baseSideKeys();
  expect(keys).toEqual(
    expect.arrayContaining(['migrations.decamelize', 'suite.passEnv', 'database.parent', 'database.seed']),
  );
  expect(keys.length).toBeGreaterThanOrEqual(15);
});

it.each([
  [
    'action.yml (the config input)',
    async () =>
      (parse(await read('action.yml')) as { inputs: { config: { description: string } } }).inputs.config.description,
  ],
  [
    'docs/cli.md (check --config)',
    async () => (await read('docs/cli.md')).split('\n').find((l) => l.startsWith('| `--config <path>` |'))!,
  ],
  [
    'docs/configuration.md (the opening)',
    async () => {
      const doc = await read('docs/configuration.md');
      return doc.slice(0, doc.indexOf('## Example'));
    },
  ],
  [
    'docs/security.md (the verdict by the base)',
    async () => {
      const doc = await read('docs/security.md');
      const at = doc.indexOf("**The check's verdict is judged by the base");
      return doc.slice(at, doc.indexOf('\n- ', at));
    },
  ],
])('%s names every setting read from the base side', async (_where, text) => {
  const said = await text();
  expect(said).toBeTruthy();
  expect(baseSideKeys().filter((key) => !names(said as string, key))).toEqual([]);
});
