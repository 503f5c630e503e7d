/**
 * Which GitHub the App talks to, from the variables Probot documents: `GHE_HOST` (and
 * `GHE_PROTOCOL`, default https) for GitHub Enterprise Server — the REST API at
 * `<protocol>://<host>/api/v3`, exactly as Probot builds it — or `GITHUB_API_URL` (the form
 * GitHub Actions uses). Neither: github.com. Both, naming different servers: refused, since the
 * App would otherwise talk to one of them silently.
 */
import { ConsortError } from '../src/core/errors.js';

export interface GitHubHost {
  /** The REST API base URL (no trailing slash). */
  apiUrl: string;
  /** The web address, for links people open (pull requests, comments). */
  webUrl: string;
  /** Where the setting came from, for the startup log. */
  source: 'GHE_HOST' | 'GITHUB_API_URL' | 'default';
  /** undefined for github.com: Probot's own default is used. */
  baseUrl: string | undefined;
}

export const GITHUB_COM: GitHubHost = {
  apiUrl: 'https://api.github.com',
  webUrl: 'https://github.com',
  source: 'default',
  baseUrl: undefined,
};

const trim = (url: string): string => url.replace(/\/+$/, '');

/** The web address of an API URL: api.github.com → github.com; GHES `…/api/v3` → its host. */
export function webUrlOf(apiUrl: string): string {
  const u = new URL(apiUrl);
  if (u.hostname === 'api.github.com') return 'https://github.com';
  if (/^api\./.test(u.hostname) && u.hostname.endsWith('.ghe.com')) return `${u.protocol}//${u.hostname.slice(4)}`; // GHE.com data residency
  return `${u.protocol}//${u.host}${trim(u.pathname).replace(/\/api\/v3$/, '')}`;
}

export function resolveGitHubHost(env: {
  GHE_HOST?: string | undefined;
  GHE_PROTOCOL?: string | undefined;
  GITHUB_API_URL?: string | undefined;
}): GitHubHost {
  const fromGhe = env.GHE_HOST ? `${env.GHE_PROTOCOL || 'https'}://${env.GHE_HOST}/api/v3` : undefined;
  if (env.GHE_HOST && /[/\s]/.test(env.GHE_HOST)) {
    throw new ConsortError(
      'config',
      `GHE_HOST must be a host name (and port), like ghe.example.com or 127.0.0.1:8080; got "${env.GHE_HOST}".`,
      {
        hint: 'Probot builds the API address as <GHE_PROTOCOL>://<GHE_HOST>/api/v3: leave out the scheme and the path.',
      },
    );
  }
  if (env.GHE_PROTOCOL && !env.GHE_HOST) {
    throw new ConsortError('config', 'GHE_PROTOCOL is set without GHE_HOST.', {
      hint: 'Set GHE_HOST to your GitHub Enterprise Server host, or remove GHE_PROTOCOL.',
    });
  }
  const api = env.GITHUB_API_URL ? trim(env.GITHUB_API_URL) : undefined;
  if (fromGhe && api && api !== fromGhe) {
    throw new ConsortError('config', `GHE_HOST points the App at ${fromGhe}, but GITHUB_API_URL at ${api}.`, {
      hint: 'Set only one of them (GHE_HOST is what Probot documents).',
    });
  }
  const apiUrl = fromGhe ?? api;
  if (!apiUrl) return GITHUB_COM;
  return { apiUrl, webUrl: webUrlOf(apiUrl), source: fromGhe ? 'GHE_HOST' : 'GITHUB_API_URL', baseUrl: apiUrl };
}
