/**
 * Parsed files, kept until they change on disk (size or mtime). A page at 1,000 turns per feature
 * or 10,000 check reports must not re-parse everything on every request: only what changed since
 * the last one is read again.
 */
import { stat, readFile } from 'node:fs/promises';

interface Entry<T> { mtimeMs: number; size: number; value: T }

export class FileCache {
  private readonly entries = new Map<string, Entry<unknown>>();

  /** `parse(text)` of the file, or `missing` when it does not exist. */
  /** `kind` tells apart two readings of one file (a check report as a row and as a whole). */
  async get<T>(file: string, parse: (text: string) => T, missing: T, kind = ''): Promise<T> {
    const key = kind === '' ? file : `${file}\0${kind}`;
    const info = await stat(file).catch(() => null);
    if (info === null || !info.isFile()) {
      this.entries.delete(key);
      return missing;
    }
    const hit = this.entries.get(key);
    if (hit !== undefined && hit.mtimeMs === info.mtimeMs && hit.size === info.size) return hit.value as T;
    const text = await readFile(file, 'utf8').catch(() => null);
    if (text === null) return missing;
    const value = parse(text);
    this.entries.set(key, { mtimeMs: info.mtimeMs, size: info.size, value });
    return value;
  }

  /** Forget files under `prefix` that `keep` does not list (deleted records). */
  prune(prefix: string, keep: ReadonlySet<string>): void {
    for (const key of this.entries.keys()) if (key.startsWith(prefix) && !keep.has(key.split('\0')[0]!)) this.entries.delete(key);
  }
}

/** JSON lines, each validated; lines that fail are skipped (a record being appended, or a foreign one). */
export function parseJsonLines<T>(text: string, parse: (value: unknown) => T | undefined): T[] {
  const out: T[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    const parsed = parse(value);
    if (parsed !== undefined) out.push(parsed);
  }
  return out;
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
