/**
 * Every statement of the locate corpus (test/fixtures/locate-corpus, and the JS/TS migrations of
 * test/fixtures/histories) lands on the call that sent it. expected.json holds what node-pg-migrate's
 * real MigrationBuilder sent for each migration, up and down, and the line of the call that queued
 * each step, read from the stack: `node bench/lint-placement.mjs --write` makes it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { locateStatements } from '../../src/lint/locate.js';

const dir = path.join(process.cwd(), 'test/fixtures/locate-corpus');
const corpus = JSON.parse(fs.readFileSync(path.join(dir, 'expected.json'), 'utf8')) as {
  file: string;
  direction: 'up' | 'down';
  steps: { statement: string; line: number }[];
}[];

describe('locateStatements on the corpus', () => {
  it('covers both directions of every kind of source', () => {
    expect(corpus.filter((m) => m.direction === 'up').length).toBeGreaterThanOrEqual(50);
    expect(corpus.flatMap((m) => m.steps).length).toBeGreaterThanOrEqual(290);
  });

  it.each(corpus.map((m) => [`${m.file} ${m.direction}`, m] as const))('%s', (_name, m) => {
    const source = fs.readFileSync(path.join(dir, m.file), 'utf8');
    const placed = locateStatements(
      source,
      m.steps.map((s) => s.statement),
      m.direction,
    );
    expect(placed).toEqual(m.steps.map((s) => ({ line: s.line, exact: true })));
  });
});
