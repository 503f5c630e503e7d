#!/usr/bin/env node
/**
 * docs/tdd-lane.md's conductor state diagram, generated from the step table (src/conductor/steps.ts)
 * so the two never disagree: `npm run build && node scripts/gen-conductor-diagram.mjs` rewrites the
 * block between its markers; `--check` only compares (exit 1 when the document is stale).
 * test/docs/conductor-diagram.test.ts checks the same against the sources.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const DOC = path.join(ROOT, 'docs', 'tdd-lane.md');
const BUILT = path.join(ROOT, 'lib', 'src', 'conductor', 'diagram.js');

if (!existsSync(BUILT)) {
  console.error('lib/src/conductor/diagram.js is missing: run npm run build first');
  process.exit(1);
}
const { renderStepDiagram, updateDiagram } = await import(pathToFileURL(BUILT).href);
const doc = readFileSync(DOC, 'utf8');
const next = updateDiagram(doc, renderStepDiagram());
if (process.argv.includes('--check')) {
  if (next !== doc) {
    console.error(
      'docs/tdd-lane.md is out of date with src/conductor/steps.ts: run npm run build && node scripts/gen-conductor-diagram.mjs',
    );
    process.exitCode = 1;
  }
} else if (next !== doc) {
  writeFileSync(DOC, next);
  console.log('docs/tdd-lane.md updated');
}
