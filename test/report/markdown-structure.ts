/**
 * Just enough of GFM's block structure to check rendered markdown without a markdown dependency:
 * fenced code blocks as CommonMark closes them, and table cells as cmark-gfm splits them.
 */

export interface CodeBlock {
  lang: string;
  body: string;
}

/** Code blocks and the prose between them; a fence that never closes is a broken layout, so it throws. */
export function parseBlocks(md: string): { blocks: CodeBlock[]; prose: string } {
  const blocks: CodeBlock[] = [];
  const prose: string[] = [];
  const lines = md.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const open = /^ {0,3}(`{3,})([^`]*)$/.exec(lines[i]!);
    if (open === null) {
      prose.push(lines[i]!);
      continue;
    }
    const fence = open[1]!;
    const close = lines.findIndex((l, j) => j > i && new RegExp(`^ {0,3}\`{${fence.length},}\\s*$`).test(l));
    if (close === -1) throw new Error(`unclosed code fence at line ${i + 1}`);
    blocks.push({ lang: open[2]!.trim(), body: lines.slice(i + 1, close).join('\n') });
    i = close;
  }
  return { blocks, prose: prose.join('\n') };
}

/** The cells of a table row: a backslash escapes the next character, so `\|` stays inside a cell. */
export function cells(row: string): string[] {
  const out: string[] = [];
  let cell = '';
  for (let i = 0; i < row.length; i += 1) {
    const c = row[i]!;
    if (c === '\\' && i + 1 < row.length) {
      cell += c + row[i + 1]!;
      i += 1;
    } else if (c === '|') {
      out.push(cell);
      cell = '';
    } else {
      cell += c;
    }
  }
  out.push(cell);
  return out.slice(1, -1);
}

/** Each table in the prose as its rows of cells (header first, delimiter row dropped). */
export function tables(prose: string): string[][][] {
  const found: string[][][] = [];
  let current: string[][] | null = null;
  for (const line of prose.split('\n')) {
    if (line.startsWith('|')) {
      current ??= [];
      if (!/^\|( -+:? \|)+$/.test(line)) current.push(cells(line));
    } else if (current !== null) {
      found.push(current);
      current = null;
    }
  }
  if (current !== null) found.push(current);
  return found;
}

/** HTML tag names that appear in the prose (outside code blocks), e.g. `code`, `/details`. */
export function tagsIn(prose: string): string[] {
  return [...prose.matchAll(/<(\/?[A-Za-z][A-Za-z0-9-]*)/g)].map((m) => m[1]!.toLowerCase());
}
