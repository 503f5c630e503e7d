#!/usr/bin/env node
/**
 * Writes test/setup/durations.json (each test file's seconds in a whole run) from jest's --json
 * report, for the suite's sequencer (test/setup/sequencer.mjs): on a machine whose jest cache has no
 * timings it starts the slowest files first.
 *   npm test -- --json --outputFile=/tmp/jest.json && node scripts/test-durations.mjs /tmp/jest.json
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const [report] = process.argv.slice(2);
if (!report || report === '--help' || report === '-h') {
  console.log('usage: node scripts/test-durations.mjs <jest --json report>');
  process.exit(report ? 0 : 2);
}
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { testResults } = JSON.parse(readFileSync(report, 'utf8'));
// The report may come from another checkout (a worktree): its files are named from the folder holding
// test/, the longest path every file shares up to its last /test/.
const names = testResults.map((t) => t.name.split(path.sep).join('/'));
let common = names[0] ?? '';
for (const n of names) while (!n.startsWith(common)) common = common.slice(0, -1);
const cut = common.lastIndexOf('/test/');
if (cut < 0) throw new Error(`${report}: its test files share no test/ folder`);
const rows = testResults
  .map((t, i) => ({ file: names[i].slice(cut + 1), seconds: Math.round((t.endTime - t.startTime) / 100) / 10 }))
  .sort((a, b) => (a.file < b.file ? -1 : 1));
const durations = Object.fromEntries(rows.map((r) => [r.file, r.seconds]));
const out = path.join(root, 'test/setup/durations.json');
writeFileSync(out, `${JSON.stringify(durations, null, 2)}\n`);
console.log(`wrote ${Object.keys(durations).length} files' durations to ${path.relative(process.cwd(), out)}`);
