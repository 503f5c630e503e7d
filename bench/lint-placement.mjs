/**
 * How many statements of the JS/TS migrations in test/fixtures/locate-corpus and in the
 * histories of test/fixtures/histories the check's lint annotations place on the `pgm.*` call that sent them. Each migration runs through
 * node-pg-migrate's real MigrationBuilder (with a `db` that records `pgm.db.query`), up and down
 * (a missing down is up in reverse, as node-pg-migrate infers it); the call that sent a step is
 * read from the stack when the builder method ran, which is the truth `locateStatements` guesses.
 *
 *   npm run bench:lint-placement -- [--write] [--verbose] [--dir DIR]
 *
 * `--dir DIR` measures the JS/TS migrations of DIR instead (a project's own migrations folder, or a
 * held-out set the locator was not tuned on).
 *
 * `--write` stores the statements and their calls' lines in the corpus's expected.json, which
 * test/lint/locate-corpus.test.ts checks the locator against.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createJiti } from 'jiti';
import { MigrationBuilder } from 'node-pg-migrate/migrationBuilder';
import { locateStatements } from '../lib/src/lint/locate.js';
import { benchArgs } from './lib/args.js';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const corpusDir = path.join(root, 'test/fixtures/locate-corpus');
const histories = path.join(root, 'test/fixtures/histories');
const args = benchArgs(import.meta.url, {
  write: { type: 'boolean', default: false },
  verbose: { type: 'boolean', default: false },
  dir: { type: 'string' },
});
const only = args.dir === undefined ? undefined : path.resolve(args.dir);
const dirs = only
  ? [only]
  : [
      corpusDir,
      ...fs
        .readdirSync(histories)
        .map((h) => path.join(histories, h, 'migrations'))
        .filter((d) => fs.existsSync(d)),
    ];
process.setSourceMapsEnabled(true);
const jiti = createJiti(import.meta.url, { sourceMaps: true, moduleCache: false, fsCache: false });
/** A row whose every column is 0: enough for a migration that reads a count before choosing its steps. */
const zeros = new Proxy({}, { get: (_target, prop) => (prop === 'then' ? undefined : 0) });
const silent = { info() {}, warn() {}, error() {}, debug() {} };

/** The line in `file` of the innermost frame of the stack that is in it. */
function callerLine(stack, file) {
  for (const frame of stack.split('\n').slice(1)) {
    const m = /(?:\(|at )(?:file:\/\/)?(\/[^()]*?):(\d+):\d+\)?$/.exec(frame.trim());
    if (m && path.resolve(decodeURIComponent(m[1])) === file) return Number(m[2]);
  }
  return undefined;
}

/** The statements a direction sends, each with the line of the call that queued or sent it. */
async function run(file, mod, direction) {
  const sent = [];
  const db = {
    query: async (text) => {
      sent.push({ statement: typeof text === 'string' ? text : text.text, line: callerLine(new Error().stack, file) });
      return { rows: [zeros], rowCount: 1 };
    },
    select: async () => [],
  };
  db.select = async (text) => (await db.query(text)).rows;
  const pgm = new MigrationBuilder(db, mod.shorthands, false, silent);
  const lines = [];
  const traced = new Proxy(pgm, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (typeof value !== 'function' || prop === 'func') return value;
      return (...args) => {
        const before = target._steps.length;
        const result = value.apply(target, args);
        const line = callerLine(new Error().stack, file);
        for (let i = before; i < target._steps.length; i += 1) lines[i] = line;
        return result;
      };
    },
  });
  let action = direction === 'up' ? mod.up : mod.down;
  if (direction === 'down' && mod.down === undefined) {
    pgm.enableReverseMode();
    action = mod.up;
  }
  if (typeof action !== 'function') return [];
  await action(traced, () => undefined);
  const steps = pgm._steps.map((statement, i) => ({ statement, line: lines[i] }));
  if (pgm._REVERSE_MODE) steps.reverse();
  return [...sent, ...steps];
}

export async function corpus() {
  const out = [];
  const files = dirs.flatMap((d) =>
    fs
      .readdirSync(d)
      .filter((f) => /\.(c|m)?(j|t)s$/.test(f))
      .sort()
      .map((f) => path.join(d, f)),
  );
  for (const file of files) {
    const name = path.relative(corpusDir, file);
    const mod = await jiti.import(file);
    const source = fs.readFileSync(file, 'utf8');
    for (const direction of ['up', 'down']) {
      const steps = await run(file, mod.default?.up ? mod.default : mod, direction);
      if (steps.length > 0) out.push({ file: name, direction, source, steps });
    }
  }
  return out;
}

const migrations = await corpus();
const tally = { up: [0, 0, 0, 0], down: [0, 0, 0, 0] }; // statements, right line, wrong line, first line
for (const m of migrations) {
  const placed = locateStatements(
    m.source,
    m.steps.map((s) => s.statement),
    m.direction,
  );
  m.steps.forEach((s, i) => {
    const p = placed[i];
    const t = tally[m.direction];
    t[0] += 1;
    const verdict = !p.exact ? 'first line' : p.line === s.line ? 'right' : 'WRONG';
    t[verdict === 'right' ? 1 : verdict === 'WRONG' ? 2 : 3] += 1;
    if (args.verbose && verdict !== 'right')
      console.log(
        `${m.file} ${m.direction} ${verdict}: call line ${s.line}, placed ${p.line}: ${s.statement.replace(/\s+/g, ' ').slice(0, 110)}`,
      );
  });
}
for (const [direction, [n, right, wrong, first]] of Object.entries(tally))
  console.log(
    `${direction}: ${n} statements in ${migrations.filter((m) => m.direction === direction).length} migrations: ${right} on their call, ${wrong} on another line, ${first} on line 1 (quoted)`,
  );
if (args.write && !only) {
  const expected = migrations.map(({ file, direction, steps }) => ({ file, direction, steps }));
  fs.writeFileSync(path.join(corpusDir, 'expected.json'), `${JSON.stringify(expected, null, 1)}\n`);
}
