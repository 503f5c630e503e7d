/**
 * A small JSON-over-HTTPS client for cloud branch services (Node's global fetch). It retries what
 * is safe to retry, with backoff and jitter honouring `Retry-After`, refreshes credentials once on
 * 401, validates every response with zod, and never puts a token, password or request body into an
 * error or a log line.
 *
 * What is safe depends on the method. GET and DELETE (and requests marked `idempotent`) are
 * retried on 429/5xx and on any network failure. A POST that creates something is retried only
 * when the server certainly did not act on it: 423, 429 and 503, or a connection that failed before
 * the request was sent. Any other failure after sending (500, 502, 504, a timeout, a connection
 * dropped mid-answer) may have created the resource: the client throws `AmbiguousRequestError`
 * and the caller looks the resource up instead of creating it twice.
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
  /** Whether a failure is worth another attempt (default: 423, 429 and 5xx); a POST is repeated only on 423, 429 and 503. */
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
  /** A POST that changes nothing when repeated (a token or credential request): retry it like a GET. */
  idempotent?: boolean;
}

const DEFAULT_RETRY_STATUSES: ReadonlySet<number> = new Set([423, 429, 500, 502, 503, 504]);
const IDEMPOTENT = new Set<Method>(['GET', 'DELETE']);
/** Answers that say the server did not act on the request (locked, rate-limited, unavailable). */
const NOT_ACTED_ON: ReadonlySet<number> = new Set([423, 429, 503]);
/** Network failures that happen before a request leaves this machine. */
const BEFORE_SENDING = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * A non-idempotent request whose outcome is unknown: the server may have acted on it. The caller
 * must find out (look the resource up by name) rather than send it again.
 */
export class AmbiguousRequestError extends ConsortError {
  constructor(
    readonly service: string,
    readonly method: Method,
    readonly path: string,
    readonly why: string,
    cause?: unknown,
  ) {
    const said = cause instanceof ConsortError && cause.message ? ` ${cause.message}` : ''; // what the service said, already scrubbed
    super('service-error', `${service}: ${method} ${path} may or may not have taken effect (${why}).${said}`, {
      hint: 'Consort looks the result up before trying again; if this persists, check the service console for a half-made branch, and `consort branch gc`.',
      ...(cause !== undefined ? { cause } : {}),
    });
    this.name = 'AmbiguousRequestError';
  }
}

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
    const safe = IDEMPOTENT.has(method) || req.idempotent === true;
    let refreshed = false;
    for (let attempt = 0; ; attempt++) {
      const init = await this.init(method, req); // credential failures are errors of their own, not network trouble
      let response: Response;
      try {
        response = await fetch(url, init);
      } catch (e) {
        const unsent = notSent(e);
        if (!safe && !unsent)
          throw new AmbiguousRequestError(this.options.service, method, path, this.scrub(networkMessage(e)), e);
        const delay = nextDelay(attempt, this.policy, undefined, deadline - this.clock.now(), this.options.random);
        if (delay === undefined) {
          throw new ConsortError(
            'service-error',
            `${this.options.service}: ${method} ${path} failed: ${this.scrub(networkMessage(e))}.`,
            {
              hint: `Check the network and the service URL (${new URL(this.options.baseUrl).origin}), then retry.`,
            },
          );
        }
        this.log(`${method} ${path}: ${networkMessage(e)}; retrying in ${delay} ms`);
        await this.clock.sleep(delay);
        continue;
      }
      if (response.ok) return this.parse(method, path, response, req.schema);
      const failure: HttpFailure = {
        service: this.options.service,
        method,
        path,
        status: response.status,
        body: await this.body(response),
      };
      if (response.status === 401 && !refreshed && this.options.onUnauthorized) {
        refreshed = true;
        this.options.onUnauthorized();
        this.log(`${method} ${path}: 401, retrying once with fresh credentials`);
        continue;
      }
      const transient = this.options.retryable
        ? this.options.retryable(failure)
        : DEFAULT_RETRY_STATUSES.has(response.status);
      if (!safe && response.status >= 500 && !NOT_ACTED_ON.has(response.status)) {
        throw new AmbiguousRequestError(
          this.options.service,
          method,
          path,
          `HTTP ${response.status}`,
          this.options.describeError(failure),
        );
      }
      const retryable = transient && (safe || NOT_ACTED_ON.has(response.status));
      const wait = retryAfterMs(response.headers.get('retry-after'), this.clock.now());
      const delay = retryable
        ? nextDelay(attempt, this.policy, wait, deadline - this.clock.now(), this.options.random)
        : undefined;
      if (delay === undefined) throw this.options.describeError(failure);
      this.log(
        `${method} ${path}: ${response.status}, retrying in ${delay} ms (attempt ${attempt + 2} of ${this.policy.attempts})`,
      );
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
    return {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
      signal: AbortSignal.timeout(this.policy.requestTimeoutMs),
    };
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
      throw this.unexpected(
        method,
        path,
        issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid shape',
      );
    }
    return parsed.data;
  }

  private unexpected(method: Method, path: string, detail: string): ConsortError {
    return new ConsortError(
      'service-error',
      `${this.options.service} answered ${method} ${path} with an unexpected response (${detail}).`,
      {
        hint: 'The service API may have changed: report it with this message. Nothing was assumed.',
      },
    );
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

/** The `cause` of a fetch failure, read by shape (undici's errors may come from another realm than `Error`). */
function causeOf(
  e: unknown,
): { code?: unknown; message?: unknown; name?: unknown; errors?: { code?: unknown }[] } | undefined {
  const cause = typeof e === 'object' && e !== null ? (e as { cause?: unknown }).cause : undefined;
  return typeof cause === 'object' && cause !== null ? cause : undefined;
}

/** Whether a fetch failure happened before the request could reach the server (nothing was sent). */
function notSent(e: unknown): boolean {
  const cause = causeOf(e);
  const codes = [cause?.code, ...(Array.isArray(cause?.errors) ? cause.errors.map((x) => x?.code) : [])].filter(
    (c) => c !== undefined,
  );
  return codes.length > 0 && codes.every((c) => BEFORE_SENDING.has(String(c)));
}

function networkMessage(e: unknown): string {
  const { name, message } = typeof e === 'object' && e !== null ? (e as { name?: unknown; message?: unknown }) : {};
  if (name === 'TimeoutError') return 'the request timed out';
  const cause = causeOf(e);
  const detail = cause ? `: ${String(cause.message || cause.code || cause.name || 'unknown cause')}` : '';
  return typeof message === 'string' ? `${message}${detail}` : String(e);
}
