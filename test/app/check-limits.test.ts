/** GitHub's documented check-run limits, applied by one pure function before every request. */
import {
  annotationBatches,
  boundAnnotation,
  boundOutput,
  CHECK_LIMITS,
  clipBytes,
  clipChars,
} from '../../src/github/check-limits.js';
import type { Annotation } from '../../src/ports/github.js';

const note = (i: number): Annotation => ({
  path: `migrations/${i}.sql`,
  start_line: 1,
  end_line: 1,
  annotation_level: 'warning',
  message: `m${i}`,
});
const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

describe('check-run output limits', () => {
  it('keeps output within the limits untouched', () => {
    const output = { title: 'Database checks passed', summary: 'ok', text: 'details', annotations: [note(1)] };
    expect(boundOutput(output)).toEqual(output);
  });

  it('summary and text: at most 65,535 characters, marked as cut', () => {
    const out = boundOutput({ title: 't', summary: 'x'.repeat(70_000), text: 'y'.repeat(65_536) });
    expect(out.summary).toHaveLength(CHECK_LIMITS.summaryChars);
    expect(out.text).toHaveLength(CHECK_LIMITS.textChars);
    expect(out.summary.endsWith("cut to fit GitHub's limit._")).toBe(true);
  });

  it('at most 500 annotations per run, and the summary says how many there were', () => {
    const out = boundOutput({
      title: 't',
      summary: 'Summary',
      annotations: Array.from({ length: 523 }, (_, i) => note(i)),
    });
    expect(out.annotations).toHaveLength(500);
    expect(out.annotations![499]!.path).toBe('migrations/499.sql');
    expect(out.summary).toBe('Summary\n\n_Showing 500 of 523 annotations._');
  });

  it('more than 50 annotations go in requests of at most 50, in order, each with the title and summary', () => {
    const out = boundOutput({ title: 't', summary: 'S', annotations: Array.from({ length: 123 }, (_, i) => note(i)) });
    const batches = annotationBatches(out);
    expect(batches.map((b) => b.annotations!.length)).toEqual([50, 50, 23]);
    expect(batches.flatMap((b) => b.annotations!.map((a) => a.message))).toEqual(
      out.annotations!.map((a) => a.message),
    );
    expect(batches.every((b) => b.title === 't' && b.summary === 'S')).toBe(true);
    expect(annotationBatches({ title: 't', summary: 'S' })).toEqual([{ title: 't', summary: 'S' }]);
  });

  it('annotation title: at most 255 characters; message and raw_details: at most 64 KB of UTF-8', () => {
    const a = boundAnnotation({
      ...note(1),
      title: 'T'.repeat(300),
      message: 'é'.repeat(40_000),
      raw_details: 'r'.repeat(70_000),
    });
    expect(a.title).toHaveLength(255);
    expect(a.title!.endsWith('…')).toBe(true);
    expect(bytes(a.message)).toBeLessThanOrEqual(CHECK_LIMITS.annotationMessageBytes);
    expect(bytes(a.message)).toBeGreaterThan(CHECK_LIMITS.annotationMessageBytes - 8);
    expect(bytes(a.raw_details!)).toBeLessThanOrEqual(CHECK_LIMITS.annotationRawDetailsBytes);
  });

  it('line and column rules: lines from 1, end ≥ start, columns only on one line, an empty message filled in', () => {
    expect(
      boundAnnotation({ ...note(1), start_line: 0, end_line: -3, start_column: 4, end_column: 2, message: '' }),
    ).toEqual({
      path: 'migrations/1.sql',
      start_line: 1,
      end_line: 1,
      start_column: 4,
      end_column: 4,
      annotation_level: 'warning',
      message: 'warning',
    });
    expect(
      boundAnnotation({ ...note(1), start_line: 2, end_line: 5, start_column: 1, end_column: 9 }),
    ).not.toHaveProperty('start_column');
  });

  it('the title: one line of at most 255 characters, never empty', () => {
    expect(boundOutput({ title: `a\nb${'c'.repeat(400)}`, summary: 's' }).title).toMatch(/^a bc+…$/);
    expect(boundOutput({ title: `a\nb${'c'.repeat(400)}`, summary: 's' }).title).toHaveLength(255);
    expect(boundOutput({ title: '  ', summary: 's' }).title).toBe('Consort');
  });

  it('never splits a character', () => {
    const emoji = '😀'.repeat(10); // two UTF-16 units, four UTF-8 bytes each
    expect(clipChars(emoji, 6)).toBe('😀😀…');
    expect(clipChars(emoji, 5)).toBe('😀😀…');
    expect(clipBytes(emoji, 11)).toBe('😀😀…');
    expect(clipBytes(emoji, 10)).toBe('😀…');
  });
});
