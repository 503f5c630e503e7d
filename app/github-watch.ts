/**
 * The App never goes silent about GitHub. Every request to GitHub goes through `observingFetch`
 * (Probot hands it to Octokit, token exchanges included), which
 *
 * - logs each attempt that fails — no answer, or a 5xx — at warn, with the delivery id, the run
 *   and the route of the call it belongs to (carried by AsyncLocalStorage from the adapter that
 *   made the call), while Octokit's retry plugin tries again with bounded backoff;
 * - keeps `GitHubHealth` up to date: unreachable from the first failed attempt, reachable again
 *   from the first answer below 500. `/health` reports it, and probes GitHub itself while it is
 *   unreachable, so the status recovers even when no job is calling.
 *
 * The adapter (github.ts) logs the call that finally failed, at error, with the same fields.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { AppLog } from './jobs/deps.js';

/** What a GitHub call is for: the webhook delivery and run that caused it. */
export interface CallContext {
  deliveryId: string | null;
  runId?: number;
}

interface CallScope extends CallContext {
  route: string;
  attempts: number;
}

const scope = new AsyncLocalStorage<CallScope>();

/** Run `fn` (one GitHub call, with its retries) with `context` and `route` visible to every attempt. */
export function withCall<T>(context: CallContext | undefined, route: string, fn: () => Promise<T>): Promise<T> {
  return scope.run(
    {
      deliveryId: context?.deliveryId ?? null,
      ...(context?.runId !== undefined ? { runId: context.runId } : {}),
      route,
      attempts: 0,
    },
    fn,
  );
}

/** The fields every GitHub log line carries: delivery, run, route, attempts so far. */
export function callFields(): Record<string, unknown> {
  const s = scope.getStore();
  return s
    ? {
        delivery: s.deliveryId,
        ...(s.runId !== undefined ? { runId: s.runId } : {}),
        route: s.route,
        attempts: s.attempts,
      }
    : {};
}

export interface GitHubStatus {
  reachable: boolean;
  /** When the current state began (null: nothing was tried yet). */
  since: string | null;
  lastError: string | null;
}

export class GitHubHealth {
  private state: { reachable: boolean; since: Date | null; lastError: string | null } = {
    reachable: true,
    since: null,
    lastError: null,
  };
  private lastProbe = 0;

  constructor(
    private readonly probeUrl: string,
    private readonly fetcher: () => typeof fetch,
    private readonly probeEveryMs = 5_000,
  ) {}

  succeeded(): void {
    if (!this.state.reachable || this.state.since === null)
      this.state = { reachable: true, since: new Date(), lastError: null };
  }

  failed(error: string): void {
    this.state = { reachable: false, since: this.state.reachable ? new Date() : this.state.since, lastError: error };
  }

  status(): GitHubStatus {
    return {
      reachable: this.state.reachable,
      since: this.state.since?.toISOString() ?? null,
      lastError: this.state.lastError,
    };
  }

  /** The status; while unreachable, first one unauthenticated request (at most every few seconds) to see whether GitHub is back. */
  async check(): Promise<GitHubStatus> {
    if (!this.state.reachable && Date.now() - this.lastProbe >= this.probeEveryMs) await this.probe();
    return this.status();
  }

  /** GET <api>/meta, unauthenticated (GitHub.com and GHES both serve it): any answer below 500 means reachable. */
  async probe(): Promise<GitHubStatus> {
    this.lastProbe = Date.now();
    await this.fetcher()(this.probeUrl, {
      signal: AbortSignal.timeout(5_000),
      headers: { accept: 'application/vnd.github+json' },
    })
      .then((res) => res.body?.cancel())
      .catch(() => undefined); // recorded by the observing fetch
    return this.status();
  }
}

const describe = (e: unknown): string => {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  return [e instanceof Error ? e.message : String(e), cause?.code ?? cause?.message].filter(Boolean).join(': ');
};

/** `base` with every attempt's outcome told to `health`, and every failed attempt logged at warn. */
export function observingFetch(health: GitHubHealth, log: AppLog, base: typeof fetch = globalThis.fetch): typeof fetch {
  return async (input, init) => {
    const s = scope.getStore();
    if (s) s.attempts++;
    const method = init?.method ?? 'GET';
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const where = { method, path: new URL(url).pathname };
    try {
      const res = await base(input, init);
      if (res.status >= 500) {
        health.failed(`HTTP ${res.status} from ${method} ${where.path}`);
        log.warn(`GitHub answered ${res.status}`, { ...callFields(), ...where, status: res.status });
      } else health.succeeded();
      return res;
    } catch (e) {
      health.failed(describe(e));
      log.warn('GitHub could not be reached', { ...callFields(), ...where, error: describe(e) });
      throw e;
    }
  };
}
