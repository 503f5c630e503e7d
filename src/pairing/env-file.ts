/**
 * The dotenv file that carries the paired branch's URL. One line is replaced (or appended); every
 * other byte of the file stays as it was, and the new content replaces the old with a rename so an
 * application reading it mid-switch sees the old file or the new one, never half of either.
 */
import { randomBytes } from 'node:crypto';
import { readFile, realpath, rename, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

export type EnvWrite = 'written' | 'unchanged';

// Characters after which an unquoted dotenv value would be cut or expanded by some loader.
const NEEDS_QUOTES = /[\s#"'`$\\]/;

/** `value` as a dotenv value: bare when safe, else double-quoted with `\` and `"` escaped. */
export function formatEnvValue(value: string): string {
  if (value !== '' && !NEEDS_QUOTES.test(value)) return value;
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\$/g, '\\$').replace(/\n/g, '\\n')}"`;
}

function lineMatcher(key: string): RegExp {
  return new RegExp(`^(\\s*(?:export\\s+)?)${key}\\s*=`);
}

/** The content with `key` set: the first assignment replaced in place (keeping `export `), else appended. */
export function setEnvLine(content: string, key: string, value: string): string {
  const eol = content.includes('\r\n') ? '\r\n' : '\n';
  const lines = content.split(/\r?\n/);
  const match = lineMatcher(key);
  const line = (prefix: string) => `${prefix}${key}=${formatEnvValue(value)}`;
  const at = lines.findIndex((l) => match.test(l));
  if (at >= 0) {
    lines[at] = line(match.exec(lines[at]!)![1]!);
    return lines.join(eol);
  }
  if (content === '') return `${line('')}${eol}`;
  const trailing = content.endsWith('\n') ? '' : eol;
  return `${content}${trailing}${line('')}${eol}`;
}

/** The value of `key` in dotenv content (first assignment), unquoted; undefined when absent. */
export function getEnvValue(content: string, key: string): string | undefined {
  const match = lineMatcher(key);
  const line = content.split(/\r?\n/).find((l) => match.test(l));
  if (line === undefined) return undefined;
  const raw = line.slice(line.indexOf('=') + 1).trim();
  if (raw.startsWith('"') && raw.endsWith('"') && raw.length >= 2) {
    return raw
      .slice(1, -1)
      .replace(/\\n/g, '\n')
      .replace(/\\(["\\$])/g, '$1');
  }
  if (raw.startsWith("'") && raw.endsWith("'") && raw.length >= 2) return raw.slice(1, -1);
  return raw.replace(/\s+#.*$/, '');
}

export async function readEnvValue(file: string, key: string): Promise<string | undefined> {
  const content = await readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return '';
    throw e;
  });
  return getEnvValue(content, key);
}

/**
 * Set `key=value` in `file`, atomically. A symlinked file is written through (the link stays); a new
 * file is created readable by its owner only, since the URL may carry a password.
 */
export async function writeEnvValue(file: string, key: string, value: string): Promise<EnvWrite> {
  const target = await realpath(file).catch(() => file);
  let before = '';
  let mode = 0o600;
  try {
    before = await readFile(target, 'utf8');
    mode = (await stat(target)).mode & 0o777;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const after = setEnvLine(before, key, value);
  if (after === before) return 'unchanged';
  const temp = path.join(
    path.dirname(target),
    `.${path.basename(target)}.consort-${process.pid}-${randomBytes(4).toString('hex')}.tmp`,
  );
  try {
    await writeFile(temp, after, { mode });
    await rename(temp, target);
  } catch (e) {
    await unlink(temp).catch(() => undefined);
    throw e;
  }
  return 'written';
}
