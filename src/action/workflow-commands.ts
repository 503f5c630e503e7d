/**
 * Text a repository controls — its suite's output, a migration's or a link's name, a statement —
 * printed in the Action's log. The runner (actions/runner: ProcessInvoker, ActionCommand) reads
 * stdout with .NET's ReadLine, so a line ends at '\n', '\r' or "\r\n"; a line is a workflow command
 * when, after TrimStart (every Unicode white space: '\v', '\f', U+00A0, U+0085, U+2028, U+3000…),
 * it starts with `::`, and the older `##[command]` form counts anywhere in a line. A pull request's
 * test could print `::error file=…::` annotations of its own, `::add-mask::` over the log, or
 * `::stop-commands::` to swallow Consort's own commands after it.
 * Such a line is broken with a zero-width space between its two colons (between the `#`s of
 * `##[`); nothing else changes. The zero-width space is not white space to .NET, and the command
 * name the runner then reads starts with ':' or '[', which names no command. That holds also where
 * the runner's culture-sensitive `StartsWith("::")`/`IndexOf("##[")` skip the zero-width space
 * under ICU: the name is then cut by ordinal position, two (three) characters in, which is the
 * second ':' (the '['). test/action/workflow-commands.test.ts models the runner's parser both ways.
 */
const BREAK = ':\u200b:';

/** .NET's white space (char.IsWhiteSpace), which TrimStart removes; JavaScript's \s lacks U+0085. */
const LEAD = '[\\s\\u0085]*';
const AT_LINE_START = new RegExp(`(^|[\\r\\n])(${LEAD})::`, 'g');

/** `text` with every line that would be a workflow command broken. */
export function quoteCommands(text: string): string {
  return text.replace(/##\[/g, '#\u200b#[').replace(AT_LINE_START, `$1$2${BREAK}`);
}

/**
 * For output that arrives in chunks (a suite's), between which Consort prints lines of its own:
 * each chunk is quoted as if it began a line (a `::` that only continues one gets a harmless
 * zero-width space), and a chunk that ends in ':' or '#' gets one after it, so a command split
 * across chunks is broken too. Nothing is held back: what the runner sees never depends on what
 * the quoter remembers.
 */
export function commandQuoter(): (chunk: string) => string {
  return (chunk) => {
    const out = quoteCommands(chunk);
    return /[:#]$/.test(out) ? `${out}\u200b` : out;
  };
}
