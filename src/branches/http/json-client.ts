/**
 * A small JSON-over-HTTPS client for cloud branch services (Node's global fetch). It retries what
 * is safe to retry (429, 423, 5xx and, for idempotent methods, network failures) with backoff
 * and jitter honouring `Retry-After`, refreshes credentials once on 401, validates every response
 * with zod, and never puts a token, password or request body into an error or a log line.
 */
import type { z } from 'zod';
import { ConsortError } from '../../core/errors.js';
import { redact } from '../../core/redact.js';
import { nextDelay, retryAfterMs, systemClock, DEFAULT_RETRY, type Clock, type RetryPolicy } from './retry.js';

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** A non-2xx answer, handed to the service's error mapper. */
export interface HttpFailure {
  service: string;
  method: Method;
  path: string;
  status: number;
  /** Parsed JSON when the body was JSON, else the (truncated, redacted) text. */
  body: unknown;
}

export interface JsonClientOptions {
  /** Shown in errors and logs ("Neon API", "Databricks"). */
  service: string;
  baseUrl: string;
  /** The Authorization header value, or undefined to send none. */
  authorization?: () => Promise<string | undefined>;
  /** Called on a 401 before the one retry with fresh credentials. */
  onUnauthorized?: () => void;
  /** Whether a failure is worth another attempt (default: 429 and 5xx). */
  retryable?: (failure: HttpFailure) => boolean;
  retry?: Partial<RetryPolicy>;
  clock?: Clock;
  random?: () => number;
  /** Secrets to scrub from anything this client reports. */
  secrets?: () => readonly string[];
  describeError: (failure: HttpFailure) => Error;
  log?: (line: string) => void;
}

export interface RequestOptions<T> {
  query?: Record<string, string | number | boolean | undefined>;
  json?: unknown;
  form?: Record<string, string>;
  headers?: Record<string, string>;
  schema: z.ZodType<T>;
}

const DEFAULT_RETRY_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);
const IDEMPOTENT = new Set<Method>(['GET', 'DELETE']);

export class JsonClient {
  private readonly policy: RetryPolicy;
  private readonly clock: Clock;

  constructor(private readonly options: JsonClientOptions) {
    this.policy = { ...DEFAULT_RETRY, ...options.retry };
    this.clock = options.clock ?? systemClock;
  }

  async request<T>(method: Method, path: string, req: RequestOptions<T>): Promise<T> {
    const url = this.url(path, req.query);
    const deadline = this.clock.now() + this.policy.timeoutMs;
    let refreshed = false;
    for (let attempt = 0; ; attempt++) {
      const init = await this.init(method, req); // credential failures are errors of their own, not network trouble
      let response: Response;
      try {
        response = await fetch(url, init);
      } catch (e) {
        const delay = IDEMPOTENT.has(method) ? nextDelay(attempt, this.policy, undefined, deadline - this.clock.now(), this.options.random) : undefined;
        if (delay === undefined) {
          throw new ConsortError('service-error', `${this.options.service}: ${method} ${path} failed: ${this.scrub(networkMessage(e))}.`, {
            hint: `Check the network and the service URL (${new URL(this.options.baseUrl).origin}), then retry.`,
          });
        }
        this.log(`${method} ${path}: ${networkMessage(e)}; retrying in ${delay} ms`);
        await this.clock.sleep(delay);
        continue;
      }
      if (response.ok) return this.parse(method, path, response, req.schema);
      const failure: HttpFailure = { service: this.options.service, method, path, status: response.status, body: await this.body(response) };
      if (response.status === 401 && !refreshed && this.options.onUnauthorized) {
        refreshed = true;
        this.options.onUnauthorized();
        this.log(`${method} ${path}: 401, retrying once with fresh credentials`);
        continue;
      }
      const retryable = this.options.retryable ? this.options.retryable(failure) : DEFAULT_RETRY_STATUSES.has(response.status);
      const wait = retryAfterMs(response.headers.get('retry-after'), this.clock.now());
      const delay = retryable ? nextDelay(attempt, this.policy, wait, deadline - this.clock.now(), this.options.random) : undefined;
      if (delay === undefined) throw this.options.describeError(failure);
      this.log(`${method} ${path}: ${response.status}, retrying in ${delay} ms (attempt ${attempt + 2} of ${this.policy.attempts})`);
      await this.clock.sleep(delay);
    }
  }

  private url(path: string, query: RequestOptions<unknown>['query']): string {
    const url = new URL(this.options.baseUrl.replace(/\/+$/, '') + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    return url.toString();
  }

  private async init(method: Method, req: RequestOptions<unknown>): Promise<RequestInit> {
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'consort', ...req.headers };
    const auth = await this.options.authorization?.();
    if (auth) headers.authorization = auth;
    let body: string | undefined;
    if (req.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(req.form).toString();
    } else if (req.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(req.json);
    }
    return { method, headers, ...(body !== undefined ? { body } : {}), signal: AbortSignal.timeout(this.policy.requestTimeoutMs) };
  }

  private async parse<T>(method: Method, path: string, response: Response, schema: z.ZodType<T>): Promise<T> {
    const text = await response.text();
    let value: unknown = null;
    if (text.trim() !== '') {
      try {
        value = JSON.parse(text);
      } catch {
        throw this.unexpected(method, path, 'the body is not JSON');
      }
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw this.unexpected(method, path, issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid shape');
    }
    return parsed.data;
  }

  private unexpected(method: Method, path: string, detail: string): ConsortError {
    return new ConsortError('service-error', `${this.options.service} answered ${method} ${path} with an unexpected response (${detail}).`, {
      hint: 'The service API may have changed: report it with this message. Nothing was assumed.',
    });
  }

  private async body(response: Response): Promise<unknown> {
    const text = this.scrub((await response.text().catch(() => '')).slice(0, 2000));
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }

  private scrub(text: string): string {
    return redact(text, this.options.secrets?.() ?? []);
  }

  private log(line: string): void {
    this.options.log?.(`${this.options.service}: ${this.scrub(line)}`);
  }
}

function networkMessage(e: unknown): string {
  if (e instanceof Error) {
    const cause = e.cause instanceof Error ? `: ${e.cause.message}` : '';
    return e.name === 'TimeoutError' ? 'the request timed out' : `${e.message}${cause}`;
  }
  return String(e);
}
