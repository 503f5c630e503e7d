/**
 * The child process of isolated.ts: receives one ChildRequest, applies the migrations with the
 * engine named (the project's copy is imported only here), answers with the result or the error,
 * and exits even if a migration left a timer or a connection open.
 */
import { isConsortError } from '../core/errors.js';
import { bundledEngine, loadProjectRunner } from './engine.js';
import { registerProjectLoader } from './ts-loader.js';
import type { ChildReply, ChildRequest } from './isolated.js';
import { applyMigrationsHere } from './runner.js';

process.once('message', (message) => {
  void answer(message as ChildRequest).then((reply) => process.send!(reply, () => process.exit(0)));
});

async function answer(request: ChildRequest): Promise<ChildReply> {
  try {
    const wanted = request.engine;
    const base =
      wanted?.source !== 'bundled' && wanted?.entry
        ? { ...wanted, runner: await loadProjectRunner(wanted.entry) }
        : await bundledEngine();
    const engine = wanted?.tsLoader ? { ...base, tsLoader: wanted.tsLoader } : base;
    await registerProjectLoader(engine);
    return { ok: true, result: await applyMigrationsHere({ ...request.options, engine }) };
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return isConsortError(e)
      ? { ok: false, error: { code: e.code, message, ...(e.hint ? { hint: e.hint } : {}) } }
      : { ok: false, error: { code: null, message } };
  }
}
