/** What a finding is about, from the span squawk 2.61 reports (the spans below are its own, from real runs). */
import { describeObjects, spanObject, statementObject } from '../../src/lint/objects.js';

describe('spanObject', () => {
  it.each([
    ['int', 'CREATE TABLE t (id bigint, a ', { kind: 'column', name: 'a' }],
    ['integer', 'CREATE TABLE "t" (\n  "id" bigint,\n  "Col ""x""" ', { kind: 'column', name: 'Col "x"' }],
    ['int', 'ALTER TABLE t ADD COLUMN IF NOT EXISTS g ', { kind: 'column', name: 'g' }],
    ['TYPE int', 'ALTER TABLE t ALTER COLUMN a ', { kind: 'column', name: 'a' }],
    ['int', 'ALTER TABLE t ALTER COLUMN a SET DATA TYPE ', { kind: 'column', name: 'a' }],
    ['SET NOT NULL', 'ALTER TABLE t ALTER COLUMN b ', { kind: 'column', name: 'b' }],
    ['ADD COLUMN g int NOT NULL', 'ALTER TABLE t ', { kind: 'column', name: 'g' }],
    ['ADD h text DEFAULT now()', 'ALTER TABLE t ADD COLUMN g int, ', { kind: 'column', name: 'h' }],
    ['DROP COLUMN a', 'ALTER TABLE t ', { kind: 'column', name: 'a' }],
    ['RENAME COLUMN b TO c', 'ALTER TABLE t ', { kind: 'column', name: 'b' }],
    ['ADD CONSTRAINT f FOREIGN KEY (a) REFERENCES u(id)', 'ALTER TABLE t ', { kind: 'constraint', name: 'f' }],
    ['FOREIGN KEY (a) REFERENCES u(id)', 'ALTER TABLE t ADD CONSTRAINT "F k" ', { kind: 'constraint', name: 'F k' }],
    ['ADD FOREIGN KEY (a) REFERENCES u(id)', 'ALTER TABLE t ', { kind: 'constraint', name: 'FOREIGN KEY (a)' }],
    ['UNIQUE (b)', 'ALTER TABLE t ADD ', { kind: 'constraint', name: 'UNIQUE (b)' }],
    ['DROP CONSTRAINT x', 'ALTER TABLE t ', { kind: 'constraint', name: 'x' }],
  ])('%j after %j', (span, before, object) => {
    expect(spanObject(span, before)).toEqual(object);
  });

  it('names nothing for a span over the whole statement', () => {
    expect(spanObject('CREATE TABLE t (a int);', '')).toBeUndefined();
    expect(spanObject('ALTER TABLE t ADD COLUMN a int;', '')).toBeUndefined();
    expect(spanObject('DROP INDEX i1, i2;', '')).toBeUndefined();
  });
});

describe('statementObject', () => {
  it.each([
    ['CREATE TABLE "u1" (\n  "id" integer\n);', { kind: 'table', name: 'u1' }],
    ['ALTER TABLE IF EXISTS ONLY public.t ADD COLUMN a int;', { kind: 'table', name: 't' }],
    ['CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "i" ON t (a);', { kind: 'index', name: 'i' }],
    ['CREATE INDEX ON t (a);', { kind: 'table', name: 't' }],
    ['DROP INDEX i;', { kind: 'index', name: 'i' }],
  ])('%j', (statement, object) => {
    expect(statementObject(statement)).toEqual(object);
  });
});

describe('describeObjects', () => {
  it('groups by kind, in the order first seen', () => {
    expect(
      describeObjects([
        { kind: 'table', name: 'u1' },
        { kind: 'column', name: 'a' },
        { kind: 'column', name: 'b' },
      ]),
    ).toBe('table `u1`, columns `a`, `b`');
  });
});
