/**
 * A small REST client for GitHub with a person's OAuth token (the dashboard acts as the signed-in
 * user when it writes an approval), shaped like Octokit's `request(route, params)` so the same
 * adapters serve an installation's Probot client and a user's. Route parameters fill `{name}`
 * placeholders (percent-encoded); the rest go in the query (GET) or the JSON body, but for Octokit's
 * own options (`request`, `headers`, `mediaType`…), which are not sent.
 */
import type { OctokitClient as OctokitLike } from '../../src/github/octokit.js';

export class GitHubRequestError extends Error {
  override readonly name = 'GitHubRequestError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Options Octokit's `request` reads for itself rather than sending (@octokit/endpoint's `parse`). */
const OCTOKIT_OPTIONS = ['request', 'headers', 'mediaType', 'baseUrl', 'method', 'url'] as const;

export function restClient(apiUrl: string, token: string, fetcher: typeof fetch = globalThis.fetch): OctokitLike {
  return {
    async request(route, parameters = {}) {
      const [method = 'GET', template = ''] = route.split(' ');
      const rest: Record<string, unknown> = { ...parameters };
      // Octokit's own options, never sent as parameters (Octokit drops them from query and body too):
      // the adapter's creates pass `request: { retries: 0 }` for the retry plugin, which this client lacks.
      for (const option of OCTOKIT_OPTIONS) delete rest[option];
      const path = template.replace(/\{(\w+)\}/g, (_m, name: string) => {
        const value = rest[name];
        delete rest[name];
        return name === 'ref' || name === 'path'
          ? String(value).split('/').map(encodeURIComponent).join('/')
          : encodeURIComponent(String(value));
      });
      const url = new URL(`${apiUrl.replace(/\/+$/, '')}${path}`);
      const get = method === 'GET' || method === 'HEAD';
      if (get) for (const [k, v] of Object.entries(rest)) if (v !== undefined) url.searchParams.set(k, String(v));
      const res = await fetcher(url, {
        method,
        headers: {
          accept: 'application/vnd.github+json',
          authorization: `Bearer ${token}`,
          'x-github-api-version': '2022-11-28',
          'user-agent': 'consort-dashboard',
          ...(get ? {} : { 'content-type': 'application/json' }),
        },
        ...(get ? {} : { body: JSON.stringify(rest) }),
        redirect: 'follow',
      });
      const text = await res.text();
      let data: unknown = text;
      try {
        data = text === '' ? null : JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      if (!res.ok) {
        const message =
          typeof data === 'object' && data !== null && 'message' in data
            ? String((data as { message: unknown }).message)
            : res.statusText;
        throw new GitHubRequestError(res.status, `GitHub answered ${res.status} to ${method} ${template}: ${message}`);
      }
      return { status: res.status, data };
    },
  };
}
