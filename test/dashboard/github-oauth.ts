/**
 * What the App's dashboard needs of GitHub, added to the local stand-in (test/helpers/fake-github.ts)
 * with the shapes GitHub documents:
 *
 * - the OAuth web flow: `GET /login/oauth/authorize` (a sign-in page: a person types who they are,
 *   as they would sign in on GitHub, and is sent back to the registered callback with `code` and
 *   `state`), `POST /login/oauth/access_token` (code → `gho_` token; a code works once, with the
 *   App's client id and secret and the same redirect_uri; errors as 200 `{ error, error_description }`),
 *   `GET /user`; a comment created with a person's token is theirs (`FakeGitHub.userTokens`);
 * - the comparison of two commits (its `files` with additions and deletions);
 * - the Git database API on a real git repository: trees (recursive), blobs, a branch's ref, a
 *   commit; and, with a person's token and push access, new trees, commits and a fast-forward-only
 *   ref update, refused (403) for anyone who may only read.
 *
 * The installation token reads; a person's token reads what their role lets them read.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ExtraReply, ExtraRequest, FakeGitHub } from '../helpers/fake-github.js';
import { githubComparison, githubGitCommit, githubPublicUser, githubRef } from '../helpers/github-shapes.js';

export const CLIENT_ID = 'Iv1.consortdashboard';
export const CLIENT_SECRET = 'consort-dashboard-client-secret';
export const INSTALLATION_TOKEN = 'ghs_dashboardinstallation000000000000';

export interface OAuthStandIn {
  /** The callback the App registered (set once the App's port is known). */
  redirectUri: string;
  /** Every login a token was issued to, in order. */
  signIns: string[];
  /** Git database writes by login (commits made). */
  commits: { login: string; sha: string; message: string }[];
  /** Blobs served, by sha (how many times each was fetched). */
  blobFetches: Map<string, number>;
  close(): void;
}

const notFound: ExtraReply = {
  status: 404,
  body: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' },
};
const unauthorized: ExtraReply = {
  status: 401,
  body: { message: 'Requires authentication', documentation_url: 'https://docs.github.com/rest', status: '401' },
};

export function installOAuthAndGit(
  fake: FakeGitHub,
  owner: string,
  repo: string,
  gitDir: string,
  installationToken = INSTALLATION_TOKEN,
): OAuthStandIn {
  const codes = new Map<string, { login: string; redirectUri: string }>();
  const tokens = new Map<string, string>();
  let serial = 0;
  const indexDir = mkdtempSync(path.join(os.tmpdir(), 'consort-fake-git-'));
  const stand: OAuthStandIn = {
    redirectUri: '',
    signIns: [],
    commits: [],
    blobFetches: new Map(),
    close: () => rmSync(indexDir, { recursive: true, force: true }),
  };
  const git = (args: string[], o: { input?: string; env?: Record<string, string> } = {}): string =>
    execFileSync('git', ['--git-dir', gitDir, ...args], {
      encoding: 'utf8',
      input: o.input,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: indexDir, ...o.env },
    }).trim();
  const api = `/repos/${owner}/${repo}`;
  const who = (r: ExtraRequest): { kind: 'installation' } | { kind: 'user'; login: string } | null => {
    const token = r.authorization?.replace(/^(token|bearer) /i, '');
    if (token === installationToken) return { kind: 'installation' };
    const login = token ? tokens.get(token) : undefined;
    return login ? { kind: 'user', login } : null;
  };
  const role = (login: string) => fake.permissions.get(login) ?? 'none';
  const canPush = (login: string) => ['admin', 'maintain', 'write'].includes(role(login));

  fake.routes.push((r) => {
    if (r.method === 'GET' && r.path === '/login/oauth/authorize') {
      const ok = r.query.get('client_id') === CLIENT_ID && r.query.get('redirect_uri') === stand.redirectUri;
      if (!ok)
        return {
          status: 400,
          raw: Buffer.from('<p>The redirect_uri MUST match the registered callback URL for this application.</p>'),
          headers: { 'content-type': 'text/html' },
        };
      const hidden = ['client_id', 'redirect_uri', 'state']
        .map((k) => `<input type="hidden" name="${k}" value="${(r.query.get(k) ?? '').replace(/[&"<>]/g, '')}">`)
        .join('');
      return {
        status: 200,
        headers: { 'content-type': 'text/html; charset=utf-8' },
        raw: Buffer.from(
          `<!doctype html><title>Sign in to GitHub</title><form method="get" action="/login/oauth/authorize/grant">${hidden}<label>Username <input name="login" id="login_field"></label><button type="submit" name="commit">Sign in</button></form>`,
        ),
      };
    }
    if (r.method === 'GET' && r.path === '/login/oauth/authorize/grant') {
      const login = r.query.get('login') ?? '';
      const redirectUri = r.query.get('redirect_uri') ?? '';
      if (!login || redirectUri !== stand.redirectUri) return { status: 400, body: { message: 'bad sign-in' } };
      const code = `code${++serial}${Math.random().toString(36).slice(2, 10)}`;
      codes.set(code, { login, redirectUri });
      const to = new URL(redirectUri);
      to.searchParams.set('code', code);
      to.searchParams.set('state', r.query.get('state') ?? '');
      return { status: 302, headers: { location: to.toString() } };
    }
    if (r.method === 'POST' && r.path === '/login/oauth/access_token') {
      const b = (r.body ?? {}) as Record<string, string>;
      if (b.client_id !== CLIENT_ID || b.client_secret !== CLIENT_SECRET)
        return {
          status: 200,
          body: {
            error: 'incorrect_client_credentials',
            error_description: 'The client_id and/or client_secret passed are incorrect.',
          },
        };
      const grant = codes.get(b.code ?? '');
      codes.delete(b.code ?? '');
      if (!grant)
        return {
          status: 200,
          body: { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' },
        };
      if (b.redirect_uri !== grant.redirectUri)
        return {
          status: 200,
          body: {
            error: 'redirect_uri_mismatch',
            error_description: 'The redirect_uri MUST match the registered callback URL for this application.',
          },
        };
      const token = `gho_${grant.login}${++serial}`;
      tokens.set(token, grant.login);
      fake.userTokens.set(token, grant.login);
      stand.signIns.push(grant.login);
      return { status: 200, body: { access_token: token, token_type: 'bearer', scope: '' } };
    }
    if (r.method === 'GET' && r.path === '/user') {
      const w = who(r);
      return w?.kind === 'user'
        ? { status: 200, body: githubPublicUser({ login: w.login, id: 5000 + w.login.length, type: 'User' }, fake.url) }
        : unauthorized;
    }
    const compare = /^\/compare\/([0-9a-f]{40})\.\.\.([0-9a-f]{40})$/.exec(r.path.slice(api.length));
    if (r.path.startsWith(`${api}/compare/`) && compare && r.method === 'GET') {
      if (who(r)?.kind !== 'installation') return unauthorized;
      let numstat: string;
      try {
        numstat = git(['diff', '--numstat', '-z', '--no-renames', `${compare[1]}...${compare[2]}`]);
      } catch {
        return notFound; // GitHub's answer for commits this repository does not have
      }
      const files = numstat
        .split('\0')
        .filter(Boolean)
        .map((e) => {
          const [additions = '0', deletions = '0', filename = ''] = e.replace(/^\n/, '').split('\t');
          let sha: string | null = null;
          try {
            sha = git(['rev-parse', `${compare[2]}:${filename}`]);
          } catch {
            // removed on the head side: GitHub's sha is null
          }
          return { filename, additions: Number(additions), deletions: Number(deletions), sha };
        });
      const commitOf = (sha: string) => {
        const [tree = '', parents = '', ...message] = git(['show', '-s', '--format=%T%n%P%n%B', sha]).split('\n');
        return { sha, tree, parents: parents.split(' ').filter(Boolean), message: message.join('\n') };
      };
      const mergeBase = git(['merge-base', compare[1]!, compare[2]!]);
      const commits = git(['rev-list', '--reverse', `${compare[1]}..${compare[2]}`])
        .split('\n')
        .filter(Boolean)
        .map(commitOf);
      return {
        status: 200,
        body: githubComparison(`${fake.url}${api}`, `${owner}/${repo}`, {
          base: commitOf(compare[1]!),
          mergeBase: commitOf(mergeBase),
          commits,
          files,
          head: compare[2]!,
        }),
      };
    }
    if (!r.path.startsWith(`${api}/git/`)) return undefined;
    const w = who(r);
    if (w === null) return unauthorized;
    if (w.kind === 'user' && role(w.login) === 'none') return notFound;
    const rest = r.path.slice(`${api}/git`.length);
    const b = (r.body ?? {}) as Record<string, unknown>;
    try {
      let m: RegExpExecArray | null;
      if (r.method === 'GET' && (m = /^\/trees\/([0-9a-f]{40})$/.exec(rest))) {
        const tree = git(['rev-parse', `${m[1]}^{tree}`]);
        const lines = git(['ls-tree', '-z', '-l', ...(r.query.get('recursive') ? ['-r', '-t'] : []), tree])
          .split('\0')
          .filter(Boolean);
        return {
          status: 200,
          body: {
            sha: tree,
            url: `${fake.url}${api}/git/trees/${tree}`,
            truncated: false,
            tree: lines.map((l) => {
              const [meta = '', p = ''] = l.split('\t');
              const [mode = '', type = '', sha = '', size = '-'] = meta.split(' ').filter(Boolean);
              return {
                path: p,
                mode,
                type,
                sha,
                ...(type === 'blob' ? { size: Number(size) } : {}),
                url: `${fake.url}${api}/git/${type}s/${sha}`,
              };
            }),
          },
        };
      }
      if (r.method === 'GET' && (m = /^\/blobs\/([0-9a-f]{40})$/.exec(rest))) {
        stand.blobFetches.set(m[1]!, (stand.blobFetches.get(m[1]!) ?? 0) + 1);
        // GitHub's blob API serves blobs up to 100 MB.
        const content = execFileSync('git', ['--git-dir', gitDir, 'cat-file', 'blob', m[1]!], {
          maxBuffer: 128 * 1024 * 1024,
        });
        return {
          status: 200,
          body: {
            sha: m[1],
            node_id: `B_${m[1]}`,
            size: content.length,
            url: `${fake.url}${api}/git/blobs/${m[1]}`,
            content: content.toString('base64').replace(/(.{60})/g, '$1\n'),
            encoding: 'base64',
          },
        };
      }
      if (r.method === 'GET' && (m = /^\/ref\/heads\/(.+)$/.exec(rest))) {
        const sha = git(['rev-parse', `refs/heads/${m[1]}`]);
        return { status: 200, body: githubRef(`${fake.url}${api}`, `refs/heads/${m[1]}`, sha) };
      }
      if (r.method === 'GET' && (m = /^\/commits\/([0-9a-f]{40})$/.exec(rest))) {
        const [tree = '', parents = ''] = git(['show', '-s', '--format=%T%n%P', m[1]!]).split('\n');
        return {
          status: 200,
          body: githubGitCommit(`${fake.url}${api}`, `${owner}/${repo}`, {
            sha: m[1]!,
            tree,
            parents: parents.split(' ').filter(Boolean),
            message: git(['show', '-s', '--format=%B', m[1]!]),
          }),
        };
      }
      // Writes: only with a person's token and push access (an installation token here only reads).
      if (r.method !== 'GET' && (w.kind !== 'user' || !canPush(w.login))) {
        return {
          status: 403,
          body: {
            message: 'Resource not accessible by integration',
            documentation_url: 'https://docs.github.com/rest/git',
            status: '403',
          },
        };
      }
      const login = w.kind === 'user' ? w.login : '';
      if (r.method === 'POST' && rest === '/trees') {
        const env = { GIT_INDEX_FILE: path.join(indexDir, `index-${++serial}`) };
        git(['read-tree', String(b.base_tree)], { env });
        for (const e of (b.tree ?? []) as { path: string; mode: string; content: string }[]) {
          const sha = git(['hash-object', '-w', '--stdin'], { input: e.content });
          git(['update-index', '--add', '--cacheinfo', `${e.mode},${sha},${e.path}`], { env });
        }
        const sha = git(['write-tree'], { env });
        return { status: 201, body: { sha, url: `${fake.url}${api}/git/trees/${sha}`, tree: [], truncated: false } };
      }
      if (r.method === 'POST' && rest === '/commits') {
        const parents = ((b.parents ?? []) as string[]).flatMap((p) => ['-p', p]);
        const env = {
          GIT_AUTHOR_NAME: login,
          GIT_AUTHOR_EMAIL: `${login}@users.noreply.github.com`,
          GIT_COMMITTER_NAME: 'GitHub',
          GIT_COMMITTER_EMAIL: 'noreply@github.com',
        };
        const sha = git(['commit-tree', String(b.tree), ...parents, '-F', '-'], {
          input: String(b.message ?? ''),
          env,
        });
        stand.commits.push({ login, sha, message: String(b.message ?? '') });
        return {
          status: 201,
          body: githubGitCommit(`${fake.url}${api}`, `${owner}/${repo}`, {
            sha,
            tree: String(b.tree),
            parents: (b.parents ?? []) as string[],
            message: String(b.message ?? ''),
            author: login,
          }),
        };
      }
      if (r.method === 'PATCH' && (m = /^\/refs\/heads\/(.+)$/.exec(rest))) {
        const current = git(['rev-parse', `refs/heads/${m[1]}`]);
        const sha = String(b.sha);
        let fastForward = true;
        try {
          git(['merge-base', '--is-ancestor', current, sha]);
        } catch {
          fastForward = false;
        }
        if (!fastForward && b.force !== true)
          return {
            status: 422,
            body: {
              message: 'Update is not a fast forward',
              documentation_url: 'https://docs.github.com/rest/git/refs#update-a-reference',
              status: '422',
            },
          };
        git(['update-ref', `refs/heads/${m[1]}`, sha, current]);
        return { status: 200, body: githubRef(`${fake.url}${api}`, `refs/heads/${m[1]}`, sha) };
      }
    } catch {
      return {
        status: 422,
        body: { message: 'Validation Failed', documentation_url: 'https://docs.github.com/rest/git', status: '422' },
      };
    }
    return undefined;
  });
  return stand;
}
