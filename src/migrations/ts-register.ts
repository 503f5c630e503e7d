/**
 * In the migrations' own process (apply-child.ts): register the project's TypeScript loader, as
 * ts-loader.ts chose it, for the engine's files, with the tsconfig of the tree they come from. Apart from ts-loader.ts (which reads manifests with
 * zod and lockfiles through engine-pin.ts) so the child loads nothing of that before its first request.
 */
import { mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import Module, { createRequire, isBuiltin, register as registerHooks } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConsortError } from '../core/errors.js';
import { resolvedInside } from '../core/read-regular.js';
import type { MigrationEngine } from './engine.js';
import { pathCandidates } from './path-alias.js';
import { projectRequire, SCRATCH_IN_MODULES } from './project-packages.js';
import type { TreeSettings } from './tree-settings.js';

/** ts-node's default (`(?:^|/)node_modules/`), but not the check's scratch copies of the migrations. */
const TS_NODE_IGNORE = `(?:^|/)node_modules/(?!${SCRATCH_IN_MODULES.map((p) => p.replace(/[.]/g, '\\.')).join('/')}/)`;

/**
 * A loader whose modules are loaded, registered once the tree its migrations come from is known;
 * the registration returns its undo (for a process that goes on to another tree's migrations).
 */
type Prepared = (at: TreeSettings) => Promise<() => void>;

type Preparer = (require: NodeJS.Require, esmEngine: boolean) => Promise<Prepared>;

/** Where tsx reads no tsconfig at all (a tree without one): an empty one, written once, beside nothing of the project's. */
let emptyTsconfig: string | undefined;
function noTsconfig(): string {
  if (emptyTsconfig === undefined) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'consort-tsconfig-'));
    emptyTsconfig = path.join(dir, 'tsconfig.json');
    writeFileSync(emptyTsconfig, '{}\n');
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return emptyTsconfig;
}

const PREPARERS: Record<'tsx' | 'ts-node', Preparer> = {
  // The CommonJS hook for a `require()`ing runner (7.x), the ESM one for an `import()`ing one (8.x).
  // tsx reads its tsconfig (compiler options, `paths`) when it registers: the tree's, named
  // (TSX_TSCONFIG_PATH), not the one it would find from this process's working directory.
  async tsx(req, esmEngine) {
    const api = esmEngine
      ? ((await import(pathToFileURL(req.resolve('tsx/esm/api')).href)) as {
          register: () => () => Promise<void> | void;
        })
      : (req('tsx/cjs/api') as { register: () => () => void });
    if (!esmEngine) startTsxCompiler(req);
    return async (at) => {
      process.env.TSX_TSCONFIG_PATH = at.tsconfig ?? noTsconfig();
      const undo = api.register();
      const undoAliases = esmEngine ? () => undefined : aliasesUnderModules(at);
      return () => {
        undoAliases();
        void undo();
      };
    };
  },
  // As node-pg-migrate 7's `--tsconfig` does: ts-node's CommonJS hook with the tree's tsconfig.
  // ts-node skips every file under a node_modules, and the check's copies of the migrations live in
  // one (SCRATCH_IN_MODULES): its default, except for those.
  async 'ts-node'(req, esmEngine) {
    const tsNode = req('ts-node') as { register: (o: object) => { enabled: (on: boolean) => boolean } };
    return async (at) => {
      const service = tsNode.register({
        transpileOnly: true,
        ignore: [TS_NODE_IGNORE],
        ...(at.tsconfig === undefined ? { skipProject: true } : { project: at.tsconfig }),
      });
      // An import()ing runner needs ts-node's ESM hooks, which Node cannot remove again.
      if (esmEngine) registerHooks('ts-node/esm', pathToFileURL(path.join(at.cwd, '/')));
      return () => void service.enabled(false);
    };
  },
};

/**
 * tsx resolves `paths` aliases only for a file outside every node_modules (a dependency's imports
 * are its own business), and the check applies a commit's tree from a copy in the project's
 * `node_modules/.cache/consort` (SCRATCH_IN_MODULES, so its packages resolve as in the project): in
 * that copy the aliases a deploy from a checkout resolves would not. For such a tree, its files
 * outside the tree's own node_modules get them as tsx gives them to a checkout: the tree's
 * tsconfig's candidates (pathCandidates), each handed on to tsx's resolution (which finds `.ts` for
 * them), then the specifier itself. CommonJS engines (7.x, which `require()` their migrations) only.
 * Returns the undo.
 */
function aliasesUnderModules(at: TreeSettings): () => void {
  // As Node names the files it loads: by their real path.
  const tree = realpathSync(path.resolve(at.tree));
  if (at.tsconfig === undefined || !tree.split(path.sep).includes('node_modules')) return () => undefined;
  const candidates = pathCandidates(tree, at.tsconfig);
  if (candidates === undefined) return () => undefined;
  type Resolve = (request: string, parent: { filename?: string | null } | undefined, ...rest: unknown[]) => string;
  const loader = Module as unknown as { _resolveFilename: Resolve };
  const next = loader._resolveFilename;
  const ours: Resolve = function (this: unknown, request, parent, ...rest) {
    const from = parent?.filename;
    const rel = typeof from === 'string' ? path.relative(tree, from) : '..';
    const inTree = rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
    if (inTree && !rel.split(path.sep).includes('node_modules') && !isBuiltin(request))
      for (const candidate of candidates(request)) {
        try {
          return next.call(this, candidate, parent, ...rest);
        } catch {
          // the next candidate, then the specifier as it is
        }
      }
    return next.call(this, request, parent, ...rest);
  };
  loader._resolveFilename = ours;
  return () => {
    if (loader._resolveFilename === ours) loader._resolveFilename = next;
  };
}

/**
 * In the migrations' own process (apply-child.ts): load the project's loader for the engine's
 * files, as ts-loader.ts chose it. Registered by the function returned, once the tree the
 * migrations come from is known (tree-settings.ts); undefined: no loader to register.
 */
export async function prepareProjectLoader(
  engine: Pick<MigrationEngine, 'dir' | 'tsLoader'>,
): Promise<Prepared | undefined> {
  const wanted = engine.tsLoader;
  if (!wanted) return undefined;
  const req = await packageRequire(wanted.name, wanted);
  return PREPARERS[wanted.name](req, (await packageType(engine.dir)) === 'module');
}

/**
 * A require that loads the project's package `name` where the parent found it: the cache of a
 * lockfile-pinned version (`from`), else the package that owns the migrations and the root above it.
 */
async function packageRequire(
  name: string,
  at: { workspace: string; root?: string; from?: string },
): Promise<NodeJS.Require> {
  const req =
    at.from !== undefined
      ? createRequire(path.join(at.from, 'package.json'))
      : await projectRequire({ dir: at.workspace, root: at.root ?? at.workspace }, name);
  if (!req)
    throw new ConsortError('config', `The project's ${name} cannot be loaded from ${at.workspace}.`, {
      hint: `Install it (npm i -D ${name}).`,
    });
  return req;
}

/**
 * In the migrations' own process: load the project's tsconfig-paths, when its deploy registers it
 * (engine.tsconfigPaths, `register`: ts-loader.ts resolved it like the loader). Registered by the
 * function returned, once the tree is known, with that tree's tsconfig (`register({ cwd: file })`
 * reads that file and those it extends), after the TypeScript loader, as `ts-node -r
 * tsconfig-paths/register` registers it; its undo restores Node's resolution for another tree.
 */
export async function prepareProjectPaths(
  engine: Pick<MigrationEngine, 'tsconfigPaths'>,
): Promise<Prepared | undefined> {
  const wanted = engine.tsconfigPaths;
  if (wanted?.via !== 'register' || wanted.workspace === undefined) return undefined;
  const name = 'tsconfig-paths';
  const req = await packageRequire(name, { ...wanted, workspace: wanted.workspace });
  const api = req(name) as { register: (options: { cwd: string }) => () => void };
  return async (at) => {
    const file = treeTsconfig(at, wanted.tsconfig);
    if (file === undefined) return () => undefined; // as tsconfig-paths skips itself without one
    // It reads TS_NODE_PROJECT over the file it is given: the tree's file is the one to read.
    const project = process.env.TS_NODE_PROJECT;
    delete process.env.TS_NODE_PROJECT;
    try {
      return api.register({ cwd: file });
    } finally {
      if (project !== undefined) process.env.TS_NODE_PROJECT = project;
    }
  };
}

/**
 * The tsconfig path aliases are read from in tree `at`: the one the scripts name (relative to the
 * tree's root; a folder: its tsconfig.json), when it leads to a file inside the tree; else the
 * tree's own (tree-settings.ts). Never one outside the tree.
 */
export function treeTsconfig(at: TreeSettings, named: string | undefined): string | undefined {
  if (named === undefined) return at.tsconfig;
  const real = resolvedInside(at.tree, path.join(at.tree, named));
  if (real === null) return undefined;
  const isDir = statSync(real, { throwIfNoEntry: false })?.isDirectory() ?? false;
  return isDir ? (resolvedInside(at.tree, path.join(real, 'tsconfig.json')) ?? undefined) : real;
}

/** The `type` of the package at `dir` (its package.json's), or undefined when it has none or cannot be read. */
export async function packageType(dir: string): Promise<string | undefined> {
  const text = await readFile(path.join(dir, 'package.json'), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    const type = typeof parsed === 'object' && parsed !== null ? (parsed as { type?: unknown }).type : undefined;
    return typeof type === 'string' ? type : undefined;
  } catch {
    return undefined;
  }
}

/**
 * tsx's CommonJS hook compiles each migration with esbuild's synchronous API, whose first call
 * starts esbuild's worker thread and binary (a quarter of a second on a busy runner). Started here,
 * while the parent is still making branches, instead of inside the first migration's require().
 * Best effort: if it cannot start, the migration's own load reports why.
 */
function startTsxCompiler(req: NodeJS.Require): void {
  try {
    const fromTsx = createRequire(req.resolve('tsx/package.json'));
    (fromTsx('esbuild') as { transformSync: (code: string, options: object) => unknown }).transformSync('export {};', {
      loader: 'ts',
      format: 'cjs',
    });
  } catch {
    // the first migration's load starts it (and reports a failure)
  }
}
