import { clip, fenced, mdCode, mdText, shellQuote, stripControl } from '../../src/report/escape.js';
import { renderCheckMarkdown } from '../../src/report/markdown.js';
import { renderCheckTerminal } from '../../src/report/terminal.js';
import { HOSTILE_HTML, HOSTILE_STATEMENT, hostileReport } from '../fixtures/reports/hostile.js';
import { passingReport } from '../fixtures/reports/passing.js';
import { cells, parseBlocks, tables, tagsIn } from './markdown-structure.js';

describe('mdText', () => {
  it.each([
    ['</details><script>x</script>', '&lt;/details&gt;&lt;script&gt;x&lt;/script&gt;'],
    ['| pipe |', '\\| pipe \\|'],
    ['a `b` *c* _d_ [e](f) ~g~ $h$ \\', 'a \\`b\\` \\*c\\* \\_d\\_ \\[e\\](f) \\~g\\~ \\$h\\$ \\\\'],
    ['# not a heading', '\\# not a heading'],
    ['- not a list', '\\- not a list'],
    ['1. not a list', '1\\. not a list'],
    ['v1.2.3 and 3-4', 'v1.2.3 and 3-4'],
    ['line one\n\nline  two', 'line one line two'],
    ['&amp; stays text', '&amp;amp; stays text'],
    ['ping @octocat or @acme/team', 'ping @\u2060octocat or @\u2060acme/team'],
    ['mail me@example.com', 'mail me@example.com'],
  ])('escapes %j', (input, expected) => {
    expect(mdText(input)).toBe(expected);
  });

  it('keeps a table cell whole whatever the text holds', () => {
    for (const text of ['| a | b |', 'a\\|b', 'a\\\\|b', '`|`', '\\']) {
      expect(cells(`| ${mdText(text)} | ${mdCode(text)} |`)).toHaveLength(2);
    }
  });
});

describe('fenced', () => {
  it('uses a fence longer than any backtick run inside', () => {
    expect(fenced('a', 'sql')).toBe('```sql\na\n```');
    expect(fenced('```\n`````\nx', 'sql')).toBe('``````sql\n```\n`````\nx\n``````');
  });

  it('cannot be closed early by its content', () => {
    const { blocks, prose } = parseBlocks(`before\n\n${fenced(HOSTILE_STATEMENT, 'sql')}\n\nafter`);
    expect(blocks).toEqual([{ lang: 'sql', body: HOSTILE_STATEMENT }]);
    expect(prose).toBe('before\n\n\nafter');
  });
});

describe('stripControl, clip and shellQuote', () => {
  it('removes terminal escapes, controls and bidi overrides, and normalizes line ends', () => {
    expect(stripControl('\u001b[31mred\u001b[0m\r\n\u001b]0;title\u0007x\u0000\u202eevil\rend\tok')).toBe(
      'red\nx' + 'evil\nend\tok',
    );
  });

  it('clips with an ellipsis without splitting a surrogate pair', () => {
    expect(clip('abcdef', 4)).toBe('abc…');
    expect(clip('abc', 3)).toBe('abc');
    expect(clip('ab😀cd', 4)).toBe('ab…');
  });

  it.each([
    ['migrations/1_a.sql', 'migrations/1_a.sql'],
    ['a b.sql', "'a b.sql'"],
    ["it's.sql", "'it'\\''s.sql'"],
    ['$(rm -rf ~)`x`', "'$(rm -rf ~)`x`'"],
    ['-rf', './-rf'],
  ])('quotes %j for a POSIX shell', (word, quoted) => {
    expect(shellQuote(word)).toBe(quoted);
  });
});

describe('a hostile report in markdown', () => {
  const md = renderCheckMarkdown(hostileReport);
  const { blocks, prose } = parseBlocks(md);

  it("injects no HTML: the only tags outside code blocks are the renderer's own", () => {
    expect(new Set(tagsIn(prose))).toEqual(
      new Set(['code', '/code', 'details', '/details', 'summary', '/summary', 'sub', '/sub', 'br']),
    );
    expect(tagsIn(prose).filter((t) => t === 'details')).toHaveLength(2);
    expect(tagsIn(prose).filter((t) => t === '/details')).toHaveLength(2);
  });

  it('keeps every table row to its columns', () => {
    const all = tables(prose);
    expect(all).toHaveLength(3);
    for (const table of all) {
      const width = table[0]?.length;
      expect(table.every((row) => row.length === width)).toBe(true);
    }
  });

  it('keeps foreign text inside its code blocks, verbatim', () => {
    expect(blocks.find((b) => b.lang === 'sql')?.body).toBe(HOSTILE_STATEMENT);
    expect(blocks.map((b) => b.body)).toContain(`ERROR 42704: ${HOSTILE_HTML}\n\`\`\``);
    expect(blocks.find((b) => b.lang === 'diff')?.body).toBe(hostileReport.stages.schemaDiff.text);
    expect(blocks.at(-1)?.body).toBe('evil\n</details>\n````\n<script>alert(3)</script>');
  });

  it('gives a rename command that is safe to paste', () => {
    expect(blocks.find((b) => b.lang === 'sh')?.body).toBe(
      "git mv 'migrations/1_it'\\''s `$(rm -rf ~)`.sql' 'migrations/-3 | x.sql'",
    );
  });

  it('mentions nobody and carries no control characters', () => {
    expect(prose).not.toMatch(/(^|[^\w])@octocat/);
    // eslint-disable-next-line no-control-regex -- asserting their absence
    expect(md).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u202e]/);
  });

  it('escapes the title option too', () => {
    expect(renderCheckMarkdown(passingReport, { title: HOSTILE_HTML })).toMatch(
      /^## ✅ &lt;\/details&gt;&lt;script&gt;/,
    );
  });
});

describe('a hostile report in the terminal', () => {
  it('sends no escape sequences of its own without color', () => {
    expect(renderCheckTerminal(hostileReport)).not.toContain('\u001b');
    expect(renderCheckTerminal(hostileReport)).not.toContain('\u0007');
    expect(renderCheckTerminal(hostileReport)).not.toContain('\u202e');
  });

  it("sends only the renderer's color codes with color", () => {
    const text = renderCheckTerminal(hostileReport, { color: true });
    // eslint-disable-next-line no-control-regex -- removing the renderer's own SGR codes
    expect(text.replace(/\u001b\[\d+m/g, '')).not.toContain('\u001b');
    expect(text).not.toContain('pwned');
  });
});
