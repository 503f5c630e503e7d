/**
 * The helper process that starts Consort's own short commands (src/process/launcher.ts): each
 * request is run by the same runner the parent uses, and its result sent back. It leaves when the
 * parent's IPC channel closes.
 */
import { ConsortError } from '../core/errors.js';
import type { LauncherReply, LauncherRequest } from './launcher.js';
import { createProcessRunner } from './runner.js';

const runner = createProcessRunner({ launcher: false });

process.on('message', (message: LauncherRequest) => {
  void runner.run(message.request).then(
    (result) => reply({ id: message.id, result }),
    (e: unknown) =>
      reply({
        id: message.id,
        error:
          e instanceof ConsortError
            ? { code: e.code, message: e.message, ...(e.hint ? { hint: e.hint } : {}) }
            : { code: 'internal', message: e instanceof Error ? e.message : String(e) },
      }),
  );
});
process.on('disconnect', () => process.exit(0));

function reply(answer: LauncherReply): void {
  if (process.connected) process.send!(answer);
}

process.send!('ready');
