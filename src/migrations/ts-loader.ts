/**
 * How TypeScript migrations load, as the project's deploy loads them. node-pg-migrate 9 loads
 * them itself (through jiti); 8.x `import()`s and 7.x `require()`s each file, so a project on
 * those runs its migrate command with a TypeScript loader (`--tsx`, `--tsconfig` with ts-node,
 * `node --import tsx`). Consort registers that same loader, resolved from the project, in the child
 * process the migrations run in (never in Consort's own process: ts-register.ts).
 * A `.ts` migration with neither is refused with the fix, before any database is touched.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { z } from 'zod';
import { ConsortError } from '../core/errors.js';
import type { MigrationEngine } from './engine.js';
import { cachedPackage, lockedVersionOf } from './engine-pin.js';
import { deployPathAliases } from './deploy-paths.js';
import { migrationsPackage, projectRequire, type MigrationsPackage } from './project-packages.js';

export interface TypeScriptLoader {
  /** `jiti` (node-pg-migrate's own), `tsx` or `ts-node`. */
  name: string;
  version: string;
  /**
   * `engine`: the runner loads TypeScript itself; `project`: the project's installed loader;
   * `lockfile`: the version of it the project's lockfile pins, installed once into the cache.
   */
  source: 'engine' | 'project' | 'lockfile';
}

/** What resolves the migrations' TypeScript path aliases, as the project's deploy resolves them (deploy-paths.ts). */
export interface PathAliasLoader {
  /** `tsconfig-paths`: the project's, registered as its scripts register it; `jiti`: node-pg-migrate 9's own (`--tsconfig-paths`). */
  name: 'tsconfig-paths' | 'jiti';
  version: string;
  /** As TypeScriptLoader's. */
  source: 'engine' | 'project' | 'lockfile';
  /** How the project's scripts ask for it: `-r tsconfig-paths/register in package.json's script "migrate"`. */
  how: string;
}

export interface LoaderHandle {
  loader: TypeScriptLoader | undefined;
  /** Undefined: the deploy resolves no path alias (or none of the migrations is code). */
  paths?: PathAliasLoader;
  /**
   * The engine to apply with: the project's loader, when one is needed, named on it (`tsLoader`),
   * and how path aliases resolve, when the deploy resolves them (`tsconfigPaths`).
   */
  engine: MigrationEngine;
  dispose(): void;
}

const TS_FILE = /\.(?:ts|mts|cts)$/;
const CODE_FILE = /\.(?:[cm]?[jt]s)$/;
const TSCONFIG_PATHS = 'tsconfig-paths';
const Manifest = z
  .object({
    name: z.string().optional(),
    version: z.string().optional(),
    type: z.string().optional(),
    dependencies: z.record(z.string(), z.string()).optional(),
    devDependencies: z.record(z.string(), z.string()).optional(),
    scripts: z.record(z.string(), z.string()).optional(),
  })
  .loose();

async function manifest(file: string): Promise<z.infer<typeof Manifest> | undefined> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const parsed = Manifest.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** jiti, when the engine depends on it (node-pg-migrate 9 and later); its version as installed beside the engine, else the declared range. */
async function engineLoader(engine: MigrationEngine): Promise<TypeScriptLoader | undefined> {
  // The bundled Action inlines node-pg-migrate 9 with jiti: no package directory to read.
  if (engine.dir === '') return { name: 'jiti', version: 'bundled', source: 'engine' };
  const pkg = await manifest(path.join(engine.dir, 'package.json'));
  const declared = pkg?.dependencies?.jiti;
  if (declared === undefined) return undefined;
  let version = declared;
  try {
    const file = createRequire(path.join(engine.dir, 'package.json')).resolve('jiti/package.json');
    version = (await manifest(file))?.version ?? declared;
  } catch {
    // jiti hides its manifest behind `exports` in some versions; the declared range says enough.
  }
  return { name: 'jiti', version, source: 'engine' };
}

/** The loader the package's migrate script names, else the first of tsx and ts-node it has installed. */
async function projectLoader(
  owner: MigrationsPackage,
): Promise<{ name: 'tsx' | 'ts-node'; version: string; require: NodeJS.Require } | undefined> {
  const pkg = await manifest(path.join(owner.dir, 'package.json'));
  const scripts = Object.values(pkg?.scripts ?? {})
    .filter((s) => s.includes('node-pg-migrate'))
    .join('\n');
  const named: ('tsx' | 'ts-node')[] = /\btsx\b/.test(scripts)
    ? ['tsx', 'ts-node']
    : /ts-node|--tsconfig/.test(scripts)
      ? ['ts-node', 'tsx']
      : ['tsx', 'ts-node'];
  for (const name of named) {
    const req = await projectRequire(owner, name);
    if (!req) continue;
    let file: string;
    try {
      file = req.resolve(`${name}/package.json`);
    } catch {
      continue;
    }
    return { name, version: (await manifest(file))?.version ?? 'unknown', require: req };
  }
  return undefined;
}

/**
 * The TypeScript a lockfile-pinned ts-node compiles with: the version the lockfile pins, else the
 * newest major ts-node runs on. Left to npm, ts-node's peer would be the latest TypeScript, and 7
 * (the native compiler) has no `ts.sys` for it: "Cannot read properties of undefined (reading 'fileExists')".
 */
export const TS_NODE_TYPESCRIPT_MAJOR = '5';

async function tsNodeTypeScript(owner: MigrationsPackage): Promise<string> {
  return (await lockedVersionOf(owner, 'typescript'))?.version ?? TS_NODE_TYPESCRIPT_MAJOR;
}

/**
 * Which loader makes `files` loadable by `engine` as the project's deploy would. Nothing is
 * registered here (this may be the App's process, and the loader is the repository's package):
 * the project's loader is named on the returned engine, and the child process that runs the
 * migrations (apply-child.ts) registers it there. No TypeScript among them: nothing to do.
 */
export async function prepareTypeScript(
  engine: MigrationEngine,
  workspace: string,
  files: readonly string[],
  options: {
    /** `migrations.dir`: its package's loader counts (migrationsPackage); default: the workspace's. */
    migrationsDir?: string;
    env?: NodeJS.ProcessEnv;
    log?: (line: string) => void;
  } = {},
): Promise<LoaderHandle> {
  const ts = files.filter((f) => TS_FILE.test(f));
  // SQL alone: nothing to load, and no alias to resolve.
  if (!files.some((f) => CODE_FILE.test(f))) return { loader: undefined, engine, dispose: () => undefined };
  const owner = await migrationsPackage(workspace, options.migrationsDir);
  // Where the child resolves the loader from: the package, and the root above it when they differ.
  const at = { workspace: owner.dir, ...(owner.dir === owner.root ? {} : { root: owner.root }) };
  const paths = await pathAliases(engine, workspace, owner, at, options);
  if (paths) engine = paths.engine;
  const none: LoaderHandle = {
    loader: undefined,
    ...(paths ? { paths: paths.loader } : {}),
    engine,
    dispose: () => undefined,
  };
  if (ts.length === 0) return none;
  const own = await engineLoader(engine);
  if (own) return { ...none, loader: own };
  const found = await projectLoader(owner);
  if (found) {
    return {
      ...none,
      loader: { name: found.name, version: found.version, source: 'project' },
      engine: { ...engine, tsLoader: { name: found.name, ...at } },
    };
  }
  // Not installed (the App's checkout, an Action step before npm ci): the version its lockfile pins.
  for (const name of ['tsx', 'ts-node'] as const) {
    const locked = await lockedVersionOf(owner, name);
    if (!locked) continue;
    const dir = await cachedPackage(name, locked.version, {
      ...options,
      ...(name === 'ts-node' ? { peers: { typescript: await tsNodeTypeScript(owner) } } : {}),
    });
    return {
      ...none,
      loader: { name, version: locked.version, source: 'lockfile' },
      engine: { ...engine, tsLoader: { name, ...at, from: path.dirname(path.dirname(dir)) } },
    };
  }
  throw new ConsortError(
    'config',
    `${ts[0]} is TypeScript, and node-pg-migrate ${engine.version} loads TypeScript only through a loader the project neither has installed nor pins in its lockfile (tsx or ts-node).`,
    {
      hint: 'Install the loader your deploy runs node-pg-migrate with (npm i -D tsx, or ts-node), or upgrade node-pg-migrate to 9, which loads TypeScript itself.',
    },
  );
}

/**
 * How the migrations' path aliases resolve, as the project's scripts resolve them (deploy-paths.ts):
 * node-pg-migrate 9's option, or the project's tsconfig-paths — its install, else the version its
 * lockfile pins, from the cache, as for the loader. Undefined: the deploy resolves none.
 */
async function pathAliases(
  engine: MigrationEngine,
  workspace: string,
  owner: MigrationsPackage,
  at: { workspace: string; root?: string },
  options: { migrationsDir?: string; env?: NodeJS.ProcessEnv; log?: (line: string) => void },
): Promise<{ loader: PathAliasLoader; engine: MigrationEngine } | undefined> {
  const deploy = await deployPathAliases(workspace, options.migrationsDir ?? 'migrations', engine.version);
  if (!deploy) return undefined;
  const tsconfig = deploy.tsconfig === undefined ? {} : { tsconfig: deploy.tsconfig };
  if (deploy.via === 'runner') {
    const jiti = await engineLoader(engine);
    return {
      loader: { name: 'jiti', version: jiti?.version ?? 'unknown', source: 'engine', how: deploy.how },
      engine: { ...engine, tsconfigPaths: { via: 'runner', ...tsconfig } },
    };
  }
  const req = await projectRequire(owner, TSCONFIG_PATHS);
  if (req) {
    let version = 'unknown';
    try {
      version = (await manifest(req.resolve(`${TSCONFIG_PATHS}/package.json`)))?.version ?? version;
    } catch {
      // its manifest is not exported: the registration still loads it
    }
    return {
      loader: { name: TSCONFIG_PATHS, version, source: 'project', how: deploy.how },
      engine: { ...engine, tsconfigPaths: { via: 'register', ...tsconfig, ...at } },
    };
  }
  const locked = await lockedVersionOf(owner, TSCONFIG_PATHS);
  if (locked) {
    const dir = await cachedPackage(TSCONFIG_PATHS, locked.version, options);
    return {
      loader: { name: TSCONFIG_PATHS, version: locked.version, source: 'lockfile', how: deploy.how },
      engine: {
        ...engine,
        tsconfigPaths: { via: 'register', ...tsconfig, ...at, from: path.dirname(path.dirname(dir)) },
      },
    };
  }
  throw new ConsortError(
    'config',
    `The project's deploy registers tsconfig-paths before node-pg-migrate (${deploy.how}), so its migrations may import by TypeScript path alias, but the project neither has tsconfig-paths installed nor pins it in its lockfile.`,
    { hint: 'Install it as the deploy has it (npm i -D tsconfig-paths), then run the check again.' },
  );
}

export function describePathAliases(p: PathAliasLoader): string {
  const which =
    p.source === 'engine'
      ? `its own ${p.name} ${p.version}`
      : p.source === 'lockfile'
        ? `${p.name} ${p.version} (the version the project's lockfile pins)`
        : `the project's ${p.name} ${p.version}`;
  return `path aliases through ${which} (${p.how})`;
}

export function describeLoader(l: TypeScriptLoader): string {
  if (l.source === 'engine') return `TypeScript through its own ${l.name} ${l.version}`;
  if (l.source === 'lockfile')
    return `TypeScript through ${l.name} ${l.version} (the version the project's lockfile pins)`;
  return `TypeScript through the project's ${l.name} ${l.version}`;
}
