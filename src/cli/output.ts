/** How commands talk to people and scripts: data on stdout (JSON with --json), progress on stderr. */
import type { BranchRecord, BranchMode } from '../ports/branch-provider.js';
import { maskUrl } from '../core/redact.js';

export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  /** How `consort approve` asks a person (default: on /dev/tty, src/cli/confirm.ts); tests pass their own. */
  confirm?: (prompt: string, expected: string) => Promise<boolean>;
}

export const processIo: Io = {
  out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
};

export function printJson(io: Io, value: unknown): void {
  io.out(JSON.stringify(value, null, 2));
}

/** The stable JSON shape of a branch in `branch create|list --json`. */
export function branchJson(branch: BranchRecord, url: string, mode: BranchMode, showSecrets: boolean) {
  return {
    name: branch.name,
    parent: branch.parent,
    createdAt: branch.createdAt.toISOString(),
    expiresAt: branch.expiresAt?.toISOString() ?? null,
    url: showSecrets ? url : maskUrl(url),
    mode,
    database: branch.database,
    gitBranch: branch.gitBranch,
  };
}

/** `7.6 MB`; `-` when unknown. */
export function formatBytes(bytes: number | null): string {
  if (bytes === null) return '-';
  if (bytes < 1024) return `${bytes} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export function relativeTime(date: Date | null, now = new Date()): string {
  if (!date) return '-';
  const s = Math.round((date.getTime() - now.getTime()) / 1000);
  const abs = Math.abs(s);
  const text =
    abs < 60
      ? `${abs}s`
      : abs < 3600
        ? `${Math.round(abs / 60)}m`
        : abs < 86400
          ? `${Math.round(abs / 3600)}h`
          : `${Math.round(abs / 86400)}d`;
  if (abs < 1) return 'just now';
  return s > 0 ? `in ${text}` : `${text} ago`;
}
