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
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { quoteIdent, withClient, withDatabase } from '../../src/db/sql.js';
import { diffSchemas, isEmptyDiff } from '../../src/schema/diff.js';
import { renderSchemaDiffText } from '../../src/schema/render.js';
import { snapshotSchema, type SchemaSnapshot } from '../../src/schema/snapshot.js';

const ADMIN_URL = process.env.CONSORT_TEST_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
/**
 * The server's own major's pg_dump and psql, found once. On Debian `pg_dump` and `psql` on the PATH
 * are pg_wrapper, a Perl script that picks a version on every start: in a profile of the suite the
 * wrappers' Perl cost more CPU than the dumps themselves.
 */
async function clientBinary(name: 'pg_dump' | 'psql', override: string | undefined): Promise<string> {
  if (override) return override;
  const major = await withClient(ADMIN_URL, async (a) =>
    Math.floor(
      Number((await a.query<{ v: string }>("SELECT current_setting('server_version_num') AS v")).rows[0]!.v) / 10000,
    ),
  );
  const own = `/usr/lib/postgresql/${major}/bin/${name}`;
  return existsSync(own) ? own : name;
}
// Found on first use: the concurrent cases start before any beforeAll hook runs.
let binaries: Promise<{ pgDump: string; psql: string }> | undefined;
const clients = () =>
  (binaries ??= Promise.all([
    clientBinary('pg_dump', process.env.CONSORT_TEST_PG_DUMP),
    clientBinary('psql', process.env.CONSORT_TEST_PSQL),
  ]).then(([pgDump, psql]) => ({ pgDump, psql })));
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

/** What a child gets: only what it needs, never the test runner's whole environment. */
const CHILD_ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', PGCONNECT_TIMEOUT: '10' };

function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: CHILD_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} exited ${code}: ${err}`))));
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
const dropDatabase = (db: string): Promise<unknown> =>
  withClient(ADMIN_URL, (a) => a.query(`DROP DATABASE IF EXISTS ${quoteIdent(db)} WITH (FORCE)`));

async function createDatabase(template: string): Promise<string> {
  const db = `corpus_${randomBytes(6).toString('hex')}`;
  await ensureRole();
  await withClient(ADMIN_URL, (a) => a.query(`CREATE DATABASE ${quoteIdent(db)} TEMPLATE ${quoteIdent(template)}`));
  return db;
}

/** Where the cases' scripts are written for psql's `\i`; made on first use, removed in afterAll. */
let scripts: Promise<string> | undefined;
const scriptDir = (): Promise<string> => (scripts ??= mkdtemp(path.join(os.tmpdir(), 'consort-corpus-')));

/**
 * One psql for a database's scripts, instead of one psql each: every script is run with `\i`
 * (as `psql -f` runs a file: a last statement without `;` still goes out at its end) in a fresh
 * connection (`\connect`), stopping at the first error (ON_ERROR_STOP), and `\warn` (stderr,
 * unbuffered) says when it is done.
 */
function psqlSession(psqlBinary: string, url: string, name: string) {
  const child = spawn(psqlBinary, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', url, '-f', '-'], {
    env: CHILD_ENV,
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  child.stdin.on('error', () => undefined); // a psql that stopped at an error: reported as it exits
  let err = '';
  let waiting: { marker: string; resolve: () => void; reject: (e: Error) => void } | undefined;
  let ended: Error | undefined;
  const closed = new Promise<void>((resolve) => {
    const end = (e: Error): void => {
      ended ??= e;
      waiting?.reject(ended);
      resolve();
    };
    child.on('error', end);
    child.on('close', (code) => end(new Error(`${psqlBinary} exited ${code}: ${err}`)));
  });
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString();
    const at = waiting === undefined ? -1 : err.indexOf(`${waiting.marker}\n`);
    if (at < 0) return;
    err = err.slice(at + waiting!.marker.length + 1);
    const { resolve } = waiting!;
    waiting = undefined;
    resolve();
  });
  let n = 0;
  return {
    async run(sql: string): Promise<void> {
      if (ended) throw ended;
      const file = path.join(await scriptDir(), `${name}.${++n}.sql`);
      await writeFile(file, sql.replaceAll('{{reader}}', role));
      const marker = `consort: script ${n} done`;
      const done = new Promise<void>((resolve, reject) => (waiting = { marker, resolve, reject }));
      child.stdin.write(`${n > 1 ? '\\connect\n' : ''}\\i '${file}'\n\\warn ${marker}\n`);
      await done;
    },
    async close(): Promise<void> {
      child.stdin.end();
      await closed;
    },
  };
}

/**
 * `work` with a database's psql (`script`) and its points (`point`): Consort's snapshot, on one
 * connection for them all, and pg_dump's dump, side by side (they read the same unchanging schema).
 */
async function inDatabase<T>(
  db: string,
  work: (script: (sql: string) => Promise<void>, point: () => Promise<Point>) => Promise<T>,
): Promise<T> {
  const url = withDatabase(ADMIN_URL, db);
  const { pgDump, psql: psqlBinary } = await clients();
  const psql = psqlSession(psqlBinary, url, db);
  try {
    return await withClient(url, (client) =>
      work(
        (sql) => psql.run(sql),
        async () => {
          const [snapshot, dump] = await Promise.all([
            snapshotSchema(client),
            run(pgDump, ['--schema-only', '--no-tablespaces', '-d', url]),
          ]);
          return { snapshot, dump: normalizeDump(dump) };
        },
      ),
    );
  } finally {
    await psql.close();
  }
}

/**
 * A base several cases share (most start from the same users and orders) is set up once, in a
 * database of its own, and its point read there; each of those cases then starts from a copy of
 * it (CREATE DATABASE … TEMPLATE) instead of running the base and reading its point again. A base
 * no other case has is run in the case's own database.
 */
const sharers = new Map<string, number>();
for (const c of cases) sharers.set(c.base, (sharers.get(c.base) ?? 0) + 1);
const sharedBases = new Map<string, Promise<{ db: string; point: Point }>>();
const baseDatabases: string[] = [];

function sharedBase(sql: string): Promise<{ db: string; point: Point }> {
  let base = sharedBases.get(sql);
  if (!base) {
    base = (async () => {
      const db = await createDatabase('template0');
      baseDatabases.push(db);
      // Closed before the copies are made: CREATE DATABASE wants no one else connected to its template.
      const point = await inDatabase(db, async (script, point) => {
        await script(sql);
        return point();
      });
      return { db, point };
    })();
    sharedBases.set(sql, base);
  }
  return base;
}

async function caseOutcomes(c: Case): Promise<Outcome[]> {
  const base = (sharers.get(c.base) ?? 0) > 1 ? await sharedBase(c.base) : undefined;
  const db = await createDatabase(base?.db ?? 'template0');
  try {
    const [before, up, down] = await inDatabase(db, async (script, point) => {
      let before = base?.point;
      if (before === undefined) {
        await script(c.base);
        before = await point();
      }
      await script(c.up);
      const up = await point();
      await script(c.down);
      return [before, up, await point()] as const;
    });
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
    drops.push(dropDatabase(db));
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
    await Promise.all(baseDatabases.map(dropDatabase));
    await roleCreated;
    await withClient(ADMIN_URL, (a) => a.query(`DROP ROLE IF EXISTS ${quoteIdent(role)}`));
    if (scripts) await rm(await scripts, { recursive: true, force: true });
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
