/**
 * The benchmarks' command lines: node's parseArgs, plus `-h/--help` (the script's own header
 * comment, which documents its options) and a one-line error with exit code 2 for an unknown or
 * malformed option, instead of parseArgs's stack trace.
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

/**
 * `parseArgs({ options })` for the script at `scriptUrl` (its import.meta.url); prints the help
 * and exits 0 on -h/--help, prints the problem and exits 2 on a bad command line.
 */
export function benchArgs(scriptUrl, options = {}, argv = process.argv.slice(2)) {
  const file = fileURLToPath(scriptUrl);
  try {
    const { values } = parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } } });
    if (values.help) {
      process.stdout.write(`${headerOf(file)}\n`);
      process.exit(0);
    }
    delete values.help;
    return values;
  } catch (e) {
    if (typeof e?.code === 'string' && e.code.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${e.message.split('\n')[0]} (try --help)\n`);
      process.exit(2);
    }
    throw e;
  }
}
