#!/usr/bin/env node
/**
 * The inputs and outputs tables of docs/action.md, generated from action.yml so the two never
 * disagree: `node scripts/gen-action-docs.mjs` rewrites the tables between their markers;
 * `--check` only compares (exit 1 when docs/action.md is stale; test/docs/action-docs.test.ts runs it).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const DOC = path.join(ROOT, 'docs', 'action.md');

/** One table cell: single line, pipes escaped (GitHub tables have no other quoting). */
const cell = (text) =>
  String(text ?? '')
    .trim()
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\|/g, '\\|');
const code = (text) => (text === undefined || text === '' ? '' : `\`${String(text).replace(/\|/g, '\\|')}\``);

export function renderTables(actionYml) {
  const action = parse(actionYml);
  const inputs = Object.entries(action.inputs ?? {}).map(
    ([name, i]) => `| \`${name}\` | ${i.required === true ? 'required' : code(i.default)} | ${cell(i.description)} |`,
  );
  const outputs = Object.entries(action.outputs ?? {}).map(([name, o]) => `| \`${name}\` | ${cell(o.description)} |`);
  return {
    inputs: ['| input | default | description |', '| --- | --- | --- |', ...inputs].join('\n'),
    outputs: ['| output | description |', '| --- | --- |', ...outputs].join('\n'),
  };
}

export function updateDoc(doc, tables) {
  let out = doc;
  for (const [name, table] of Object.entries(tables)) {
    const start = `<!-- ${name}:start (generated from action.yml by scripts/gen-action-docs.mjs; do not edit) -->`;
    const end = `<!-- ${name}:end -->`;
    const from = out.indexOf(start);
    const to = out.indexOf(end);
    if (from < 0 || to < from) throw new Error(`docs/action.md lacks the markers ${start} … ${end}`);
    out = `${out.slice(0, from + start.length)}\n${table}\n${out.slice(to)}`;
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const doc = readFileSync(DOC, 'utf8');
  const next = updateDoc(doc, renderTables(readFileSync(path.join(ROOT, 'action.yml'), 'utf8')));
  if (process.argv.includes('--check')) {
    if (next !== doc) {
      console.error('docs/action.md is out of date with action.yml: run node scripts/gen-action-docs.mjs');
      process.exitCode = 1;
    }
  } else if (next !== doc) {
    writeFileSync(DOC, next);
    console.log('docs/action.md updated');
  }
}
