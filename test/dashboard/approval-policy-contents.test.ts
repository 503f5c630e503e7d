/**
 * The dashboard's approval rule is read through GitHub's contents API on the base branch
 * (app/dashboard/approval-policy.ts). Every answer that API documents for a path must give the
 * policy or an error that says what is at the path: a file (base64), a file over 1 MB (no content,
 * `encoding: "none"`: asked again in the raw media type), a folder (an array), a link leading out
 * of the repository, a submodule. The stand-in's JSON answers are checked against GitHub's own
 * OpenAPI description, so they are the shapes GitHub sends.
 */
import http from 'node:http';
import type net from 'node:net';
import { approvalPolicyAt } from '../../app/dashboard/approval-policy.js';
import { createOctokitClient } from '../../src/github/client.js';
import { loadGitHubOpenApi, OpenApiChecker } from '../emulators/openapi.js';

const R = { owner: 'octo-org', repo: 'octo-repo' };
const checker = new OpenApiChecker(loadGitHubOpenApi(), '');
const CONFIG = 'gates:\n  approvers: [kim, octo-org/reviewers]\n  selfApproval: false\n';

type Answer = { status: number; json?: unknown; raw?: string; type?: string };
/** What the stand-in answers for each config file name, JSON or raw. */
let answers: (file: string, raw: boolean) => Answer;
const seen: { path: string; accept: string }[] = [];
const problems: string[] = [];
let server: http.Server;
let url: string;

const entry = (file: string, extra: Record<string, unknown>) => ({
  name: file.split('/').pop(),
  path: file,
  sha: '3d21ec53a331a6f037a91c368710b99387d012c1',
  size: CONFIG.length,
  url: `https://api.github.com/repos/octo-org/octo-repo/contents/${file}?ref=main`,
  git_url: 'https://api.github.com/repos/octo-org/octo-repo/git/blobs/3d21ec53a331a6f037a91c368710b99387d012c1',
  html_url: `https://github.com/octo-org/octo-repo/blob/main/${file}`,
  download_url: `https://raw.githubusercontent.com/octo-org/octo-repo/main/${file}`,
  _links: {
    self: `https://api.github.com/repos/octo-org/octo-repo/contents/${file}?ref=main`,
    git: 'https://api.github.com/repos/octo-org/octo-repo/git/blobs/3d21ec53a331a6f037a91c368710b99387d012c1',
    html: `https://github.com/octo-org/octo-repo/blob/main/${file}`,
  },
  ...extra,
});
const notFound: Answer = {
  status: 404,
  json: {
    message: 'Not Found',
    documentation_url: 'https://docs.github.com/rest/repos/contents#get-repository-content',
  },
};
/** `path` answers `answer`, every other config file name is absent. */
const only =
  (path: string, answer: (raw: boolean) => Answer) =>
  (file: string, raw: boolean): Answer =>
    file === path ? answer(raw) : notFound;

beforeAll(async () => {
  const sockets = new Set<net.Socket>();
  server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const m = /^\/repos\/octo-org\/octo-repo\/contents\/(.+)$/.exec(u.pathname);
    const accept = String(req.headers.accept ?? '');
    const raw = accept.includes('.raw');
    const file = decodeURIComponent(m?.[1] ?? '');
    seen.push({ path: file, accept });
    const a = m ? answers(file, raw) : notFound;
    if (a.json !== undefined)
      problems.push(
        ...checker.check({
          method: 'GET',
          path: u.pathname,
          query: u.search,
          status: a.status,
          body: undefined,
          response: a.json,
        }),
      );
    res.writeHead(a.status, {
      'content-type': a.type ?? (a.raw !== undefined ? 'text/plain; charset=utf-8' : 'application/json'),
    });
    res.end(a.raw ?? JSON.stringify(a.json));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  seen.length = 0;
  problems.length = 0;
});
afterEach(() => {
  expect(problems).toEqual([]);
});

const client = () => createOctokitClient({ token: 'ghs_test', apiUrl: url, writePacing: 'none' });

it('reads the base branch file GitHub sends base64-encoded', async () => {
  answers = only('.github/consort.yml', () => ({
    status: 200,
    json: entry('.github/consort.yml', {
      type: 'file',
      encoding: 'base64',
      content: Buffer.from(CONFIG)
        .toString('base64')
        .replace(/(.{60})/g, '$1\n'),
    }),
  }));
  expect(await approvalPolicyAt(client(), R, 'main')).toEqual({
    approvers: ['kim', 'octo-org/reviewers'],
    selfApproval: false,
  });
  expect(seen.filter((s) => s.accept.includes('.raw'))).toEqual([]);
});

it.each([['text/plain; charset=utf-8'], ['application/vnd.github.raw']])(
  'asks again in the raw media type for a file over 1 MB, which GitHub sends without its content (%s)',
  async (rawType) => {
    const big = CONFIG + `# ${'x'.repeat(120)}\n`.repeat(9000); // ~1.1 MB of comments
    answers = only('.github/consort.yml', (raw) =>
      raw
        ? { status: 200, raw: big, type: rawType }
        : {
            status: 200,
            json: entry('.github/consort.yml', { type: 'file', encoding: 'none', content: '', size: big.length }),
          },
    );
    expect(await approvalPolicyAt(client(), R, 'main')).toEqual({
      approvers: ['kim', 'octo-org/reviewers'],
      selfApproval: false,
    });
    expect(seen.filter((s) => s.path === '.github/consort.yml').map((s) => s.accept.includes('.raw'))).toEqual([
      false,
      true,
    ]);
  },
);

it('says what is there instead of a file: a folder, a link leading out of the repository, a submodule', async () => {
  answers = only('.github/consort.yml', () => ({
    status: 200,
    json: [entry('.github/consort.yml/readme.md', { type: 'file' })],
  }));
  await expect(approvalPolicyAt(client(), R, 'main')).rejects.toMatchObject({
    code: 'config',
    message: expect.stringContaining('.github/consort.yml on main of octo-org/octo-repo is a folder'),
    hint: expect.stringContaining('Make .github/consort.yml on main a file'),
  });
  answers = only('.github/consort.yml', () => ({
    status: 200,
    json: entry('.github/consort.yml', { type: 'symlink', target: '/etc/consort.yml' }),
  }));
  await expect(approvalPolicyAt(client(), R, 'main')).rejects.toMatchObject({
    message: expect.stringContaining('is a symlink, not'),
  });
  answers = only('.github/consort.yml', () => ({
    status: 200,
    json: entry('.github/consort.yml', {
      type: 'submodule',
      submodule_git_url: 'https://github.com/octo-org/settings.git',
    }),
  }));
  await expect(approvalPolicyAt(client(), R, 'main')).rejects.toMatchObject({
    message: expect.stringContaining('is a submodule, not'),
  });
});

it('falls back to the defaults when no configuration file is on the base branch', async () => {
  answers = () => notFound;
  expect(await approvalPolicyAt(client(), R, 'main')).toMatchObject({ approvers: [] });
  expect(seen.length).toBeGreaterThan(1); // every name Consort reads its configuration from was asked for
});
