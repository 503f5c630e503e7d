/**
 * GitHub refuses an issue comment, a comment edit or a review whose body is over 65,536 characters
 * (422 "Body is too long"). Renderers keep their own bodies well under it (src/report/markdown.ts,
 * turn-markdown.ts), but a body that quotes what people or agents wrote — a command's reply quoting
 * a comment that is itself at the limit, an error message, a list of branches — can still pass it,
 * and a refused reply is no answer at all (its job is retried and refused again). So every body is
 * bounded once, where it leaves for GitHub, and a cut body says that it was cut. A body that is
 * created (not edited) also carries its post marker, outside what is bounded (post-marker.ts).
 */
import { clipChars } from './check-limits.js';

/** In UTF-16 units, which are never fewer than the characters GitHub counts. */
export const COMMENT_BODY_CHARS = 65_536;

export const CUT_NOTE = "\n\n_… cut to fit GitHub's limit._";

export const boundBody = (body: string): string => clipChars(body, COMMENT_BODY_CHARS, CUT_NOTE);
