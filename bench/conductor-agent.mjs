#!/usr/bin/env node
/**
 * The scripted agent `npm run bench:conductor` drives: every role does the least it can, instantly,
 * so what is measured is the conductor (branches, migrations, git, packs, proofs), not a model.
 * Items T1..Tn each get a test file asserting a function of src/bench.js; GREEN adds the function
 * (and for T1 a migration, so every later branch has one to apply, as in a real feature),
 * REFACTOR touches its comment (so every cycle has all three proofs), REVIEW approves.
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const env = process.env;
const items = Number(env.BENCH_ITEMS ?? 4);
// How long a turn "thinks" (agent time, excluded from the overhead): real agents take minutes.
await new Promise((resolve) => setTimeout(resolve, Number(env.BENCH_THINK_MS ?? 0)));
const pack = JSON.parse(readFileSync(env.CONSORT_CONTEXT, 'utf8'));
const dir = `.consort/features/${env.CONSORT_FEATURE}`;
const item = env.CONSORT_ITEM;
const n = item ? Number(item.slice(1)) : 0;
const write = (file, text) => {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
};
const json = (file, value) => write(`${dir}/${file}`, `${JSON.stringify(value, null, 2)}\n`);
const range = Array.from({ length: items }, (_, i) => i + 1);

switch (`${env.CONSORT_ROLE}/${env.CONSORT_STEP}`) {
  case 'spec-author/spec':
    json('feature-spec.json', {
      version: 1,
      title: 'Bench',
      summary: 'Benchmark feature.',
      userFacing: false,
      stories: [
        {
          id: 'S1',
          title: 'bench',
          acceptanceCriteria: range.map((i) => ({ id: `AC${i}`, given: 'x', when: 'y', then: 'z', layer: 'API' })),
        },
      ],
    });
    break;
  case 'architect-reviewer/architecture':
    json('architecture.json', { version: 1, summary: 's', components: [], invariants: [], nonFunctional: [] });
    break;
  case 'dba/db-design':
    json('db-design.json', { version: 1, summary: 's', tables: [], migrations: [] });
    break;
  case 'test-strategist/test-list':
    json('test-list.json', {
      version: 1,
      items: range.map((i) => ({ id: `T${i}`, ac: `AC${i}`, kind: 'behavior', title: `f${i}`, status: 'pending' })),
    });
    break;
  case 'navigator/red':
    write(
      `test/bench-t${n}.test.js`,
      `import { expect, test } from '@jest/globals';\nimport * as bench from '../src/bench.js';\n\ntest('T${n} f${n} answers ${n}', () => {\n  expect(bench.f${n}?.()).toBe(${n});\n});\n`,
    );
    break;
  case 'driver/green':
    // Like a real feature, the first item also changes the schema: every later branch must apply it.
    if (n === 1)
      write(
        'migrations/1730000400000_add_customer_note.sql',
        "-- Up Migration\nSET LOCAL lock_timeout = '1s';\nALTER TABLE customers ADD COLUMN note text;\n\n-- Down Migration\nALTER TABLE customers DROP COLUMN note;\n",
      );
    appendFileSync('src/bench.js', `\n/** f${n} */\nexport function f${n}() {\n  return ${n};\n}\n`);
    break;
  case 'driver/refactor':
    write('src/bench.js', readFileSync('src/bench.js', 'utf8').replace(`/** f${n} */`, `/** f${n}: answers ${n}. */`));
    break;
  case 'navigator/review':
    json(`reviews/${item}.json`, { version: 1, item, verdict: 'approve', notes: 'ok' });
    break;
  default:
    throw new Error(`no script for ${env.CONSORT_ROLE}/${env.CONSORT_STEP} (attempt ${pack.attempt})`);
}
