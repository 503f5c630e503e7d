/**
 * Consort's schema diff against `pg_dump --schema-only`, on a corpus of migrations with their
 * downs (test/fixtures/schema-corpus): extensions, enums with ADD VALUE, materialized views,
 * PL/pgSQL triggers, backfills, CONCURRENTLY, renames, domains, composite and range types,
 * collations, generated and identity columns, partitions, RLS, grants, default privileges,
 * comments. For every before/after pair (base → up, base → up → down) the diff must be empty
 * exactly when the normalized dumps are equal, and each down must restore (or not) as the
 * fixture says. Runs against the server at 127.0.0.1:5432 with the pg_dump of the same major.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { quoteIdent, withClient, withDatabase } from '../../src/db/sql.js';
import { diffSchemas, isEmptyDiff } from '../../src/schema/diff.js';
import { renderSchemaDiffText } from '../../src/schema/render.js';
import { snapshotSchema, type SchemaSnapshot } from '../../src/schema/snapshot.js';

const ADMIN_URL = process.env.CONSORT_TEST_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const PG_DUMP = process.env.CONSORT_TEST_PG_DUMP ?? 'pg_dump';
const PSQL = process.env.CONSORT_TEST_PSQL ?? 'psql';
const CORPUS = path.join(process.cwd(), 'test/fixtures/schema-corpus');

interface Case {
  name: string;
  expect: 'restored' | 'not-restored';
  base: string;
  up: string;
  down: string;
}

function readCase(file: string): Case {
  const text = readFileSync(path.join(CORPUS, file), 'utf8');
  const m = /^-- expect: (restored|not-restored)\n-- base\n([\s\S]*?)\n-- up\n([\s\S]*?)\n-- down\n([\s\S]*)$/.exec(
    text,
  );
  if (!m) throw new Error(`${file}: expected "-- expect:", "-- base", "-- up" and "-- down" sections`);
  return { name: file.replace(/\.sql$/, ''), expect: m[1] as Case['expect'], base: m[2]!, up: m[3]!, down: m[4]! };
}

const cases = readdirSync(CORPUS)
  .filter((f) => f.endsWith('.sql'))
  .sort()
  .map(readCase);
const role = `consort_corpus_${randomBytes(4).toString('hex')}`;
// Created on first use: concurrent tests may start before beforeAll hooks run.
let roleCreated: Promise<unknown> | undefined;
const ensureRole = (): Promise<unknown> =>
  (roleCreated ??= withClient(ADMIN_URL, (a) => a.query(`CREATE ROLE ${quoteIdent(role)} NOLOGIN`)));

/** A child with only what it needs: never the test runner's whole environment. */
function run(cmd: string, args: string[], input = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PGCONNECT_TIMEOUT: '10' } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} exited ${code}: ${err}`))));
    child.stdin.end(input);
  });
}

/**
 * One chunk per pg_dump TOC entry (each starts with a `-- Name:` header), comments, blank lines
 * and session settings dropped, chunks sorted: what remains is the schema, not the dump's layout.
 */
export function normalizeDump(dump: string): string {
  const chunks: string[][] = [[]];
  for (const line of dump.split('\n')) {
    if (line.startsWith('-- Name:')) chunks.push([]);
    // `\restrict <key>` (pg_dump 15.14+, 18) carries a random key per dump.
    if (line.startsWith('--') || line.trim() === '' || /^SET \w+ = /.test(line) || /^\\(un)?restrict\b/.test(line))
      continue;
    if (line.startsWith('SELECT pg_catalog.set_config(')) continue;
    chunks[chunks.length - 1]!.push(line);
  }
  return chunks
    .map((c) => c.join('\n'))
    .filter((c) => c !== '')
    .sort()
    .join('\n\n');
}

interface Point {
  snapshot: SchemaSnapshot;
  dump: string;
}
interface Outcome {
  pair: string;
  consortEmpty: boolean;
  dumpsEqual: boolean;
  diff: string;
}
const outcomes: Outcome[] = [];

/**
 * Databases are dropped in the background and awaited in afterAll: on PostgreSQL 15 every DROP
 * DATABASE waits for a checkpoint, and drops that overlap share one instead of each case waiting.
 */
const drops: Promise<unknown>[] = [];

async function caseOutcomes(c: Case): Promise<Outcome[]> {
  const db = `corpus_${randomBytes(6).toString('hex')}`;
  const url = withDatabase(ADMIN_URL, db);
  await ensureRole();
  await withClient(ADMIN_URL, (a) => a.query(`CREATE DATABASE ${quoteIdent(db)} TEMPLATE template0`));
  try {
    const psql = (sql: string) =>
      run(PSQL, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', url, '-f', '-'], sql.replaceAll('{{reader}}', role));
    // The snapshot and the dump read the same unchanging schema: side by side.
    const point = async (): Promise<Point> => {
      const [snapshot, dump] = await Promise.all([
        withClient(url, (db) => snapshotSchema(db)),
        run(PG_DUMP, ['--schema-only', '--no-tablespaces', '-d', url]),
      ]);
      return { snapshot, dump: normalizeDump(dump) };
    };
    await psql(c.base);
    const before = await point();
    await psql(c.up);
    const up = await point();
    await psql(c.down);
    const down = await point();
    const compare = (pair: string, a: Point, b: Point): Outcome => {
      const diff = diffSchemas(a.snapshot, b.snapshot);
      return {
        pair: `${c.name} ${pair}`,
        consortEmpty: isEmptyDiff(diff),
        dumpsEqual: a.dump === b.dump,
        diff: renderSchemaDiffText(diff),
      };
    };
    return [compare('base→up', before, up), compare('base→down', before, down)];
  } finally {
    drops.push(withClient(ADMIN_URL, (a) => a.query(`DROP DATABASE IF EXISTS ${quoteIdent(db)} WITH (FORCE)`)));
  }
}

/**
 * Every case's outcomes, computed CONCURRENCY cases at a time from the first test on (jest runs
 * only maxConcurrency = 5 concurrent tests at once; most of a case is spent waiting on the server,
 * psql and pg_dump). Each case is still its own test with its own assertions.
 */
const CONCURRENCY = 8;
let running: Map<string, Promise<Outcome[]>> | undefined;
function outcomesOf(c: Case): Promise<Outcome[]> {
  if (!running) {
    const results = new Map<string, Promise<Outcome[]>>();
    const queue = [...cases];
    const starts = new Map<string, () => void>();
    for (const k of queue)
      results.set(
        k.name,
        new Promise<void>((go) => starts.set(k.name, go)).then(() => caseOutcomes(k)),
      );
    const worker = async (): Promise<void> => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        starts.get(next.name)!();
        await results.get(next.name)!.catch(() => undefined); // its own test reports the failure
      }
    };
    for (let i = 0; i < CONCURRENCY; i++) void worker();
    running = results;
  }
  return running.get(c.name)!;
}

describe('schema diff agrees with pg_dump --schema-only on the migration corpus', () => {
  afterAll(async () => {
    await Promise.allSettled(running?.values() ?? []);
    await Promise.all(drops);
    await roleCreated;
    await withClient(ADMIN_URL, (a) => a.query(`DROP ROLE IF EXISTS ${quoteIdent(role)}`));
  });

  // Each case has its own database, so they run side by side (CONCURRENCY at a time).
  it.concurrent.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const [up, down] = await outcomesOf(c);
    outcomes.push(up!, down!);
    for (const o of [up!, down!]) {
      // Printed on failure: which side saw a difference, and what Consort saw.
      expect({ pair: o.pair, consortEmpty: o.consortEmpty, diff: o.diff }).toEqual({
        pair: o.pair,
        consortEmpty: o.dumpsEqual,
        diff: o.diff,
      });
    }
    expect(down!.consortEmpty ? 'restored' : 'not-restored').toBe(c.expect);
  });

  it('covers at least 30 pairs, both outcomes, and agrees on every one', () => {
    expect(cases.length).toBeGreaterThanOrEqual(30);
    expect(outcomes).toHaveLength(cases.length * 2);
    const agreed = outcomes.filter((o) => o.consortEmpty === o.dumpsEqual).length;
    expect(`${agreed}/${outcomes.length}`).toBe(`${outcomes.length}/${outcomes.length}`);
    expect(outcomes.some((o) => o.consortEmpty)).toBe(true);
    expect(outcomes.some((o) => !o.consortEmpty)).toBe(true);
  });
});

describe('normalizeDump', () => {
  it('ignores entry order, comments and settings but not content', () => {
    const a =
      '\\restrict abc\nSET x = 1;\n--\n-- Name: a; Type: TABLE\n--\nCREATE TABLE a ();\n--\n-- Name: b; Type: TABLE\n--\nCREATE TABLE b ();\n';
    const b =
      '--\n-- Name: b; Type: TABLE\n--\nCREATE TABLE b ();\n--\n-- Name: a; Type: TABLE\n--\nCREATE TABLE a ();\n\\unrestrict def\n';
    expect(normalizeDump(a)).toBe(normalizeDump(b));
    expect(normalizeDump(a)).not.toBe(normalizeDump(b.replace('b ()', 'b (x int)')));
  });
});
