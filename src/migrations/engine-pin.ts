/**
 * The node-pg-migrate a project deploys with when it is not installed (the App's checkout, an
 * Action step before `npm ci`): the exact version its lockfile pins, installed once into a cache
 * directory per version and reused by every later check. Lockfiles are untrusted input: each is
 * parsed and validated, and a version is used only when it is an exact one.
 */
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { childEnv } from '../core/child-env.js';
import { ConsortError } from '../core/errors.js';
import { NPM_PASS } from '../tools/npm-env.js';
import { npmInstall, withToolsLock } from '../tools/npm-install.js';
import { toolsDir } from '../tools/platform-packages.js';
import { asPackage, type MigrationsPackage } from './project-packages.js';

const NAME = 'node-pg-migrate';
const EXACT = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;

export interface LockedVersion {
  version: string;
  /** The lockfile it was read from, relative to the workspace (`packages/db/package-lock.json`). */
  lockfile: string;
}

const NpmLock = z
  .object({
    packages: z.record(z.string(), z.object({ version: z.string().optional() }).loose()).optional(),
    dependencies: z.record(z.string(), z.object({ version: z.string().optional() }).loose()).optional(),
  })
  .loose();

const PnpmLock = z
  .object({
    importers: z
      .record(
        z.string(),
        z
          .object({
            dependencies: z.record(z.string(), z.unknown()).optional(),
            devDependencies: z.record(z.string(), z.unknown()).optional(),
          })
          .loose(),
      )
      .optional(),
    dependencies: z.record(z.string(), z.unknown()).optional(),
    devDependencies: z.record(z.string(), z.unknown()).optional(),
  })
  .loose();

/** `7.9.1`, `7.9.1(pg@8.11.3)` (pnpm 7+), `7.9.1_pg@8.11.3` (pnpm 6), `{ version: … }` (pnpm 8+ importers). */
function pnpmVersion(entry: unknown): string | undefined {
  const raw = typeof entry === 'string' ? entry : (entry as { version?: unknown } | null)?.version;
  return typeof raw === 'string' ? raw.replace(/[(_].*$/, '') : undefined;
}

/**
 * `pkg`: the package's path from the lockfile's directory (posix, `''` for the lockfile's own).
 * A workspaces lockfile holds a package's own copy as `packages/db/node_modules/<name>`, and the
 * hoisted one, which Node finds from every package, as `node_modules/<name>`.
 */
function fromNpm(text: string, name: string, pkg: string): string | undefined {
  const lock = NpmLock.safeParse(JSON.parse(text));
  if (!lock.success) return undefined;
  const packages = lock.data.packages;
  return (
    (pkg === '' ? undefined : packages?.[`${pkg}/node_modules/${name}`]?.version) ??
    packages?.[`node_modules/${name}`]?.version ??
    lock.data.dependencies?.[name]?.version
  );
}

/** pnpm keeps each workspace package's dependencies under its importer (`packages/db`); the root's is `.`. */
function fromPnpm(text: string, name: string, pkg: string): string | undefined {
  const lock = PnpmLock.safeParse(parseYaml(text));
  if (!lock.success) return undefined;
  const importer = lock.data.importers?.[pkg === '' ? '.' : pkg] ?? (pkg === '' ? lock.data : undefined);
  return pnpmVersion(importer?.dependencies?.[name] ?? importer?.devDependencies?.[name]);
}

/**
 * Classic (`"node-pg-migrate@^7.9.1", node-pg-migrate@^7.0.0:` then `version "7.9.1"`) and Berry
 * (`"node-pg-migrate@npm:^7.9.1":` then `version: 7.9.1`). A lockfile of several packages may hold
 * several entries (one per range the packages ask for): the one whose descriptors name `range`,
 * what the package that owns the migrations declares, is its copy; without one, the first.
 */
function fromYarn(text: string, name: string, range?: string): string | undefined {
  const entries: { descriptors: string[]; version: string | undefined }[] = [];
  let current: { descriptors: string[]; version: string | undefined } | undefined;
  for (const line of text.split(/\r?\n/)) {
    if (line === '' || line.startsWith('#')) continue;
    if (!/^[ \t]/.test(line)) {
      current = line.endsWith(':')
        ? {
            descriptors: line
              .slice(0, -1)
              .split(',')
              .map((d) => d.trim().replace(/^"|"$/g, '')),
            version: undefined,
          }
        : undefined;
      if (current && current.descriptors.some((d) => d.startsWith(`${name}@`))) entries.push(current);
      continue;
    }
    // The entry's own `version`, not a nested key's (its dependencies are indented further).
    const v = /^[ \t]{1,2}version:? "?([^"\s]+)"?\s*$/.exec(line);
    if (current && current.version === undefined && v) current.version = v[1];
  }
  const wanted =
    range === undefined
      ? undefined
      : entries.find((e) => e.descriptors.some((d) => d === `${name}@${range}` || d === `${name}@npm:${range}`));
  return (wanted ?? entries[0])?.version;
}

const LOCKFILES: readonly [string, (text: string, name: string, pkg: string, range?: string) => string | undefined][] =
  [
    ['package-lock.json', fromNpm],
    ['npm-shrinkwrap.json', fromNpm],
    ['pnpm-lock.yaml', fromPnpm],
    ['yarn.lock', (text, name, _pkg, range) => fromYarn(text, name, range)],
  ];

/** The range `dir`'s package.json asks for `name` (any kind of dependency), if it names one. */
async function declaredRange(dir: string, name: string): Promise<string | undefined> {
  const text = await readFile(path.join(dir, 'package.json'), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const parsed = DeclaredDeps.safeParse(JSON.parse(text));
    if (!parsed.success) return undefined;
    const d = parsed.data;
    return d.dependencies?.[name] ?? d.devDependencies?.[name] ?? d.optionalDependencies?.[name];
  } catch {
    return undefined;
  }
}

const DeclaredDeps = z
  .object({
    dependencies: z.record(z.string(), z.string()).optional(),
    devDependencies: z.record(z.string(), z.string()).optional(),
    optionalDependencies: z.record(z.string(), z.string()).optional(),
  })
  .loose();

/** The exact node-pg-migrate version the project's lockfile pins, if it has one that does. */
export async function lockedVersion(at: string | MigrationsPackage): Promise<LockedVersion | undefined> {
  return lockedVersionOf(at, NAME);
}

/**
 * The exact version of package `name` the project's lockfile pins, if it has one that does. `at`:
 * the workspace, or the package that owns the migrations — then its own lockfile first, then each
 * one above it up to the root (a workspaces lockfile), as Node would find the installed copy.
 */
export async function lockedVersionOf(
  at: string | MigrationsPackage,
  name: string,
): Promise<LockedVersion | undefined> {
  const { root, dir } = asPackage(at);
  const range = await declaredRange(dir, name);
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    const pkg = path.relative(d, dir).split(path.sep).join('/');
    for (const [lockfile, read] of LOCKFILES) {
      const text = await readFile(path.join(d, lockfile), 'utf8').catch(() => undefined);
      if (text === undefined) continue;
      let version: string | undefined;
      try {
        version = read(text, name, pkg, range);
      } catch {
        version = undefined; // unparsable: as if it pinned nothing
      }
      const file = path.relative(root, path.join(d, lockfile)).split(path.sep).join('/');
      if (version !== undefined && EXACT.test(version)) return { version, lockfile: file };
    }
    if (d === path.resolve(root) || d === path.dirname(d)) return undefined;
  }
}

/** Where a version is installed: `<tools directory>/node-pg-migrate/<version>`. */
export function engineCacheDir(version: string, env: NodeJS.ProcessEnv = process.env): string {
  return packageCacheDir(NAME, version, env);
}

/** Where a version of package `name` is installed: `<tools directory>/<name>/<version>`. */
export function packageCacheDir(name: string, version: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(toolsDir(env), name, version);
}

const installedVersion = async (dir: string, name: string): Promise<string | undefined> => {
  const text = await readFile(path.join(dir, 'node_modules', name, 'package.json'), 'utf8').catch(() => undefined);
  const parsed = text === undefined ? undefined : z.object({ version: z.string() }).safeParse(JSON.parse(text));
  return parsed?.success ? parsed.data.version : undefined;
};

/**
 * The package directory of `version` in the cache, installed by `npm install` the first time
 * (serialized across processes, so concurrent checks install it once).
 */
export async function cachedEngine(
  version: string,
  options: { env?: NodeJS.ProcessEnv; log?: (line: string) => void } = {},
): Promise<string> {
  return cachedPackage(NAME, version, options);
}

/**
 * Whether `installed` is what `wanted` asks for: an exact version, or a major (`5`) — the latter
 * when the lockfile pins no version of a peer and Consort picks one the package supports.
 */
const satisfies = (installed: string | undefined, wanted: string): boolean =>
  installed !== undefined && (EXACT.test(wanted) ? installed === wanted : installed.split('.')[0] === wanted);

/**
 * As cachedEngine, for any package a project's lockfile pins (its TypeScript loader). `peers`:
 * packages installed beside it at the given versions (exact, or a major), so npm does not resolve
 * them to whatever is latest (ts-node with TypeScript 7, which has no compiler API for it); they
 * are part of the cache directory's name (`<name>/<version>+<peer>@<version>…`).
 */
export async function cachedPackage(
  name: string,
  version: string,
  options: { env?: NodeJS.ProcessEnv; log?: (line: string) => void; peers?: Readonly<Record<string, string>> } = {},
): Promise<string> {
  const env = options.env ?? process.env;
  const peers = Object.entries(options.peers ?? {}).sort(([a], [b]) => a.localeCompare(b));
  const key = [version, ...peers.map(([n, v]) => `${n.replace(/\//g, '+')}@${v}`)].join('+');
  const dir = packageCacheDir(name, key, env);
  const pkg = path.join(dir, 'node_modules', name);
  const installed = async () =>
    (await installedVersion(dir, name)) === version &&
    (await Promise.all(peers.map(async ([n, v]) => satisfies(await installedVersion(dir, n), v)))).every(Boolean);
  const specs = [`${name}@${version}`, ...peers.map(([n, v]) => `${n}@${v}`)];
  if (await installed()) return pkg;
  await withToolsLock(dir, async () => {
    if (await installed()) return; // another process installed it meanwhile
    const beside = peers.length ? ` (with ${specs.slice(1).join(', ')})` : '';
    options.log?.(
      `Installing ${name}@${version}${beside}, the version the project's lockfile pins, into ${dir} (once)`,
    );
    await npmInstall(dir, specs, childEnv({}, { inherit: env, pass: NPM_PASS }));
  });
  if (
    !(await installed()) ||
    !(await access(pkg).then(
      () => true,
      () => false,
    ))
  ) {
    throw new ConsortError('tools-unavailable', `npm did not install ${specs.join(' ')} into ${dir}.`, {
      hint: `Install the project's dependencies before the check (npm ci), or pre-install it: npm install --no-save --prefix ${dir} ${specs.join(' ')}.`,
    });
  }
  return pkg;
}
