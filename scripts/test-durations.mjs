#!/usr/bin/env node
/**
 * `npm run test:durations [-- results.json]`: write test/setup/durations.json, the relative weight of
 * every test file that test/setup/sequencer.mjs uses to start the longest files first on a machine
 * whose jest cache is empty. Reads a `jest --json --outputFile=…` result (default: runs the whole
 * suite that way first). Weights are seconds rounded to one decimal; only their order matters.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let input = process.argv[2];
if (input === '--help' || input === '-h') {
  process.stdout.write('Usage: npm run test:durations [-- <jest --json result file>]\n');
  process.exit(0);
}
if (!input) {
  input = path.join(os.tmpdir(), `consort-jest-${process.pid}.json`);
  process.stderr.write(`running the whole suite (jest --json) into ${input}…\n`);
  try {
    execFileSync(
      process.execPath,
      ['--experimental-vm-modules', 'node_modules/jest/bin/jest.js', '--json', `--outputFile=${input}`],
      { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] },
    );
  } catch {
    process.stderr.write('some tests failed; their durations are recorded all the same\n');
  }
}
const result = JSON.parse(readFileSync(input, 'utf8'));
const files = {};
for (const file of result.testResults ?? []) {
  const seconds = (file.perfStats?.runtime ?? file.endTime - file.startTime) / 1000;
  // Relative to the repository the run was made in (it may be another checkout of it).
  let rel = path.relative(root, file.name).split(path.sep).join('/');
  if (rel.startsWith('../')) rel = file.name.slice(file.name.search(/\/test\/.*\.test\.ts$/) + 1);
  files[rel] = Math.round(seconds * 10) / 10;
}
const sorted = Object.fromEntries(Object.entries(files).sort(([a], [b]) => (a < b ? -1 : 1)));
const out = path.join(root, 'test', 'setup', 'durations.json');
writeFileSync(
  out,
  `${JSON.stringify({ about: 'relative weights for test/setup/sequencer.mjs; npm run test:durations', files: sorted }, null, 2)}\n`,
);
process.stderr.write(`wrote ${path.relative(root, out)} (${Object.keys(sorted).length} files)\n`);
