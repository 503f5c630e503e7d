/**
 * The benchmarks' command lines: node's parseArgs, plus `-h/--help` (the script's own header
 * comment, which documents its options), counts checked before anything runs, and a one-line error
 * with exit code 2 for an unknown or malformed option or a bad count, instead of parseArgs's stack
 * trace or a run of NaN.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** The first comment of the script (a block comment or a run of // lines), without its markers. */
export function headerOf(file) {
  const text = readFileSync(file, 'utf8').replace(/^#!.*\n/, '');
  const block = /^(?:\/\* global [^*]*\*\/\s*)?\/\*\*?([\s\S]*?)\*\//.exec(text);
  if (block) return block[1].split('\n').map((l) => l.replace(/^\s*\* ?/, '')).join('\n').trim();
  const lines = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('//')) break;
    lines.push(line.replace(/^\/\/ ?/, ''));
  }
  return lines.join('\n').trim();
}

function usage(message) {
  process.stderr.write(`${message} (try --help)\n`);
  process.exit(2);
}

/**
 * `parseArgs({ options })` for the script at `scriptUrl` (its import.meta.url); prints the help
 * and exits 0 on -h/--help, prints the problem and exits 2 on a bad command line.
 *
 * Besides parseArgs's types, an option can be `{ type: 'integer', default: 7, min: 1 }`: a whole
 * number of at least `min` (1 unless given: runs, items, samples are counts), returned as a number.
 */
export function benchArgs(scriptUrl, options = {}, argv = process.argv.slice(2)) {
  const file = fileURLToPath(scriptUrl);
  const integers = Object.entries(options).filter(([, o]) => o.type === 'integer');
  const parsed = { ...options, help: { type: 'boolean', short: 'h' } };
  for (const [name, o] of integers)
    parsed[name] = {
      type: 'string',
      ...(o.short === undefined ? {} : { short: o.short }),
      ...(o.default === undefined ? {} : { default: String(o.default) }),
    };
  let values;
  try {
    ({ values } = parseArgs({ args: argv, options: parsed }));
  } catch (e) {
    if (typeof e?.code === 'string' && e.code.startsWith('ERR_PARSE_ARGS')) usage(e.message.split('\n')[0]);
    throw e;
  }
  if (values.help) {
    process.stdout.write(`${headerOf(file)}\n`);
    process.exit(0);
  }
  delete values.help;
  for (const [name, { min = 1 }] of integers) {
    const raw = values[name];
    if (raw === undefined) continue;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < min)
      usage(`--${name} takes a whole number ${min === 0 ? '(0 or more)' : `of at least ${min}`}, got ${JSON.stringify(raw)}`);
    values[name] = n;
  }
  return values;
}

/**
 * A count read from the environment (`BENCH_BURST_WEBHOOKS=500`): a whole number of at least
 * `min`, else a one-line error and exit code 2, as for a bad option (not a run of NaN).
 */
export function envInteger(name, fallback, min = 1) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min)
    usage(`${name} must be a whole number of at least ${min}, got ${JSON.stringify(raw)}`);
  return Number(raw);
}
