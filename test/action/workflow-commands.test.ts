/**
 * A pull request's suite output, and the names its files carry, are printed in the Action's log,
 * where a line starting with `::` is a workflow command: its test could print `::error::`
 * annotations of its own, `::add-mask::`, or `::stop-commands::` to silence Consort's. Every such
 * line is broken between its colons, also when it arrives split across chunks.
 */
import { commandQuoter, quoteCommands } from '../../src/action/workflow-commands.js';

const Z = '\u200b';

test('a line that would be a workflow command is broken; other text is untouched', () => {
  expect(quoteCommands('::error file=app.js::All checks passed')).toBe(`:${Z}:error file=app.js::All checks passed`);
  expect(quoteCommands('ok\n  ::add-mask::secret\nnot :: a command\n::stop-commands::x')).toBe(
    `ok\n  :${Z}:add-mask::secret\nnot :: a command\n:${Z}:stop-commands::x`,
  );
  expect(quoteCommands('migrations/1_a.sql applied')).toBe('migrations/1_a.sql applied');
});

test("the runner's line breaks and white space count: \\r ends a line, TrimStart removes \\v, U+00A0, U+0085, U+2028…", () => {
  // actions/runner reads stdout with .NET ReadLine ('\n', '\r', "\r\n") and TrimStart()s each line.
  expect(quoteCommands('progress 10%\r::add-mask::x')).toBe(`progress 10%\r:${Z}:add-mask::x`);
  for (const lead of ['\v', '\f', '\u00a0', '\u0085', '\u1680', '\u2003', '\u2028', '\u2029', '\u3000', ' \t\v'])
    expect(quoteCommands(`ok\n${lead}::error::forged`)).toBe(`ok\n${lead}:${Z}:error::forged`);
});

test('the older ##[command] form, which the runner reads anywhere in a line, is broken too', () => {
  expect(quoteCommands('PASS ##[error]forged and ##[add-mask]x')).toBe(
    `PASS #${Z}#[error]forged and #${Z}#[add-mask]x`,
  );
  expect(quoteCommands('# a heading [1]')).toBe('# a heading [1]');
});

test('a command split across chunks is still broken, and the text is otherwise kept whole', () => {
  const chunks = [
    'PASS test/a.test.js\n',
    '  :',
    ':error::forged\nnext ',
    'line\n',
    ':',
    ':warning::w\n#',
    '#[error]x',
  ];
  const quote = commandQuoter();
  expect(chunks.map(quote).join('')).toBe(
    `PASS test/a.test.js\n  :${Z}:error::forged\nnext line\n:${Z}:warning::w\n#${Z}#[error]x`,
  );
});

test("a chunk is quoted as a line's start whatever came before: Consort's own lines end between chunks", () => {
  // A suite that ends without a newline, a log line of Consort's, then the next run's output:
  // on stdout that output starts a line, whatever the quoter saw of the suite before.
  const quote = commandQuoter();
  const stdout = quote('no newline at the end') + 'Suite ran: 1 failed\n' + quote('::add-mask::x\n');
  expect(stdout).toBe(`no newline at the endSuite ran: 1 failed\n:${Z}:add-mask::x\n`);
});

/**
 * The runner's parser (actions/runner, ActionCommand.TryParseV2 and TryParse), modelled: TrimStart
 * with .NET's white space, then `StartsWith("::")` and `IndexOf("::", 2)`, and `IndexOf("##[")` for
 * the older form. Those calls compare with the current culture, which under ICU may skip ignorable
 * code points (U+200B among them), so each is modelled both ordinally and skipping them, and where
 * the culture could match, every place it could match is tried. The command name is then read by
 * ordinal position (`Substring(2, …)`, `Substring(prefix + 3, …)`).
 */
const REGISTERED = new Set(
  'add-mask add-path set-env set-output save-state add-matcher remove-matcher debug warning error notice group endgroup echo stop-commands internal-set-repo-path'.split(
    ' ',
  ),
);
const IGNORABLE = /[\u00ad\u200b-\u200d\u2060\ufeff]/;
const DOTNET_SPACE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;

function matchesAt(s: string, i: number, key: string, culture: boolean): boolean {
  if (!culture) return s.startsWith(key, i);
  let k = 0;
  for (let j = i; k < key.length && j < s.length; j += 1) {
    if (IGNORABLE.test(s[j]!)) continue;
    if (s[j] !== key[k]) return false;
    k += 1;
  }
  return k === key.length;
}

function runnerCommands(line: string, culture: boolean): string[] {
  const found: string[] = [];
  let start = 0;
  while (start < line.length && DOTNET_SPACE.test(line[start]!)) start += 1;
  const m = line.slice(start);
  if (matchesAt(m, 0, '::', culture))
    for (let end = 2; end < m.length; end += 1)
      if (matchesAt(m, end, '::', culture)) {
        found.push(m.slice(2, end).split(' ')[0]!);
        if (!culture) break;
      }
  for (let p = 0; p < line.length; p += 1)
    if (matchesAt(line, p, '##[', culture)) {
      const rb = line.indexOf(']', p);
      if (rb >= 0) found.push(line.slice(p + 3, rb).split(' ')[0]!);
      if (!culture) break;
    }
  return found.filter((name) => REGISTERED.has(name));
}

test("no quoted line is a command to the runner's parser, whether its culture skips ignorable code points or not", () => {
  const pieces = [
    ':',
    ':',
    '::',
    '#',
    '##[',
    '[',
    ']',
    ' ',
    '\t',
    '\u00a0',
    '\u0085',
    '\u200b',
    '\u00ad',
    '\u2060',
    '\ufeff',
    '\u200d',
  ];
  const names = ['error', 'add-mask', 'stop-commands', 'warning x=1', 'e'];
  let seed = 0x2f6e2b1;
  const next = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 16) % n;
  };
  let rawCommands = 0;
  const parsed: [string, string[]][] = [];
  for (let n = 0; n < 20_000; n += 1) {
    let text = '';
    for (let k = 1 + next(7); k > 0; k -= 1)
      text += next(3) === 0 ? names[next(names.length)] : pieces[next(pieces.length)];
    if (next(2) === 0)
      text += `${['\n', '\r', '\r\n', ''][next(4)]}${['', ' ', '\t', '\u00a0', '\u200b'][next(5)]}::${names[next(names.length)]}::data`;
    for (const culture of [false, true]) {
      rawCommands += text.split(/\r\n|\r|\n/).filter((l) => runnerCommands(l, culture).length > 0).length;
      // Whole, and in chunks as a suite's output arrives.
      const cut = next(text.length + 1);
      const quote = commandQuoter();
      for (const out of [quoteCommands(text), quote(text.slice(0, cut)) + quote(text.slice(cut))])
        for (const l of out.split(/\r\n|\r|\n/))
          if (runnerCommands(l, culture).length) parsed.push([l, runnerCommands(l, culture)]);
    }
  }
  expect(parsed).toEqual([]);
  // The model finds the commands the lines held before quoting: the test can fail.
  expect(rawCommands).toBeGreaterThan(1000);
});
