/**
 * Every `npm run bench:*` script answers --help with its own documentation and a bad option with a
 * one-line error and exit code 2 (not parseArgs's stack trace); a count such as --runs is checked
 * before the benchmark starts, never run as NaN.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { execFileAsync } from '../helpers/exec-file.js';

const root = process.cwd();
const scripts = Object.entries(
  JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).scripts as Record<string, string>,
)
  .filter(([name]) => name.startsWith('bench:'))
  .flatMap(([, command]) => [...command.matchAll(/node (bench\/[\w.-]+\.m?js)/g)].map((m) => m[1]!));

it('finds the benchmarks', () => {
  expect(scripts).toEqual(expect.arrayContaining(['bench/conductor.mjs', 'bench/branch.js']));
});

it.each(scripts)('%s reads its command line through bench/lib/args.js (or its own parser with --help)', (script) => {
  const text = readFileSync(path.join(root, script), 'utf8');
  expect(/benchArgs\(import\.meta\.url|parseOptions\(/.test(text)).toBe(true);
  expect(text).not.toMatch(/process\.argv\.indexOf/);
  // Counts are `type: 'integer'` options, checked by benchArgs, not Number()ed unchecked.
  expect(text).not.toMatch(/Number\((values|benchArgs)\b/);
  // So are counts from the environment (envInteger).
  expect(text).not.toMatch(/Number\(process\.env\b/);
});

it('a count from the environment that is not a whole number exits 2 with one line, before anything runs', async () => {
  const env = { PATH: process.env.PATH ?? '', TURNS: '1e3' };
  const bad = await execFileAsync(process.execPath, ['bench/dashboard.mjs'], { cwd: root, env }).then(
    () => null,
    (e: { code: number; stderr: string }) => e,
  );
  expect(bad?.code).toBe(2);
  expect(bad?.stderr.trim()).toBe('TURNS must be a whole number of at least 1, got "1e3" (try --help)');
});

it('--help prints the script header and exits 0; an unknown option exits 2 with one line', async () => {
  const env = { PATH: process.env.PATH ?? '' };
  const help = await execFileAsync(process.execPath, ['bench/spawn.mjs', '--help'], { cwd: root, env });
  expect(help.stdout).toMatch(/^npm run bench:spawn/);
  expect(help.stdout).toContain('--runs');
  const bad = await execFileAsync(process.execPath, ['bench/spawn.mjs', '--bogus'], { cwd: root, env }).then(
    () => null,
    (e: { code: number; stderr: string }) => e,
  );
  expect(bad?.code).toBe(2);
  expect(bad?.stderr.trim()).toBe("Unknown option '--bogus' (try --help)");
});

async function exitOf(args: string[]) {
  const env = { PATH: process.env.PATH ?? '' };
  return execFileAsync(process.execPath, args, { cwd: root, env }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
}

it.each([
  [['bench/spawn.mjs', '--runs', 'abc'], '--runs takes a whole number of at least 1, got "abc" (try --help)'],
  [['bench/spawn.mjs', '--runs', '0'], '--runs takes a whole number of at least 1, got "0" (try --help)'],
  [['bench/spawn.mjs', '--runs=-3'], '--runs takes a whole number of at least 1, got "-3" (try --help)'],
  [['bench/spawn.mjs', '--runs', '2.5'], '--runs takes a whole number of at least 1, got "2.5" (try --help)'],
  [['bench/check.mjs', '--runs', ''], '--runs takes a whole number of at least 1, got "" (try --help)'],
  [['bench/conductor.mjs', '--think', 'soon'], '--think takes a whole number (0 or more), got "soon" (try --help)'],
  [['bench/isolation.mjs', '--samples', '1e3'], '--samples takes a whole number of at least 1, got "1e3" (try --help)'],
])('a bad count exits 2 before anything runs, naming the option and the value: %j', async (args, says) => {
  const r = await exitOf(args);
  expect(r.code).toBe(2);
  expect(r.stderr.trim()).toBe(says);
  expect(r.stdout).toBe('');
});

it("benchArgs returns counts as numbers: the command line's, else the default; min 0 allows 0", async () => {
  const script = `
    import { benchArgs } from './bench/lib/args.js';
    const spec = { runs: { type: 'integer', default: 7 }, think: { type: 'integer', default: 0, min: 0 }, name: { type: 'string' } };
    const url = new URL('./bench/spawn.mjs', 'file://' + process.cwd() + '/').href;
    process.stdout.write(JSON.stringify([
      benchArgs(url, spec, []),
      benchArgs(url, spec, ['--runs', '12', '--think=0', '--name', 'x']),
    ]));`;
  const r = await exitOf(['--input-type=module', '-e', script]);
  expect(r.stderr).toBe('');
  expect(JSON.parse(r.stdout)).toEqual([
    { runs: 7, think: 0 },
    { runs: 12, think: 0, name: 'x' },
  ]);
});
