/**
 * Every `npm run bench:*` script answers --help with its own documentation and a bad option with a
 * one-line error and exit code 2 (not parseArgs's stack trace).
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
