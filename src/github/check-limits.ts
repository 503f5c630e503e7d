/**
 * GitHub's documented limits on a check run's output, applied in one pure function just before a
 * request leaves Consort (REST "Create a check run" / "Update a check run"):
 *
 * - `output.summary` and `output.text`: at most 65,535 characters;
 * - `output.annotations`: at most 50 per request; more go in further "Update a check run" requests,
 *   which GitHub appends to the run's annotations (`annotationBatches`). Consort sends at most
 *   `annotationsPerRun` (ten requests) and says in the summary how many there were;
 * - an annotation's `title`: at most 255 characters; `message` and `raw_details`: at most 64 KB;
 *   `start_column`/`end_column` only when the annotation starts and ends on the same line.
 *
 * `output.title` has no documented maximum; it is shown as one line, so it is kept to 255
 * characters like the annotation titles (GitHub has refused far longer ones with a 422).
 * Cutting never splits a character, and a cut text says that it was cut.
 */
import type { Annotation, CheckOutput } from '../ports/github.js';

export const CHECK_LIMITS = {
  summaryChars: 65_535,
  textChars: 65_535,
  annotationsPerRequest: 50,
  /** Consort's own cap: ten requests at most, however many findings a history has. */
  annotationsPerRun: 500,
  annotationTitleChars: 255,
  annotationMessageBytes: 64 * 1024,
  annotationRawDetailsBytes: 64 * 1024,
  titleChars: 255,
} as const;

/** The annotations one check run carries at most (in requests of 50, GitHub's limit per request). */
export const MAX_ANNOTATIONS = CHECK_LIMITS.annotationsPerRun;

const MARK = '…';
const NOTE = "\n\n_… cut to fit GitHub's limit._";

/** At most `max` UTF-16 units, never ending in half a surrogate pair, marked when cut. */
export function clipChars(text: string, max: number, mark: string = MARK): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - mark.length);
  if (end > 0 && isHighSurrogate(text.charCodeAt(end - 1))) end--;
  return text.slice(0, end) + mark.slice(0, max);
}

/** At most `max` bytes of UTF-8, cut on a character boundary, marked when cut. */
export function clipBytes(text: string, max: number, mark: string = MARK): string {
  if (Buffer.byteLength(text, 'utf8') <= max) return text;
  const room = max - Buffer.byteLength(mark, 'utf8');
  let used = 0;
  let out = '';
  for (const ch of text) {
    const size = Buffer.byteLength(ch, 'utf8');
    if (used + size > room) break;
    out += ch;
    used += size;
  }
  return out + mark;
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;

export function boundAnnotation(a: Annotation): Annotation {
  const start = Math.max(1, Math.floor(a.start_line));
  const end = Math.max(start, Math.floor(a.end_line));
  const out: Annotation = {
    path: a.path,
    start_line: start,
    end_line: end,
    annotation_level: a.annotation_level,
    message: clipBytes(a.message === '' ? a.annotation_level : a.message, CHECK_LIMITS.annotationMessageBytes),
  };
  if (a.title !== undefined) out.title = clipChars(a.title, CHECK_LIMITS.annotationTitleChars);
  if (a.raw_details !== undefined) out.raw_details = clipBytes(a.raw_details, CHECK_LIMITS.annotationRawDetailsBytes);
  // Columns are only allowed on a one-line annotation (GitHub answers 422 otherwise).
  if (start === end && a.start_column !== undefined) {
    out.start_column = Math.max(1, a.start_column);
    if (a.end_column !== undefined) out.end_column = Math.max(out.start_column, a.end_column);
  }
  return out;
}

/**
 * The output within GitHub's limits, with at most `annotationsPerRun` annotations (what was dropped
 * is said in the summary). More than 50 do not fit one request: send it with `annotationBatches`.
 */
export function boundOutput(o: CheckOutput): CheckOutput {
  const all = o.annotations ?? [];
  const kept = all.slice(0, CHECK_LIMITS.annotationsPerRun).map(boundAnnotation);
  const dropped = all.length - kept.length;
  const note = dropped > 0 ? `\n\n_Showing ${kept.length} of ${all.length} annotations._` : '';
  return {
    title: clipChars(o.title.replace(/\s+/g, ' ').trim() || 'Consort', CHECK_LIMITS.titleChars),
    summary: clipChars(o.summary + note, CHECK_LIMITS.summaryChars, NOTE),
    ...(o.text === undefined ? {} : { text: clipChars(o.text, CHECK_LIMITS.textChars, NOTE) }),
    ...(o.annotations === undefined ? {} : { annotations: kept }),
  };
}

/**
 * A bounded output as the requests that carry it: each with the title, summary and text, and at
 * most 50 of the annotations, in order (GitHub appends each request's annotations to the run's).
 * Always at least one request.
 */
export function annotationBatches(o: CheckOutput): CheckOutput[] {
  const all = o.annotations;
  if (all === undefined || all.length <= CHECK_LIMITS.annotationsPerRequest) return [o];
  const batches: CheckOutput[] = [];
  for (let i = 0; i < all.length; i += CHECK_LIMITS.annotationsPerRequest)
    batches.push({ ...o, annotations: all.slice(i, i + CHECK_LIMITS.annotationsPerRequest) });
  return batches;
}
