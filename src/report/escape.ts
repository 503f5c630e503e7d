/**
 * Making untrusted text safe to show. Migration files, SQL, test names and suite output all come
 * from the pull request, so a hostile PR must not be able to inject HTML, break a table, close a
 * code block early, ping people, or send escape sequences to a terminal.
 */

// Terminal escapes (CSI, OSC, two-byte) would recolor or retitle a terminal; test runners emit them.
// eslint-disable-next-line no-control-regex -- matching escape sequences is the point
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-_]?/g;

// C0/C1 controls except tab and newline, and bidi overrides that make text read differently than it is.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Text with LF line ends and nothing a terminal or browser would act on invisibly. */
export function stripControl(text: string): string {
  return text.replace(ANSI, '').replace(/\r\n?/g, '\n').replace(HIDDEN, '');
}

/** One line: runs of whitespace (newlines included) become one space. */
export const oneLine = (text: string): string => stripControl(text).replace(/\s+/g, ' ').trim();

/** Cut to `max` UTF-16 units with an ellipsis, never splitting a surrogate pair. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, Math.max(0, max - 1));
  return `${/[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}

/**
 * Markdown-escaped single-line text, safe in a paragraph and in a table cell. HTML characters become
 * entities; markdown punctuation gets a backslash (including `|`, which GFM honours inside cells);
 * what would start a block at the beginning of a line is escaped; `@name` gets a word joiner so
 * GitHub does not turn it into a mention.
 */
export function mdText(text: string): string {
  return oneLine(text)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/[\\`*_[\]|~#$]/g, '\\$&')
    .replace(/^([+\-=])(?=[\s+\-=]|$)/, '\\$1')
    .replace(/^(\d+)([.)])(?=\s|$)/, '$1\\$2')
    .replace(/(^|[^\w])@(?=\w)/g, '$1@\u2060');
}

/**
 * Inline code for untrusted text. A backtick code span cannot hold `|` inside a table cell without
 * a backslash that then shows outside tables, so this uses `<code>` around escaped text instead:
 * the same rendering everywhere, and nothing in the content can end it.
 */
export function mdCode(text: string): string {
  const escaped = mdText(text);
  return `<code>${escaped === '' ? ' ' : escaped}</code>`;
}

/** A fenced code block whose fence is longer than any backtick run in the content, so nothing closes it early. */
export function fenced(text: string, lang = ''): string {
  const body = stripControl(text).replace(/\n+$/, '');
  const runs = (body.match(/`+/g) ?? []).map((r) => r.length + 1);
  const fence = '`'.repeat(Math.max(3, ...runs));
  return `${fence}${lang}\n${body}\n${fence}`;
}

/** A POSIX shell word: bare when it is plainly safe, otherwise single-quoted; never read as an option. */
export function shellQuote(word: string): string {
  const safe = word.startsWith('-') ? `./${word}` : word;
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(safe)) return safe;
  return `'${safe.replace(/'/g, `'\\''`)}'`;
}
