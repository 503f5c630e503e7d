/**
 * Consort's package root: the nearest ancestor with Consort's own package.json. Modules find the
 * files shipped beside the code (roles/, migrations/, examples/, package.json) through it, so they
 * work from src/ (tests), lib/src/ (the tsc build) and wherever a bundle puts them.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** package.json's `name`. */
export const PACKAGE_NAME = 'consort-db';

const cache = new Map<string, string | null>();

/** The package root above `from` (a directory; default: this module's), or null when there is none. */
export function findPackageRoot(from: string = path.dirname(fileURLToPath(import.meta.url))): string | null {
  const hit = cache.get(from);
  if (hit !== undefined) return hit;
  let found: string | null = null;
  for (let dir = from; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === PACKAGE_NAME) {
          found = dir;
          break;
        }
      } catch {
        // not a manifest we can read: keep looking
      }
    }
    if (path.dirname(dir) === dir) break;
  }
  cache.set(from, found);
  return found;
}
