/**
 * The child process of isolated.ts: answers ChildRequests — applies the migrations
 * with the engine named (the project's copy is imported only here, once) and answers with the result
 * or the error — and exits when its parent lets go of it, even if a migration left a timer or a
 * connection open.
 */
import { readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { isConsortError } from '../core/errors.js';
import type { MigrationEngine } from './engine.js';
import { compareMigrationFileNames, MigrationSetCache } from './files.js';
import { expandDotenv } from './dotenv-expand.js';
import { bundledRunner, loadProjectRunner } from './engine-load.js';
import type { ApplyRequest, ChildMessage, ChildReply, ChildRequest } from './isolated.js';
import { applyMigrationsHere, KeptClients } from './runner.js';
import { packageType, prepareProjectLoader, prepareProjectPaths, treeTsconfig } from './ts-register.js';
import { treeSettings, type TreeSettings } from './tree-settings.js';

// Requests run side by side as they come: the parent sends one database's requests one at a time,
// and a release of every kept connection only when nothing else runs (MigrationChild).
process.on('message', (message) => {
  const { id, ...request } = message as ChildMessage;
  const running = (name: string): void => void process.send!({ running: name, id } satisfies ChildReply);
  void answer(request, running).then((reply) => process.send!({ ...reply, id }));
});
process.once('disconnect', () => process.exit(0));

interface Loaded {
  engine: MigrationEngine;
  /** Registers the project's TypeScript loader for a tree (returning its undo); undefined: none to register. */
  register?: (at: TreeSettings) => Promise<() => void>;
}

/** Engines loaded (and TypeScript loaders prepared) so far, by what the request named. */
const engines = new Map<string, Promise<Loaded>>();

/**
 * The runner the request names, with the project's TypeScript loader loaded for it (registered
 * once the tree is known: enter). Nothing else is loaded: no manifest or lockfile is read here
 * (the parent resolved the engine).
 */
function load(wanted: ApplyRequest['engine']): Promise<Loaded> {
  const key = JSON.stringify(wanted);
  let loaded = engines.get(key);
  if (!loaded) {
    loaded = (async () => {
      const named = wanted ?? { version: '', source: 'bundled' as const, dir: '' };
      const runner =
        named.source !== 'bundled' && named.entry ? await loadProjectRunner(named.entry) : await bundledRunner();
      // The loader first, tsconfig-paths over it (`ts-node -r tsconfig-paths/register`); undone the other way round.
      const prepared = [await prepareProjectLoader(named), await prepareProjectPaths(named)].filter(
        (p) => p !== undefined,
      );
      const register =
        prepared.length === 0
          ? undefined
          : async (at: TreeSettings) => {
              const undos: (() => void)[] = [];
              for (const p of prepared) undos.unshift(await p(at));
              return () => undos.forEach((undo) => undo());
            };
      return { engine: { ...named, runner }, ...(register ? { register } : {}) };
    })();
    engines.set(key, loaded);
    loaded.catch(() => engines.delete(key)); // a failed load is retried (and reported) by the next request
  }
  return loaded;
}

/**
 * The tree this process applies migrations from: it works in its migrations' package there and
 * the loaders read its tsconfig (tree-settings.ts), as a deploy from a checkout of that tree does.
 * Another tree's request (a session kept across trees) waits until none of this one's runs, then
 * moves the process there: the loaders registered for this tree are undone and registered anew.
 */
interface Entered {
  tree: string;
  at: Promise<TreeSettings>;
  /** Loaders registered for it, by engine (each registration's undo). */
  registered: Map<Loaded, Promise<() => void>>;
  /** Its requests still running. */
  running: number;
}
let entered: Entered | undefined;
const moved: (() => void)[] = [];

/** Run `work` for a request from `tree` (the migrations in `dir`), with the process there. */
async function inTree<T>(
  loaded: Loaded,
  tree: string,
  dir: string,
  work: (at: TreeSettings) => Promise<T>,
): Promise<T> {
  const top = path.resolve(tree);
  while (entered !== undefined && entered.tree !== top && entered.running > 0)
    await new Promise<void>((resolve) => moved.push(resolve));
  // Entered at once (no await between the check above and `running++` below): a request for a
  // third tree that woke with this one waits for it, rather than moving the process under it.
  if (entered === undefined || entered.tree !== top) {
    const left = entered;
    const at = (async () => {
      for (const undo of left?.registered.values() ?? []) (await undo.catch(() => () => undefined))();
      const s = await treeSettings(top, dir);
      process.chdir(s.cwd);
      return s;
    })();
    entered = { tree: top, at, registered: new Map(), running: 0 };
  }
  const here = entered;
  here.running++;
  try {
    const at = await here.at;
    if (loaded.register) {
      let done = here.registered.get(loaded);
      if (!done) here.registered.set(loaded, (done = loaded.register(at)));
      await done;
    }
    return await work(at);
  } finally {
    here.running--;
    if (here.running === 0) for (const resolve of moved.splice(0)) resolve();
  }
}

/** Connections requests asked to keep, by URL, until released (or the child exits). */
const kept = new KeptClients();

/** Each directory's migrations, read once for the child's requests (a check's steps on many branches). */
const sets = new MigrationSetCache();

async function answer(request: ChildRequest, running: (name: string) => void): Promise<ChildReply> {
  try {
    if ('release' in request) {
      await kept.release(request.release ?? undefined);
      return { ok: true, result: null };
    }
    // As node-pg-migrate's CLI loads the project's .env (dotenv): what the environment lacks, before a
    // migration loads; then dotenv-expand's pass over the file's keys, against this environment.
    for (const [key, value] of Object.entries(request.dotenv ?? {})) process.env[key] ??= value;
    if (request.expandDotenv && request.dotenv)
      Object.assign(process.env, expandDotenv(request.dotenv, process.env, request.expandDotenv));
    const loaded = await load(request.engine);
    const { engine } = loaded;
    if (request.options === null) {
      const dir = request.preload;
      if (dir !== undefined) await inTree(loaded, request.tree ?? dir, dir, () => preload(engine, dir));
      return { ok: true, result: null };
    }
    const options = request.options;
    const result = await inTree(loaded, options.relativeTo ?? options.dir, options.dir, async (at) =>
      applyMigrationsHere(
        { ...options, engine: inTreeEngine(engine, at) },
        await sets.read(options.dir, { relativeTo: options.relativeTo, ignorePattern: options.ignorePattern }),
        request.keep ? kept : undefined,
        running,
      ),
    );
    return { ok: true, result };
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return isConsortError(e)
      ? { ok: false, error: { code: e.code, message, ...(e.hint ? { hint: e.hint } : {}) } }
      : { ok: false, error: { code: null, message } };
  }
}

/**
 * The engine for tree `at`: node-pg-migrate 9's `tsconfigPaths` option (engine.tsconfigPaths,
 * `runner`) as the tree's tsconfig file (runner.ts passes it), never left to jiti's search from the
 * working directory, which goes on above the tree; none without one.
 */
function inTreeEngine(engine: MigrationEngine, at: TreeSettings): MigrationEngine {
  const wanted = engine.tsconfigPaths;
  if (wanted?.via !== 'runner') return engine;
  const file = treeTsconfig(at, wanted.tsconfig);
  const { tsconfigPaths: _drop, ...rest } = engine;
  return file === undefined ? rest : { ...rest, tsconfigPaths: { via: 'runner', tsconfig: file } };
}

/**
 * Load `dir`'s migrations as a CommonJS node-pg-migrate (6–7) does on its first run, only sooner:
 * every file (or link) whose name does not start with a dot (its default ignorePattern), SQL aside,
 * in the order it loads them (their top-level code runs in it: 6 sorts the names, 7 by timestamp
 * prefix, `9_a` before `10_b`), by `require` (the same module cache its own `require` reads). Its
 * first request then finds them compiled instead of waiting for the TypeScript loader. An ESM
 * engine (8: `import()`, 9: jiti) keeps caches of its own: nothing is loaded for it. A file that
 * fails to load is left to the request that loads it for real, which reports the error.
 */
async function preload(engine: MigrationEngine, dir: string): Promise<void> {
  if (engine.source === 'bundled' || (await packageType(engine.dir)) === 'module') return;
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const load = createRequire(path.resolve('_'));
  const names = entries
    .filter((e) => (e.isFile() || e.isSymbolicLink()) && !e.name.startsWith('.') && path.extname(e.name) !== '.sql')
    .map((e) => e.name)
    .sort(Number(engine.version.split('.')[0]) >= 7 ? compareMigrationFileNames : undefined);
  for (const name of names) {
    try {
      load(path.join(dir, name));
    } catch {
      // reported by the request that loads it
    }
  }
}
