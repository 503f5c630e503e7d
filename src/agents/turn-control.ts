/**
 * How an SDK-driven turn ends on time: one AbortController fed by the turn's timeout and the
 * caller's signal, and a drain loop that stops waiting on a stream the SDK fails to end on abort.
 * Shared by the claude and codex backends, whose SDKs both stream a turn as an async iterable.
 */
import type { AgentTurnRequest } from '../ports/agent-backend.js';

export const STOP = Symbol('stop');

export interface TurnControl {
  controller: AbortController;
  /** Resolves to STOP once the turn must end. */
  stopped: Promise<typeof STOP>;
  /** Why it ended early, if it did. */
  reason(): 'timeout' | 'aborted' | null;
  dispose(): void;
}

export function turnControl(request: AgentTurnRequest): TurnControl {
  const controller = new AbortController();
  let reason: 'timeout' | 'aborted' | null = null;
  const stop = (why: 'timeout' | 'aborted'): void => {
    reason ??= why;
    controller.abort();
  };
  const stopped = new Promise<typeof STOP>((resolve) =>
    controller.signal.addEventListener('abort', () => resolve(STOP), { once: true }),
  );
  const timer = setTimeout(() => stop('timeout'), request.budget.timeoutMs);
  const onAbort = (): void => stop('aborted');
  if (request.signal?.aborted) stop('aborted');
  else request.signal?.addEventListener('abort', onAbort, { once: true });
  return {
    controller,
    stopped,
    reason: () => reason,
    dispose: () => {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
    },
  };
}

/** Collect a stream's items until it ends or the turn must stop, whichever comes first. */
export async function drain<T>(stream: AsyncIterable<T>, stopped: Promise<typeof STOP>, into: T[]): Promise<void> {
  const iterator = stream[Symbol.asyncIterator]();
  for (;;) {
    const pending = iterator.next();
    // The SDK should end its stream on abort; if it does not, the turn still ends when it must.
    pending.catch(() => undefined);
    const next = await Promise.race([pending, stopped]);
    if (next === STOP || next.done) return;
    into.push(next.value);
  }
}
