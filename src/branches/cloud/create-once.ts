/**
 * Creating a branch exactly once over an unreliable network. A create is not idempotent: when the
 * service answers 500/502/504, times out, or drops the connection after the request was sent, the
 * branch may exist anyway — maybe still being made. Sending it again blindly would either fail on
 * the name or, on a service with looser names, make a second branch; giving up would leak the first.
 *
 * So after an ambiguous failure Consort looks the branch up by name and asks the service whether
 * *this* request made it (each service's `lookup` knows how: Neon keeps Consort's per-request
 * annotation, Lakebase the request's source branch and time). Ours: adopt it. Someone else's: the
 * name is taken. Not there: send again — the name is unique in the project, so if the first request
 * lands late the second one fails on the name, and the next lookup adopts the first.
 */
import { ConsortError, isConsortError } from '../../core/errors.js';
import { AmbiguousRequestError } from '../http/json-client.js';

export type Lookup<T> = { ours: true; value: () => Promise<T> } | { ours: false; why: string } | undefined;

export interface CreateOnceOptions<T> {
  /** The branch name, for messages. */
  name: string;
  /** Send the create and wait until it is done. */
  send: () => Promise<T>;
  /** Find the branch by name: undefined when absent, else whether this request made it (and how to wait for it). */
  lookup: () => Promise<Lookup<T>>;
  /** Sends in all (default 3). */
  attempts?: number;
  log?: (line: string) => void;
}

export async function createOnce<T>(options: CreateOnceOptions<T>): Promise<T> {
  const attempts = options.attempts ?? 3;
  let doubt: AmbiguousRequestError | undefined;
  for (let attempt = 0; attempt < attempts; attempt++) {
    try {
      return await options.send();
    } catch (e) {
      // A name conflict on a re-send may be our own earlier request landing late: look.
      const lateLanding = doubt !== undefined && isConsortError(e, 'branch-exists');
      if (!(e instanceof AmbiguousRequestError) && !lateLanding) throw e;
      if (e instanceof AmbiguousRequestError) doubt = e;
    }
    const found = await options.lookup();
    if (found?.ours) {
      options.log?.(
        `"${options.name}": the service made the branch although the request failed (${doubt!.why}); using it.`,
      );
      return found.value();
    }
    if (found) {
      throw new ConsortError(
        'branch-exists',
        `Branch "${options.name}" was created by another request while Consort's own was in doubt (${found.why}).`,
        {
          hint: 'Another run may be using this name: wait for it, or delete the branch, then retry.',
          cause: doubt,
        },
      );
    }
    options.log?.(
      `"${options.name}": the create request failed (${doubt!.why}) and no such branch exists; sending it again.`,
    );
  }
  throw doubt!;
}
