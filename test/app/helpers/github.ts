/**
 * GitHub for App tests: nock in front of api.github.com (and codeload, where tarballs redirect),
 * with every other host refused, a record of requests nothing expected (each fails the test), and
 * a check that every expectation was used. Probot is built with a throwaway RSA key, so the App
 * authenticates exactly as in production: JWT → installation token → requests.
 */
import { generateKeyPairSync } from 'node:crypto';
import nock from 'nock';
import { Probot, ProbotOctokit } from 'probot';
import { CHECK_NAME } from '../../../app/check-output.js';
import { INSTALLATION } from './payloads.js';
import { gitObject } from './repo.js';

export const API = 'https://api.github.com';
export const CODELOAD = 'https://codeload.github.com';
export const WEBHOOK_SECRET = 'consort-test-webhook-secret';
export const APP_ID = 123456;

let key: string | undefined;
export function privateKey(): string {
  key ??= generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  }).privateKey;
  return key;
}

/**
 * Retries and throttling off: a test sees each request exactly once, without the pacing Probot
 * applies to writes in production (≥ 1 s apart per installation, comments ≥ 3 s). A function, so it
 * wins over the throttle options Probot adds around it.
 */
export const TestOctokit = ProbotOctokit.defaults((options: ConstructorParameters<typeof ProbotOctokit>[0] = {}) => ({
  ...options,
  retry: { enabled: false },
  throttle: { ...options.throttle, enabled: false },
}));

export function testProbot(): Probot {
  return new Probot({
    appId: APP_ID,
    privateKey: privateKey(),
    secret: WEBHOOK_SECRET,
    logLevel: 'fatal',
    Octokit: TestOctokit,
  });
}

const unexpected: string[] = [];
const LOOPBACK = /^(127\.0\.0\.1|localhost)(:\d+)?$/;
const onNoMatch = (req: { method?: string; path?: string; href?: string; host?: string; hostname?: string }): void => {
  const where = req.href ?? req.path ?? '?';
  let host = req.host ?? req.hostname ?? '';
  try {
    host = new URL(where).host;
  } catch {
    // not a URL: keep what the request said
  }
  if (!LOOPBACK.test(host)) unexpected.push(`${req.method ?? '?'} ${where}`);
};

/** Call in beforeAll: no host but loopback (Postgres, local servers) is reachable. */
export function forbidNetwork(): void {
  nock.disableNetConnect();
  nock.enableNetConnect(LOOPBACK);
  nock.emitter.on('no match', onNoMatch);
}

export function restoreNetwork(): void {
  nock.emitter.off('no match', onNoMatch);
  nock.cleanAll();
  nock.enableNetConnect();
}

/** Requests no interceptor expected, and expectations nothing used; both must be empty after a test. */
export function githubLeftovers(): { unexpected: string[]; unused: string[] } {
  const result = { unexpected: [...unexpected], unused: nock.pendingMocks() };
  unexpected.length = 0;
  nock.cleanAll();
  return result;
}

export function api(): nock.Scope {
  return nock(API);
}

/** The installation token exchange Probot makes once per Probot instance and installation. */
export function expectToken(scope: nock.Scope = api()): nock.Scope {
  return scope.post(`/app/installations/${INSTALLATION}/access_tokens`).reply(201, {
    token: 'ghs_consorttesttoken',
    expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    permissions: { checks: 'write' },
    repository_selection: 'all',
  });
}

/** GET …/tarball/<sha>: GitHub answers 302 to codeload, which serves the archive. */
/**
 * The look for a check run an earlier attempt made (app/jobs/check.ts `ensureCheckRun`), answered
 * with none: the commit's check runs of Consort's name.
 */
export function expectNoCheckRunYet(owner: string, repo: string, sha: string): void {
  api()
    .get(`/repos/${owner}/${repo}/commits/${sha}/check-runs`)
    .query({ check_name: CHECK_NAME, filter: 'all', per_page: 100, page: 1 })
    .reply(200, { total_count: 0, check_runs: [] });
}

export function expectTarball(owner: string, repo: string, sha: string, archive: Buffer): void {
  // The Git Trees API the App compares each tarball's migrations with (app/tree-check.ts), answered
  // from the repository the tarball was made of; as often as asked, never required.
  api()
    .get(new RegExp(`^/repos/${owner}/${repo}/git/(commits|trees)/[0-9a-f]{40}$`))
    .optionally()
    .times(Infinity)
    .reply((uri) => {
      const [, kind, id] = /\/git\/(commits|trees)\/([0-9a-f]{40})$/.exec(uri)!;
      const found = gitObject(id!);
      if (kind === 'commits' && found?.kind === 'commit') return [200, { sha: id, tree: { sha: found.tree } }];
      if (kind === 'trees' && found?.kind === 'tree')
        return [
          200,
          {
            sha: id,
            truncated: false,
            tree: found.entries.map((e) => ({ path: e.name, mode: e.mode, type: e.type, sha: e.sha })),
          },
        ];
      return [404, { message: 'Not Found' }];
    });
  api()
    .get(`/repos/${owner}/${repo}/tarball/${sha}`)
    .reply(302, '', { location: `${CODELOAD}/${owner}/${repo}/legacy.tar.gz/${sha}` });
  nock(CODELOAD)
    .get(`/${owner}/${repo}/legacy.tar.gz/${sha}`)
    .reply(200, archive, { 'content-type': 'application/x-gzip' });
}
