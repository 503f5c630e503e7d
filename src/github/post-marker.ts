/**
 * Every comment and review Consort creates carries a marker of its own, an HTML comment GitHub
 * keeps in the body and does not show: `<!-- consort:post <random id> -->` on the body's last line.
 * After a create answered 5xx (or not at all), the look-up (look-ups.ts) finds what that attempt
 * made by this marker alone. Matching the body instead takes a second post with the same text —
 * an identical reply, two turns that say the same, another account posting the same words — for
 * ours, and ours is then never made. The marker goes last, so the markers that open a body (a
 * sticky comment's, a gate announcement's) stay where they are read; the text before it is bounded
 * so that the whole body fits GitHub's limit and the marker is never what is cut.
 */
import { randomUUID } from 'node:crypto';
import { clipChars } from './check-limits.js';
import { COMMENT_BODY_CHARS, CUT_NOTE } from './body-limit.js';

const PREFIX = '<!-- consort:post ';
/** A body's trailing post marker, with the blank line before it. */
const TRAILING = /(?:\r?\n){0,2}<!-- consort:post [0-9a-f-]+ -->\s*$/;

export const newPostMarker = (): string => `${PREFIX}${randomUUID()} -->`;

export interface MarkedBody {
  body: string;
  /** null for a blank text: GitHub refuses a blank body, which a marker alone would not be. */
  marker: string | null;
}

/** The text bounded to leave room for `marker`, then the marker on its own line after a blank one. */
export function markedBody(text: string, marker: string = newPostMarker()): MarkedBody {
  if (text.trim() === '') return { body: text, marker: null };
  const tail = `\n\n${marker}`;
  return { body: clipChars(text, COMMENT_BODY_CHARS - tail.length, CUT_NOTE) + tail, marker };
}

/** The body without its post marker: what people see, and what a sticky comment's text is compared by. */
export const withoutPostMarker = (body: string): string => body.replace(TRAILING, '');

/** Whether `body` carries `marker` (however GitHub gave back the line ends around it). */
export const hasPostMarker = (body: string | null | undefined, marker: string): boolean =>
  (body ?? '').includes(marker);
