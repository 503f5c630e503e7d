/**
 * Sign-in with GitHub, the web application flow as GitHub documents it for a GitHub App's user
 * access tokens: the browser goes to `<web>/login/oauth/authorize?client_id&redirect_uri&state`,
 * comes back to the callback with `code` and the same `state`, and the App trades the code for a
 * token at `<web>/login/oauth/access_token` with its client id and secret; `GET /user` says who
 * it is. Every answer is parsed with zod; GitHub's `error` answers become messages a person can act on.
 */
import { z } from 'zod';
import { ConsortError } from '../../src/core/errors.js';
import { restClient } from './rest-client.js';

export interface OAuthClient {
  clientId: string;
  clientSecret: string;
  /** github.com or the GHES host: where people sign in. */
  webUrl: string;
  apiUrl: string;
  redirectUri: string;
  fetch?: typeof fetch;
}

export function authorizeUrl(c: OAuthClient, state: string): string {
  const url = new URL(`${c.webUrl.replace(/\/+$/, '')}/login/oauth/authorize`);
  url.searchParams.set('client_id', c.clientId);
  url.searchParams.set('redirect_uri', c.redirectUri);
  url.searchParams.set('state', state);
  url.searchParams.set('allow_signup', 'false');
  return url.toString();
}

const TokenReply = z.union([
  z.object({ access_token: z.string().min(1), token_type: z.string() }),
  z.object({ error: z.string(), error_description: z.string().optional() }),
]);
const User = z.object({ login: z.string().min(1).max(100), id: z.number() });

export async function exchangeCode(c: OAuthClient, code: string): Promise<string> {
  const res = await (c.fetch ?? globalThis.fetch)(`${c.webUrl.replace(/\/+$/, '')}/login/oauth/access_token`, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json', 'user-agent': 'consort-dashboard' },
    body: JSON.stringify({ client_id: c.clientId, client_secret: c.clientSecret, code, redirect_uri: c.redirectUri }),
  });
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  const reply = TokenReply.safeParse(body);
  if (!res.ok || !reply.success)
    throw new ConsortError('internal', `GitHub answered the sign-in with ${res.status} and nothing usable.`, {
      hint: 'Sign in again; if it keeps failing, check GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET.',
    });
  if ('error' in reply.data) {
    throw new ConsortError(
      'invalid-input',
      `GitHub refused the sign-in: ${reply.data.error_description ?? reply.data.error}.`,
      {
        hint:
          reply.data.error === 'bad_verification_code'
            ? 'The sign-in link was used already or is too old: sign in again.'
            : "Check the App's client id, secret and callback URL.",
      },
    );
  }
  return reply.data.access_token;
}

export async function currentUser(
  c: Pick<OAuthClient, 'apiUrl' | 'fetch'>,
  token: string,
): Promise<{ login: string; id: number }> {
  const { data } = await restClient(c.apiUrl, token, c.fetch).request('GET /user', {});
  return User.parse(data);
}

/** `GET /user`'s answer, down to the fields read (for test/github/openapi.test.ts). */
export { User as UserReply };
