/**
 * The child process of isolated.ts: answers ChildRequests one at a time — applies the migrations
 * with the engine named (the project's copy is imported only here, once) and answers with the result
 * or the error — and exits when its parent lets go of it, even if a migration left a timer or a
 * connection open.
 */
import { isConsortError } from '../core/errors.js';
import { bundledEngine, loadProjectRunner, type MigrationEngine } from './engine.js';
import { registerProjectLoader } from './ts-loader.js';
import type { ApplyRequest, ChildReply, ChildRequest } from './isolated.js';
import { applyMigrationsHere, KeptClients } from './runner.js';

let turn: Promise<unknown> = Promise.resolve();
process.on('message', (message) => {
  turn = turn.then(() => answer(message as ChildRequest).then((reply) => process.send!(reply)));
});
process.once('disconnect', () => process.exit(0));

/** Engines loaded (and TypeScript loaders registered) so far, by what the request named. */
const engines = new Map<string, Promise<MigrationEngine>>();

function load(wanted: ApplyRequest['engine']): Promise<MigrationEngine> {
  const key = JSON.stringify(wanted);
  let engine = engines.get(key);
  if (!engine) {
    engine = (async () => {
      const base =
        wanted?.source !== 'bundled' && wanted?.entry
          ? { ...wanted, runner: await loadProjectRunner(wanted.entry) }
          : await bundledEngine();
      const loaded = wanted?.tsLoader ? { ...base, tsLoader: wanted.tsLoader } : base;
      await registerProjectLoader(loaded);
      return loaded;
    })();
    engines.set(key, engine);
    engine.catch(() => engines.delete(key)); // a failed load is retried (and reported) by the next request
  }
  return engine;
}

/** Connections requests asked to keep, by URL, until released (or the child exits). */
const kept = new KeptClients();

async function answer(request: ChildRequest): Promise<ChildReply> {
  try {
    if ('release' in request) {
      await kept.release(request.release ?? undefined);
      return { ok: true, result: null };
    }
    const engine = await load(request.engine);
    if (request.options === null) return { ok: true, result: null };
    const result = await applyMigrationsHere(
      { ...request.options, engine },
      undefined,
      request.keep ? kept : undefined,
    );
    return { ok: true, result };
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return isConsortError(e)
      ? { ok: false, error: { code: e.code, message, ...(e.hint ? { hint: e.hint } : {}) } }
      : { ok: false, error: { code: null, message } };
  }
}
