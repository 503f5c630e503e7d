/**
 * `/consort` commands in pull request comments, parsed purely from the comment text. The App and
 * the Action share this parser, and COMMAND_OWNER says which of them answers each command, so with
 * both installed every command gets exactly one answer: the Action the TDD lane's (`build`,
 * `approve <gate>`), the App the rest.
 *
 * A command is the first line that starts with `/consort` (up to three spaces of indentation, any
 * case) outside fenced code blocks (a list item's too), indented code, block quotes (with the lines
 * GitHub shows inside them: `> text` then `/consort …` on the next line is one quoted paragraph), HTML comments,
 * `<pre>` blocks, HTML code elements (`<code>`, `<kbd>`, `<samp>`, `<tt>` left open on an earlier
 * line) and code spans — so quoting someone's command, or showing one as code, never runs it. Arguments may be quoted (`"…"` or `'…'`). A rejection's reason may continue on the following
 * lines of its paragraph.
 */
import { z } from 'zod';

/** Names that can follow `/consort approve`: lowercase, digits, `-` and `_`. `run` is not a gate (`approve run` is `allow-run`). */
export const GATE_NAME = /^[a-z][a-z0-9_-]{0,39}$/;
/** `/consort approve run`: the old spelling of `/consort allow-run`, kept as an alias. */
const FORK_RUN_ALIAS = 'run';
/** A feature to build: a slug (`customer-phones`) or an existing feature (`001-customer-phones`, `1`). */
export const FEATURE_REF = /^[a-z0-9][a-z0-9-]{0,47}$/;

export const Command = z.discriminatedUnion('kind', [
  /** `/consort approve <gate>`: a TDD-lane gate (the Action's records; the Action refuses one that names no gate). */
  z.object({ kind: z.literal('approve'), gate: z.string().nullable() }),
  /** `/consort allow-run` (alias `/consort approve run`): let a fork's code run for the current head commit (the App). */
  z.object({ kind: z.literal('allow-run') }),
  /**
   * `/consort reject [<gate>] <reason>`. `gate` is the first word when it could name a gate; the
   * executor keeps it only if the pull request has such a gate, otherwise `text` is the reason.
   */
  z.object({ kind: z.literal('reject'), gate: z.string().nullable(), reason: z.string(), text: z.string() }),
  /** `/consort build <feature> [request…]`: run the TDD lane; the rest of the paragraph is the feature request. */
  z.object({ kind: z.literal('build'), feature: z.string(), request: z.string() }),
  z.object({ kind: z.literal('retry') }),
  z.object({ kind: z.literal('status') }),
  z.object({ kind: z.literal('gc') }),
  z.object({ kind: z.literal('help') }),
  /** A command we do not know: answered with the help text. */
  z.object({ kind: z.literal('unknown'), name: z.string() }),
  /** A known command used wrongly: answered with what is wrong and the help text. */
  z.object({ kind: z.literal('invalid'), name: z.string(), problem: z.string() }),
]);
export type Command = z.infer<typeof Command>;

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
/** List markers before a fence (`- ```` , `1. ~~~`, nested): GitHub shows what follows as code in the item. */
const ITEM_MARKERS = /^(?: {0,3}(?:[-+*]|\d{1,9}[.)])[ \t]{1,4})+/;
/** An HTML block whose lines GitHub shows as they are (`<pre>`, …), to the line with its closing tag. */
const RAW_HTML = /^ {0,3}<(pre|script|style|textarea)(?:[\s>]|$)/i;
/** Any blank but a line break after `/consort`: a no-break space (Option-space, pasted text) shows as a space too. */
const COMMAND = /^ {0,3}\/consort(?:[^\S\r\n]+(.*))?$/i;
/** A block quote's line (`> …`, nested or not). */
const QUOTE = /^ {0,3}>/;
/**
 * HTML elements GitHub shows as code, opened or closed anywhere in a line: `<code>` on a line of its
 * own (an HTML block) or inside a paragraph keeps what follows as code until `</code>`.
 */
const HTML_CODE = /<(\/?)(code|kbd|samp|tt|pre)(?=[\s>/])[^>]*>/gi;

interface Found {
  args: string;
  /** The lines after the command line, up to the end of its paragraph. */
  continuation: string[];
}

/**
 * Whether line `i` starts inside an inline code span that began on an earlier line of its paragraph
 * (`` ` `` … `` ` `` may span lines, and GitHub shows what is between as code). A run of backticks
 * opens a span closed by the next run of the same length; one never closed is just backticks.
 */
function inCodeSpan(lines: readonly string[], i: number): boolean {
  let first = i;
  while (first > 0 && (lines[first - 1] ?? '').trim() !== '') first--;
  if (first === i) return false;
  let last = i;
  while (last + 1 < lines.length && (lines[last + 1] ?? '').trim() !== '') last++;
  const text = lines.slice(first, last + 1).join('\n');
  const at = lines.slice(first, i).join('\n').length + 1;
  const runs = [...text.matchAll(/`+/g)].map((r) => ({ start: r.index, end: r.index + r[0].length }));
  for (let k = 0; k < runs.length; k++) {
    const open = runs[k]!;
    if (open.start >= at) return false;
    const length = open.end - open.start;
    const close = runs.findIndex((r, j) => j > k && r.end - r.start === length);
    if (close === -1) continue;
    if (runs[close]!.start >= at) return true;
    k = close;
  }
  return false;
}

function findCommandLine(body: string): Found | null {
  const lines = body.replace(/\r\n?/g, '\n').split('\n');
  /** An open fence; `indent` is its list item's content column (0 outside a list). */
  let fence: { char: string; length: number; indent: number } | null = null;
  let inComment = false;
  let rawHtml: string | null = null;
  /** The line before is a block quote's, or a line GitHub shows inside one (lazy continuation). */
  let quoted = false;
  /** How many `<code>`-like elements (HTML_CODE) earlier lines left open. */
  let htmlCode = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    // `> text` then `/consort approve` on the next line: GitHub shows both lines inside the quote
    // (a paragraph's lazy continuation), so quoting a reply that ends in a command runs nothing.
    const inQuote: boolean = QUOTE.test(line) || (quoted && line.trim() !== '');
    const continuesQuote = quoted;
    quoted = inQuote && fence === null && !inComment && rawHtml === null;
    if (inComment) {
      if (line.includes('-->')) inComment = false;
      continue;
    }
    if (rawHtml !== null) {
      if (line.toLowerCase().includes(`</${rawHtml}>`)) rawHtml = null;
      continue;
    }
    if (fence) {
      const lead = /^ */.exec(line)![0].length;
      // A line not indented into the fence's list item ends the item, and the code with it.
      if (fence.indent > 0 && line.trim() !== '' && lead < fence.indent) fence = null;
      else {
        const c = /^(`{3,}|~{3,})[ \t]*$/.exec(line.slice(lead));
        // A closing fence: the same character, at least as long, nothing after it, indented at most 3 past the item's content.
        if (c && lead - fence.indent <= 3 && c[1]![0] === fence.char && c[1]!.length >= fence.length) fence = null;
        continue;
      }
    }
    const markers = ITEM_MARKERS.exec(line)?.[0] ?? '';
    const f = FENCE.exec(line.slice(markers.length));
    if (f && !(f[1]![0] === '`' && f[2]!.includes('`'))) {
      fence = { char: f[1]![0]!, length: f[1]!.length, indent: markers.length };
      continue;
    }
    const raw = RAW_HTML.exec(line);
    if (raw && !line.toLowerCase().includes(`</${raw[1]!.toLowerCase()}>`)) {
      rawHtml = raw[1]!.toLowerCase();
      continue;
    }
    const comment = line.indexOf('<!--');
    if (comment >= 0 && !line.includes('-->', comment + 4)) {
      inComment = true;
      continue;
    }
    const m = COMMAND.exec(line);
    const insideHtmlCode = htmlCode > 0;
    for (const tag of line.matchAll(HTML_CODE)) htmlCode = Math.max(0, htmlCode + (tag[1] === '/' ? -1 : 1));
    if (!m || continuesQuote || insideHtmlCode || inCodeSpan(lines, i)) continue;
    const continuation: string[] = [];
    for (let j = i + 1; j < lines.length && (lines[j] ?? '').trim() !== '' && !FENCE.test(lines[j] ?? ''); j++)
      continuation.push(lines[j]!.trim());
    return { args: (m[1] ?? '').trim(), continuation };
  }
  return null;
}

/** Split on whitespace, keeping quoted runs together (quotes removed, `\"` inside double quotes). */
export function tokenize(text: string): { value: string; quoted: boolean }[] {
  const tokens: { value: string; quoted: boolean }[] = [];
  let i = 0;
  while (i < text.length) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (i >= text.length) break;
    const quote = text[i] === '"' || text[i] === "'" ? text[i]! : null;
    let value = '';
    if (quote) {
      i++;
      while (i < text.length && text[i] !== quote) {
        if (quote === '"' && text[i] === '\\' && i + 1 < text.length) i++;
        value += text[i++];
      }
      i++; // the closing quote (or the end of an unterminated one)
    } else {
      while (i < text.length && !/\s/.test(text[i]!)) value += text[i++];
    }
    tokens.push({ value, quoted: quote !== null });
  }
  return tokens;
}

/** The command in a comment, or null when it has none. */
export function parseCommand(body: string): Command | null {
  const found = findCommandLine(body);
  if (found === null) return null;
  const tokens = tokenize(found.args);
  const [first, ...rest] = tokens;
  if (first === undefined) return { kind: 'help' };
  const name = first.value.toLowerCase();
  switch (name) {
    case 'approve': {
      if (rest.length > 1) return { kind: 'invalid', name, problem: '`approve` takes at most one gate name' };
      const gate = rest[0]?.value ?? null;
      if (gate === FORK_RUN_ALIAS) return { kind: 'allow-run' };
      if (gate !== null && !GATE_NAME.test(gate))
        return {
          kind: 'invalid',
          name,
          problem: `"${gate}" is not a gate name (lowercase letters, digits, "-" and "_")`,
        };
      return { kind: 'approve', gate };
    }
    case 'reject': {
      const words = rest.map((t) => t.value);
      const candidate =
        rest[0] !== undefined &&
        !rest[0].quoted &&
        GATE_NAME.test(rest[0].value) &&
        (rest.length > 1 || found.continuation.length > 0)
          ? rest[0].value
          : null;
      const text = [words.join(' '), ...found.continuation]
        .filter((s) => s !== '')
        .join('\n')
        .trim();
      const reason = [words.slice(candidate === null ? 0 : 1).join(' '), ...found.continuation]
        .filter((s) => s !== '')
        .join('\n')
        .trim();
      if (text === '')
        return { kind: 'invalid', name, problem: '`reject` needs a reason: `/consort reject [<gate>] <reason>`' };
      return { kind: 'reject', gate: candidate, reason, text };
    }
    case 'build': {
      const feature = rest[0]?.value.toLowerCase() ?? '';
      if (!FEATURE_REF.test(feature))
        return {
          kind: 'invalid',
          name,
          problem:
            feature === ''
              ? '`build` needs a feature: `/consort build <feature-slug> [what it should do]`'
              : `"${rest[0]!.value}" is not a feature name (lowercase letters, digits and "-")`,
        };
      const request = [
        rest
          .slice(1)
          .map((t) => t.value)
          .join(' '),
        ...found.continuation,
      ]
        .filter((s) => s !== '')
        .join('\n')
        .trim();
      return { kind: 'build', feature, request };
    }
    case 'allow-run':
      if (rest.length > 0) return { kind: 'invalid', name, problem: '`allow-run` takes no arguments' };
      return { kind: 'allow-run' };
    case 'retry':
    case 'status':
    case 'gc':
    case 'help':
      return { kind: name };
    default:
      return { kind: 'unknown', name: first.value.slice(0, 40) };
  }
}

/**
 * For an edited comment: the command to run, or null when the edit did not change it (fixing a
 * typo elsewhere in a comment must not run its command a second time).
 */
export function commandOnEdit(body: string, previous: string | undefined): Command | null {
  const now = parseCommand(body);
  if (now === null || previous === undefined) return now;
  const before = parseCommand(previous);
  return before !== null && JSON.stringify(before) === JSON.stringify(now) ? null : now;
}

/**
 * Which component answers a command when both are installed: `action` (the TDD lane's workflow,
 * `mode: build` / `mode: approve`) or `app`. The other one ignores it silently.
 */
export const COMMAND_OWNER: Readonly<Record<Command['kind'], 'action' | 'app'>> = {
  build: 'action',
  approve: 'action',
  'allow-run': 'app',
  reject: 'app',
  retry: 'app',
  status: 'app',
  gc: 'app',
  help: 'app',
  unknown: 'app',
  invalid: 'app',
};

export const HELP_TEXT = [
  '**Consort commands** (for people with write, maintain or admin access; one per comment):',
  '',
  '| command | what it does | answered by |',
  '| --- | --- | --- |',
  '| `/consort build <feature> [request]` | run the TDD lane for a feature on this pull request | the Action (`mode: build`) |',
  '| `/consort approve <gate>` | approve a TDD-lane gate, named as its announcement says | the Action (`mode: approve`) |',
  '| `/consort allow-run` | let code from a fork run for the current head commit (also `/consort approve run`) | the App |',
  "| `/consort reject [<gate>] <reason>` | explains how to turn a gate down (the TDD lane's gates have no reject) | the App |",
  '| `/consort retry` | run the database check again for the head commit | the App |',
  '| `/consort status` | the latest check and fork approval of this pull request | the App |',
  '| `/consort gc` | delete database branches of closed pull requests and expired ones | the App |',
  '| `/consort help` | this text | the App |',
].join('\n');

/** The command as a user would write it (for quoting it back in a reply). */
export function describeCommand(c: Command): string {
  switch (c.kind) {
    case 'approve':
      return `/consort approve${c.gate === null ? '' : ` ${c.gate}`}`;
    case 'reject':
      return `/consort reject ${c.text}`;
    case 'build':
      return `/consort build ${c.feature}`;
    case 'unknown':
    case 'invalid':
      return `/consort ${c.name}`;
    default:
      return `/consort ${c.kind}`;
  }
}
