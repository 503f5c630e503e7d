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
  // Not at a line's start: a chunk that continues a line.
  expect(quoteCommands('::x', false)).toBe('::x');
});

test('a command split across chunks is still broken, and the text is otherwise kept whole', () => {
  const chunks = ['PASS test/a.test.js\n', '  :', ':error::forged\nnext ', '::not a command\n', ':', ':warning::w'];
  const quote = commandQuoter();
  const out = chunks.map(quote).join('') + quote('');
  expect(out).toBe(`PASS test/a.test.js\n  :${Z}:error::forged\nnext ::not a command\n:${Z}:warning::w`);
});
