/**
 * Text a repository controls — its suite's output, a migration's or a link's name, a statement —
 * printed in the Action's log. The runner reads any line that starts with `::` as a workflow
 * command: a pull request's test could print `::error file=…::` annotations of its own,
 * `::add-mask::` over the log, or `::stop-commands::` to swallow Consort's own commands after it.
 * Such a line is broken with a zero-width space between its two colons; nothing else changes.
 */
const BREAK = ':\u200b:';

/** `text` with every line that would be a workflow command broken; `atLineStart`: its first line is one. */
export function quoteCommands(text: string, atLineStart = true): string {
  const inner = text.replace(/(\n[ \t]*)::/g, `$1${BREAK}`);
  return atLineStart ? inner.replace(/^([ \t]*)::/, `$1${BREAK}`) : inner;
}

/**
 * For output that arrives in chunks (a suite's): a line split across chunks is still seen whole.
 * Returns the quoting function; it remembers whether the text so far ends at the start of a line
 * (or in its leading blanks) and holds back a lone ':' at a chunk's end until it knows what follows.
 */
export function commandQuoter(): (chunk: string) => string {
  let lineStart = true;
  let held = '';
  return (chunk) => {
    let text = held + chunk;
    held = '';
    // A line whose first non-blank is a ':' at the very end: the next chunk may make it '::'.
    const tail = /(^|\n)[ \t]*:$/.exec(text);
    if (tail && (tail[1] === '\n' || lineStart)) {
      held = ':';
      text = text.slice(0, -1);
    }
    const out = quoteCommands(text, lineStart);
    const last = text.lastIndexOf('\n');
    lineStart = /^[ \t]*$/.test(last === -1 ? (lineStart ? text : 'x') : text.slice(last + 1));
    return out;
  };
}
