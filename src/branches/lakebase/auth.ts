/**
 * Databricks authentication: a personal access token as is, or OAuth M2M — the service
 * principal's client id and secret exchanged at the workspace's OIDC endpoint for an access
 * token that is refreshed before it expires. Also who we are in Postgres: Lakebase logs in the
 * Databricks identity itself (the service principal's client id, or the user's name).
 */
import { z } from 'zod';
import { ConsortError } from '../../core/errors.js';
import { JsonClient, type HttpFailure } from '../http/json-client.js';
import type { Clock, RetryPolicy } from '../http/retry.js';
import { RefreshingToken } from '../http/token.js';
import type { LakebaseAuth } from './settings.js';

const TokenResponse = z.object({
  access_token: z.string().min(1),
  token_type: z.string().optional(),
  expires_in: z.number().positive(),
});

export interface WorkspaceAuthOptions {
  host: string;
  auth: LakebaseAuth;
  clock: Clock;
  retry?: Partial<RetryPolicy>;
  log?: (line: string) => void;
}

export class WorkspaceAuth {
  private readonly oauth: RefreshingToken | undefined;

  constructor(private readonly options: WorkspaceAuthOptions) {
    const auth = options.auth;
    if (auth.kind === 'oauth-m2m') {
      const client = new JsonClient({
        service: 'Databricks OAuth',
        baseUrl: options.host,
        clock: options.clock,
        ...(options.retry ? { retry: options.retry } : {}),
        ...(options.log ? { log: options.log } : {}),
        secrets: () => [auth.clientSecret, ...this.secrets()],
        describeError: oauthError,
      });
      const basic = Buffer.from(
        `${encodeURIComponent(auth.clientId)}:${encodeURIComponent(auth.clientSecret)}`,
      ).toString('base64');
      this.oauth = new RefreshingToken(async () => {
        const t = await client.request('POST', '/oidc/v1/token', {
          form: { grant_type: 'client_credentials', scope: 'all-apis' },
          headers: { authorization: `Basic ${basic}` },
          schema: TokenResponse,
          idempotent: true, // asking for a token twice makes two tokens, nothing else
        });
        return { value: t.access_token, expiresAt: options.clock.now() + t.expires_in * 1000 };
      }, options.clock);
    }
  }

  /** The Authorization header for workspace APIs. */
  async header(): Promise<string> {
    const auth = this.options.auth;
    return `Bearer ${auth.kind === 'token' ? auth.token : await this.oauth!.get()}`;
  }

  /** The server rejected our token: fetch a new one next time (a PAT cannot be refreshed). */
  invalidate(): void {
    this.oauth?.invalidate();
  }

  /** The Postgres role Lakebase gives this identity, if known without asking the workspace. */
  knownIdentity(): string | undefined {
    return this.options.auth.kind === 'oauth-m2m' ? this.options.auth.clientId : undefined;
  }

  secrets(): string[] {
    const auth = this.options.auth;
    return [...(auth.kind === 'token' ? [auth.token] : [auth.clientSecret]), ...(this.oauth?.secrets() ?? [])];
  }
}

function oauthError(f: HttpFailure): Error {
  if (f.status === 400 || f.status === 401 || f.status === 403) {
    return new ConsortError('auth', `Databricks refused the OAuth client credentials (HTTP ${f.status}).`, {
      hint: "Check DATABRICKS_CLIENT_ID (the service principal's application id) and DATABRICKS_CLIENT_SECRET (an OAuth secret, not a PAT); secrets expire — create a new one if needed.",
    });
  }
  if (f.status === 404) {
    return new ConsortError('config', 'The workspace has no OAuth endpoint at /oidc/v1/token.', {
      hint: 'Check DATABRICKS_HOST: it must be the workspace URL, not the account console.',
    });
  }
  return new ConsortError('service-error', `Databricks OAuth answered HTTP ${f.status}.`, {
    hint: 'Retry later; if it persists, check the workspace status page.',
  });
}
