/**
 * Parsed files, kept until they change on disk (size or mtime). A page at 1,000 turns per feature
 * or 10,000 check reports must not re-parse everything on every request: only what changed since
 * the last one is read again.
 */
import { open, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';

interface Entry<T> {
  mtimeMs: number;
  size: number;
  value: T;
}

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

  private readonly dirs = new Map<string, { mtimeMs: number; values: unknown[] }>();
  private readonly logs = new Map<string, { mtimeMs: number; size: number; values: unknown[] }>();

  /**
   * Every file of a folder that `accept` takes, parsed. A folder whose mtime did not change has no
   * file added, removed or replaced by rename (how records are written), so its list is reused
   * without a stat per file; otherwise each file is checked as `get` does.
   */
  async dir<T>(
    dir: string,
    accept: (name: string) => boolean,
    parse: (name: string, text: string) => T | undefined,
    kind = 'dir',
  ): Promise<T[]> {
    const info = await stat(dir).catch(() => null);
    if (info === null) return [];
    const key = `${dir}\0${kind}`;
    const hit = this.dirs.get(key);
    if (hit !== undefined && hit.mtimeMs === info.mtimeMs) return hit.values as T[];
    const names = (await readdir(dir).catch(() => [] as string[])).filter(accept).sort();
    const files = names.map((n) => path.join(dir, n));
    this.prune(`${dir}${path.sep}`, new Set(files));
    const values = (
      await Promise.all(names.map((n, i) => this.get(files[i]!, (t) => parse(n, t), undefined, kind)))
    ).filter((v): v is Awaited<T> => v !== undefined);
    this.dirs.set(key, { mtimeMs: info.mtimeMs, values });
    return values as T[];
  }

  /**
   * An append-only JSON-lines file (turns.jsonl, events.jsonl): when it only grew, just the new
   * lines are read and parsed; a file that shrank or was replaced is read again whole.
   */
  async lines<T>(file: string, parse: (value: unknown) => T | undefined): Promise<T[]> {
    const info = await stat(file).catch(() => null);
    if (info === null || !info.isFile()) {
      this.logs.delete(file);
      return [];
    }
    const hit = this.logs.get(file);
    if (hit !== undefined && hit.mtimeMs === info.mtimeMs && hit.size === info.size) return hit.values as T[];
    let values: T[] = [];
    let from = 0;
    if (hit !== undefined && info.size > hit.size) {
      values = [...(hit.values as T[])];
      from = hit.size;
    }
    const handle = await open(file, 'r');
    try {
      const buffer = Buffer.alloc(info.size - from);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, from);
      const text = buffer.subarray(0, bytesRead).toString('utf8');
      // A line still being written (no newline yet) is read next time.
      const end = text.lastIndexOf('\n') + 1;
      values.push(...parseJsonLines(text.slice(0, end), parse));
      this.logs.set(file, { mtimeMs: info.mtimeMs, size: from + Buffer.byteLength(text.slice(0, end)), values });
    } finally {
      await handle.close();
    }
    return values;
  }

  /** Forget files under `prefix` that `keep` does not list (deleted records). */
  prune(prefix: string, keep: ReadonlySet<string>): void {
    for (const key of this.entries.keys())
      if (key.startsWith(prefix) && !keep.has(key.split('\0')[0]!)) this.entries.delete(key);
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
