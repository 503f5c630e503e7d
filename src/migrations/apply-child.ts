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
import { packageType, registerProjectLoader } from './ts-register.js';

// Requests run side by side as they come: the parent sends one database's requests one at a time,
// and a release of every kept connection only when nothing else runs (MigrationChild).
process.on('message', (message) => {
  const { id, ...request } = message as ChildMessage;
  const running = (name: string): void => void process.send!({ running: name, id } satisfies ChildReply);
  void answer(request, running).then((reply) => process.send!({ ...reply, id }));
});
process.once('disconnect', () => process.exit(0));

/** Engines loaded (and TypeScript loaders registered) so far, by what the request named. */
const engines = new Map<string, Promise<MigrationEngine>>();

/**
 * The runner the request names, with the project's TypeScript loader registered for it. Nothing
 * else is loaded: no manifest or lockfile is read here (the parent resolved the engine).
 */
function load(wanted: ApplyRequest['engine']): Promise<MigrationEngine> {
  const key = JSON.stringify(wanted);
  let engine = engines.get(key);
  if (!engine) {
    engine = (async () => {
      const named = wanted ?? { version: '', source: 'bundled' as const, dir: '' };
      const runner =
        named.source !== 'bundled' && named.entry ? await loadProjectRunner(named.entry) : await bundledRunner();
      await registerProjectLoader(named);
      return { ...named, runner };
    })();
    engines.set(key, engine);
    engine.catch(() => engines.delete(key)); // a failed load is retried (and reported) by the next request
  }
  return engine;
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
    const engine = await load(request.engine);
    if (request.options === null) {
      if (request.preload !== undefined) await preload(engine, request.preload);
      return { ok: true, result: null };
    }
    const result = await applyMigrationsHere(
      { ...request.options, engine },
      await sets.read(request.options.dir, {
        relativeTo: request.options.relativeTo,
        ignorePattern: request.options.ignorePattern,
      }),
      request.keep ? kept : undefined,
      running,
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
