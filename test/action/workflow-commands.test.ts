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
