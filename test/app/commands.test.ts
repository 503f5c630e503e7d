/** `/consort` command parsing: what fires, what must not, and how arguments are read. */
import {
  COMMAND_OWNER,
  commandOnEdit,
  describeCommand,
  HELP_TEXT,
  parseCommand,
  tokenize,
  type Command,
} from '../../src/github/commands.js';

describe('parseCommand', () => {
  it.each<[string, string, Command | null]>([
    ['a bare approval', '/consort approve', { kind: 'approve', gate: null }],
    ['a named gate', '/consort approve spec', { kind: 'approve', gate: 'spec' }],
    ['the fork-run approval', '/consort allow-run', { kind: 'allow-run' }],
    ['its old spelling, kept as an alias', '/consort approve run', { kind: 'allow-run' }],
    ['any case for the keyword and the verb', '/Consort APPROVE spec', { kind: 'approve', gate: 'spec' }],
    ['CRLF line endings', 'thanks!\r\n/consort retry\r\n', { kind: 'retry' }],
    ['leading spaces (up to three)', '   /consort status', { kind: 'status' }],
    // Option-space on a Mac keyboard, or text pasted from a rendered page: GitHub shows it as a space.
    ['no-break spaces between the words', '/consort\u00a0approve\u00a0spec', { kind: 'approve', gate: 'spec' }],
    ['a tab after /consort', '/consort\tretry', { kind: 'retry' }],
    [
      'a command after prose',
      'Looks good to me.\n\n/consort approve test-list',
      { kind: 'approve', gate: 'test-list' },
    ],
    ['only the first command counts', '/consort gc\n/consort retry', { kind: 'gc' }],
    ['no arguments means help', '/consort', { kind: 'help' }],
    ['help', '/consort help', { kind: 'help' }],
    ['an unknown verb', '/consort deploy now', { kind: 'unknown', name: 'deploy' }],
    [
      'reject with a gate and a reason',
      '/consort reject spec too vague',
      { kind: 'reject', gate: 'spec', reason: 'too vague', text: 'spec too vague' },
    ],
    [
      'reject with a quoted reason',
      '/consort reject spec "AC3 is not testable"',
      { kind: 'reject', gate: 'spec', reason: 'AC3 is not testable', text: 'spec AC3 is not testable' },
    ],
    [
      'reject whose first word is quoted (never a gate)',
      "/consort reject 'spec' is wrong",
      { kind: 'reject', gate: null, reason: 'spec is wrong', text: 'spec is wrong' },
    ],
    [
      'reject with one word: a reason, not a gate',
      '/consort reject nope',
      { kind: 'reject', gate: null, reason: 'nope', text: 'nope' },
    ],
    [
      'a reason continued on the next lines',
      '/consort reject plan\nthe migration locks orders\nfor minutes\n\nunrelated',
      {
        kind: 'reject',
        gate: 'plan',
        reason: 'the migration locks orders\nfor minutes',
        text: 'plan\nthe migration locks orders\nfor minutes',
      },
    ],
  ])('%s', (_label, body, expected) => {
    expect(parseCommand(body)).toEqual(expected);
  });

  it.each([
    ['reject without a reason', '/consort reject', 'reject', 'needs a reason'],
    ['approve with two gates', '/consort approve spec plan', 'approve', 'at most one'],
    ['approve with a name that cannot be a gate', '/consort approve Spec!', 'approve', 'not a gate name'],
    ['allow-run with arguments', '/consort allow-run now', 'allow-run', 'takes no arguments'],
  ])('says what is wrong with %s', (_label, body, name, problem) => {
    expect(parseCommand(body)).toEqual({ kind: 'invalid', name, problem: expect.stringContaining(problem) });
  });

  it.each([
    ['in a fenced code block', 'Run this:\n```\n/consort approve\n```'],
    ['in a tilde fence with an info string', '~~~text\n/consort approve spec\n~~~'],
    ['in a fence that is still open at the end', '```sh\n/consort retry'],
    ['after a fence opened by four backticks and "closed" by three', '````\n```\n/consort approve\n````x'],
    ['in a block quote', '> /consort approve\n\nquoting the bot'],
    // GitHub shows the unquoted line inside the quote (a paragraph's lazy continuation).
    ['on the line after a quoted line', '> Reviewer wrote:\n/consort approve spec'],
    ['two lines after a quoted line', '> Reviewer wrote:\nand then\n/consort approve spec'],
    ['after a nested quote', '>> an older reply\n/consort approve'],
    ['in indented code', '    /consort approve'],
    ['in inline code', 'type `/consort approve` to approve'],
    ['in an HTML comment', '<!--\n/consort approve\n-->'],
    // How-to text an approver writes: GitHub shows these as code, so they approve nothing.
    ['in a fence inside a list item', 'To approve:\n\n- ```\n  /consort approve spec\n  ```'],
    ['in a tilde fence inside a numbered item', '1. Comment\n2. ~~~\n   /consort approve spec\n   ~~~'],
    ['in a fence inside a nested list item', '- a\n  - ```\n    /consort approve spec\n    ```'],
    ['in an HTML <pre> block', '<pre>\n/consort approve spec\n</pre>'],
    ['in an HTML <PRE class> block', '<PRE class="x">\n/consort approve spec\n</PRE>'],
    // GitHub shows these as code too (an HTML block, or inline HTML in a paragraph), until the closing tag.
    ['in an HTML <code> block', '<code>\n/consort approve spec\n</code>'],
    ['in an HTML <code> element opened mid-sentence', 'Type <code>\n/consort approve spec\n</code> to approve'],
    ['in a <kbd> element across a blank line', '<kbd>\n\n/consort approve spec\n</kbd>'],
    ['in a <samp class> element', '<samp class="x">\n/consort approve spec</samp>'],
    ['in inline code that spans lines', 'Type `\n/consort approve spec\n` once you have read it'],
    ['in a double-backtick span that spans lines', 'Type ``a`\n/consort approve spec``'],
    ['mid-sentence', 'please do not /consort approve yet'],
    ['a longer word', '/consortium approve'],
    ['no command at all', 'LGTM'],
    ['empty', ''],
  ])('does not fire %s', (_label, body) => {
    expect(parseCommand(body)).toBeNull();
  });

  it('fires after a block quote that a blank line ends', () => {
    expect(parseCommand('> Reviewer wrote: looks right\n\n/consort approve spec')).toEqual({
      kind: 'approve',
      gate: 'spec',
    });
  });

  it('fires after a closed code block', () => {
    expect(parseCommand('```\n/consort gc\n```\n/consort status')).toEqual({ kind: 'status' });
    expect(parseCommand('```\n/consort gc\n   ```\n/consort status')).toEqual({ kind: 'status' });
    expect(parseCommand('```\n    ```\n/consort gc\n```\n/consort status')).toEqual({ kind: 'status' });
  });

  it('fires after a list item whose fence the next unindented line ends, and after a closed <pre>', () => {
    // GitHub ends the item (and its code) at the line that is not indented into it.
    expect(parseCommand('- ```\n  /consort gc\n/consort status')).toEqual({ kind: 'status' });
    expect(parseCommand('- ```\n  /consort gc\n  ```\n/consort status')).toEqual({ kind: 'status' });
    expect(parseCommand('<pre>\n/consort gc\n</pre>\n/consort status')).toEqual({ kind: 'status' });
    expect(parseCommand('Run <code>x</code> first\n/consort status')).toEqual({ kind: 'status' });
    expect(parseCommand('<code>\n/consort gc\n</code>\n/consort status')).toEqual({ kind: 'status' });
    expect(parseCommand('<codex>\n/consort status')).toEqual({ kind: 'status' });
    // Backticks never closed, closed before the line, or in another paragraph: no span around it.
    expect(parseCommand('a ` b\n/consort status')).toEqual({ kind: 'status' });
    expect(parseCommand('a `b` c ``d\n/consort status\ne `f`')).toEqual({ kind: 'status' });
    expect(parseCommand('a `b\n\n/consort status\n\nc`')).toEqual({ kind: 'status' });
  });
});

describe('edited comments', () => {
  it('runs a command the edit added', () => {
    expect(commandOnEdit('LGTM\n/consort approve spec', 'LGTM')).toEqual({ kind: 'approve', gate: 'spec' });
  });

  it('does not run a command again when the edit changed something else', () => {
    expect(commandOnEdit('LGTM, fixed a typo\n/consort approve spec', 'LGMT\n/consort approve spec')).toBeNull();
  });

  it('runs a changed command', () => {
    expect(commandOnEdit('/consort approve plan', '/consort approve spec')).toEqual({ kind: 'approve', gate: 'plan' });
  });

  it('does not run a command the edit moved into a code block', () => {
    expect(commandOnEdit('```\n/consort approve\n```', '/consort approve')).toBeNull();
  });
});

describe('tokenize and describe', () => {
  it('keeps quoted runs together and unescapes \\" inside double quotes', () => {
    expect(tokenize('a "b c" \'d e\' "say \\"hi\\"" "unterminated x')).toEqual([
      { value: 'a', quoted: false },
      { value: 'b c', quoted: true },
      { value: 'd e', quoted: true },
      { value: 'say "hi"', quoted: true },
      { value: 'unterminated x', quoted: true },
    ]);
  });

  it('quotes a command back as it would be typed', () => {
    expect(describeCommand({ kind: 'approve', gate: 'spec' })).toBe('/consort approve spec');
    expect(describeCommand({ kind: 'reject', gate: 'spec', reason: 'no', text: 'spec no' })).toBe(
      '/consort reject spec no',
    );
    expect(describeCommand({ kind: 'gc' })).toBe('/consort gc');
    expect(describeCommand({ kind: 'allow-run' })).toBe('/consort allow-run');
  });
});

describe('COMMAND_OWNER', () => {
  it("gives every command exactly one answerer: the TDD lane's to the Action, the rest to the App", () => {
    expect(
      Object.entries(COMMAND_OWNER)
        .filter(([, owner]) => owner === 'action')
        .map(([kind]) => kind)
        .sort(),
    ).toEqual(['approve', 'build']);
    for (const body of ['/consort approve spec', '/consort approve', '/consort build phones'])
      expect(COMMAND_OWNER[parseCommand(body)!.kind]).toBe('action');
    for (const body of [
      '/consort approve run',
      '/consort allow-run',
      '/consort retry',
      '/consort reject spec no',
      '/consort status',
      '/consort gc',
      '/consort',
      '/consort deploy',
      '/consort approve Spec!',
    ]) {
      expect(COMMAND_OWNER[parseCommand(body)!.kind]).toBe('app');
    }
    // The help text says who answers each one.
    expect(HELP_TEXT).toContain(
      '| `/consort approve <gate>` | approve a TDD-lane gate, named as its announcement says | the Action (`mode: approve`) |',
    );
  });
});
