/**
 * Lines added and removed per file by a turn: from the commit the turn started from (`base`) to
 * the next turn's start (or the head, for the last turn), limited to the files the turn changed.
 * What a refused turn tried is reverted, so its files show 0/0: the counts are what the turn left.
 * The local host asks git; the App asks GitHub's compare API.
 */
import type { TurnRecord } from '../conductor/state.js';
import { git } from '../git/exec.js';
import type { TurnDetail } from './port.js';

export type Counts = Map<string, { added: number | null; removed: number | null }>;

/** The commits to measure a turn between, or null when its record does not say where it started. */
export function turnSpan(
  turns: readonly TurnRecord[],
  id: string,
  head: string | null,
): { from: string; to: string } | null {
  const index = turns.findLastIndex((t) => t.id === id);
  const turn = turns[index];
  if (!turn?.base) return null;
  const next = turns.slice(index + 1).find((t) => t.base !== undefined && t.base !== turn.base)?.base ?? head;
  return next ? { from: turn.base, to: next } : null;
}

export function diffStatOf(record: TurnRecord, counts: Counts | null): TurnDetail['diffStat'] {
  return record.filesChanged.map((path) => {
    if (counts === null) return { path, added: null, removed: null };
    return { path, ...(counts.get(path) ?? { added: 0, removed: 0 }) };
  });
}

/** `git diff --numstat -z` output (binary files: null counts). */
export function parseNumstat(text: string): Counts {
  const counts: Counts = new Map();
  for (const entry of text.split('\0')) {
    const m = /^(-|\d+)\t(-|\d+)\t(.+)$/s.exec(entry.replace(/^\n/, ''));
    if (!m) continue;
    counts.set(m[3]!, { added: m[1] === '-' ? null : Number(m[1]), removed: m[2] === '-' ? null : Number(m[2]) });
  }
  return counts;
}

/** Counts between two commits of a working copy, for `paths`; null when git cannot tell (a commit gone, no git). */
export function gitCounts(root: string, from: string, to: string, paths: readonly string[]): Promise<Counts | null> {
  if (!/^[0-9a-f]{7,64}$/.test(from) || !/^[0-9a-f]{7,64}$|^HEAD$/.test(to) || paths.length === 0)
    return Promise.resolve(null);
  const args = ['diff', '--numstat', '-z', '--no-renames', from, to, '--', ...paths.map((p) => `:(literal)${p}`)];
  return git(root, args).then((r) => (r.code === 0 ? parseNumstat(r.stdout) : null));
}
