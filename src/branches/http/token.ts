/**
 * A short-lived secret (an OAuth access token, a database login token) that is fetched again
 * before it expires. Concurrent callers share one refresh; the value is never logged.
 */
import type { Clock } from './retry.js';

export interface IssuedToken {
  value: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

export class RefreshingToken {
  private current: IssuedToken | undefined;
  private pending: Promise<IssuedToken> | undefined;
  private issuedAt = 0;

  /**
   * @param marginMs refresh this long before expiry; capped at half the token's lifetime so
   *   short-lived tokens (seconds, in tests) are still reused rather than fetched on every call.
   */
  constructor(
    private readonly fetchToken: () => Promise<IssuedToken>,
    private readonly clock: Clock,
    private readonly marginMs = 5 * 60_000,
  ) {}

  async get(): Promise<string> {
    return (await this.getIssued()).value;
  }

  async getIssued(): Promise<IssuedToken> {
    if (this.current && !this.stale(this.current)) return this.current;
    this.pending ??= this.fetchToken()
      .then((token) => {
        this.current = token;
        this.issuedAt = this.clock.now();
        return token;
      })
      .finally(() => {
        this.pending = undefined;
      });
    return this.pending;
  }

  /** Forget the cached value (the server said it is no longer valid). */
  invalidate(): void {
    this.current = undefined;
  }

  /** Every secret value this holder has seen, for redaction. */
  secrets(): string[] {
    return this.current ? [this.current.value] : [];
  }

  private stale(token: IssuedToken): boolean {
    const lifetime = Math.max(0, token.expiresAt - this.issuedAt);
    const margin = Math.min(this.marginMs, lifetime / 2);
    return this.clock.now() >= token.expiresAt - margin;
  }
}
