/** Durations as users write them (`90s`, `30m`, `1h`, `7d`, `1h30m`) parsed to milliseconds. */
import { ConsortError } from './errors.js';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/g;

export function parseDuration(text: string): number {
  const trimmed = text.trim();
  if (!/^(\d+(?:\.\d+)?(ms|s|m|h|d|w))+$/.test(trimmed)) {
    throw new ConsortError('invalid-input', `Invalid duration "${text}".`, {
      hint: 'Write a number with a unit: 90s, 30m, 1h, 7d or 1h30m.',
    });
  }
  let total = 0;
  for (const [, value, unit] of trimmed.matchAll(PART)) total += Number(value) * UNITS[unit as string]!;
  if (total <= 0)
    throw new ConsortError('invalid-input', `Duration "${text}" must be positive.`, {
      hint: 'Write a length of time above zero: 90s, 30m, 1h, 7d or 1h30m.',
    });
  return Math.round(total);
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)}s`;
  const parts: string[] = [];
  let rest = Math.round(ms / 1000);
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.slice(0, 2).join('');
}
