/**
 * Every relative link in the repository's Markdown (README, docs/, CONTRIBUTING, the examples)
 * leads somewhere: the file exists, and an anchor names a heading there as GitHub slugs it (or an
 * explicit `id`). A reader who follows the README alone should never land on a missing section.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const root = process.cwd();

function markdownFiles(): string[] {
  const found = readdirSync(root).filter((f) => f.endsWith('.md'));
  const walk = (dir: string): void => {
    for (const name of readdirSync(path.join(root, dir))) {
      const rel = path.join(dir, name);
      if (name === 'node_modules' || name.startsWith('.')) continue;
      if (statSync(path.join(root, rel)).isDirectory()) walk(rel);
      else if (name.endsWith('.md')) found.push(rel);
    }
  };
  for (const dir of ['docs', 'examples', 'vscode']) if (existsSync(path.join(root, dir))) walk(dir);
  return found;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    for (const [, id] of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id!);
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** Relative link targets outside code spans and fenced blocks. */
function linksOf(text: string): string[] {
  const links: string[] = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const prose = line.replace(/`[^`]*`/g, (m) => (m.includes('](') ? m : '``'));
    for (const [, target] of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue; // http:, mailto:, …
      links.push(target!);
    }
  }
  return links;
}

const files = markdownFiles();

it('finds the documentation', () => {
  expect(files).toEqual(expect.arrayContaining(['README.md', path.join('docs', 'cli.md')]));
});

it.each(files)('every relative link in %s resolves', (file) => {
  const text = readFileSync(path.join(root, file), 'utf8');
  const broken: string[] = [];
  for (const link of linksOf(text)) {
    const [target, anchor] = link.split('#') as [string, string | undefined];
    const resolved = target === '' ? path.join(root, file) : path.resolve(path.dirname(path.join(root, file)), target);
    if (!existsSync(resolved)) {
      broken.push(`${link} (no such file)`);
      continue;
    }
    if (
      anchor &&
      resolved.endsWith('.md') &&
      !anchorsOf(readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor))
    )
      broken.push(`${link} (no such heading)`);
  }
  expect(broken).toEqual([]);
});
