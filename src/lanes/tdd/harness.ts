/**
 * The parts of the test harness judged by content rather than by path (the path globs are
 * DEFAULT_HARNESS in src/conductor/roles.ts):
 *
 * - `package.json` is the driver's to change (dependencies), but its keys that decide how the
 *   suite runs — `scripts` (`"test": "exit 0"`), the runner's own key (`jest.testPathIgnorePatterns`,
 *   `passWithNoTests`, `moduleNameMapper` to an in-memory double), `imports`, `overrides` — are test-owned;
 * - a data file a frozen test reads (its expected values in `expected.json`) is as frozen as the test.
 *
 * The driver reports such paths as `facts.testOwned`; the scope check refuses them outside RED.
 */
import path from 'node:path';
import type { FileChange } from '../../conductor/events.js';
import type { Workspace } from '../../ports/workspace.js';
import { readText } from './store.js';

export const PACKAGE_RUNNER_KEYS = [
  'scripts',
  'jest',
  'mocha',
  'ava',
  'vitest',
  'tap',
  'c8',
  'nyc',
  'imports',
  'type',
  'overrides',
  'resolutions',
  'pnpm',
  'workspaces',
  'packageManager',
] as const;

/** Extensions of files a test reads as data (code it imports is production code, judged by the proof). */
const DATA = /\.(json|jsonl|ndjson|csv|tsv|txt|ya?ml|xml|sql|html?|md|snap|env|golden|bin)$/i;

function runnerKeys(text: string | null): string | null {
  if (text === null) return null;
  try {
    const json = JSON.parse(text) as Record<string, unknown>;
    return JSON.stringify(PACKAGE_RUNNER_KEYS.map((k) => [k, json[k] ?? null]));
  } catch {
    return 'unparseable';
  }
}

/** String literals in a test that name a data file, normalized (`./`, `../` dropped). */
export function dataReferences(source: string): string[] {
  const refs = new Set<string>();
  for (const m of source.matchAll(/(['"`])([^'"`\n$]{1,200})\1/g)) {
    const literal = m[2]!.trim();
    if (!DATA.test(literal)) continue;
    refs.add(literal.replace(/^(\.{1,2}\/)+/, ''));
  }
  return [...refs];
}

function referenced(changed: string, refs: readonly string[]): boolean {
  return refs.some(
    (ref) =>
      changed === ref || changed.endsWith(`/${ref}`) || (!ref.includes('/') && path.posix.basename(changed) === ref),
  );
}

export async function testOwnedChanges(
  ws: Workspace,
  base: string,
  changes: readonly FileChange[],
  frozenTests: readonly string[],
): Promise<string[]> {
  const owned = new Set<string>();
  for (const change of changes) {
    if (path.posix.basename(change.path) !== 'package.json' || change.status === 'added') continue;
    const before = runnerKeys(await ws.fileAt(base, change.path));
    const after = runnerKeys(await readText(path.join(ws.dir, change.path)));
    if (before !== after) owned.add(change.path);
  }
  const refs: string[] = [];
  for (const test of frozenTests) refs.push(...dataReferences((await readText(path.join(ws.dir, test))) ?? ''));
  for (const change of changes)
    if (!frozenTests.includes(change.path) && referenced(change.path, refs)) owned.add(change.path);
  return [...owned].sort();
}
