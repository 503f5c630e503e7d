/**
 * Every GitHub call Consort makes, held against GitHub's own REST API description
 * (`@octokit/openapi`, generated/api.github.com.json): the Action's and the App's adapter
 * (src/github/octokit.ts), the dashboard's reads and a person's writes (app/dashboard/github-records.ts,
 * oauth.ts, approval-policy.ts), driven through a pull request's life against the local stand-ins
 * (test/helpers/fake-github.ts with the App's routes, test/app/helpers/app-routes.ts, and the
 * dashboard's, test/dashboard/github-oauth.ts). Each request must be a documented operation with
 * valid parameters and body; each 2xx answer of a stand-in must match the operation's response
 * schema, so the zod parsers that read those answers are tested on what GitHub sends. And every
 * route the sources call (`request('METHOD /route'`) must have been exercised here.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { approvalPolicyAt } from '../../app/dashboard/approval-policy.js';
import {
  ANSWER_PARSERS as DASHBOARD_PARSERS,
  githubCommits,
  githubRecords,
} from '../../app/dashboard/github-records.js';
import { currentUser, UserReply } from '../../app/dashboard/oauth.js';
import { restClient } from '../../app/dashboard/rest-client.js';
import { createOctokitClient } from '../../src/github/client.js';
import { answerParsers as A, octokitGitHub } from '../../src/github/octokit.js';
import { PermissionReply } from '../../src/github/permissions.js';
import { installAppRoutes, TOKEN, type AppRoutes } from '../app/helpers/app-routes.js';
import { commit, tarballOf } from '../app/helpers/repo.js';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  INSTALLATION_TOKEN,
  installOAuthAndGit,
  type OAuthStandIn,
} from '../dashboard/github-oauth.js';
import { loadGitHubOpenApi, OpenApiChecker } from '../emulators/openapi.js';
import type { Exchange } from '../emulators/json-server.js';
import { startFakeGitHub, type FakeGitHub, type RecordedRequest } from '../helpers/fake-github.js';

const OWNER = 'octo-org';
const REPO = 'octo-repo';
const R = { owner: OWNER, repo: REPO };

const doc = loadGitHubOpenApi();
const checker = new OpenApiChecker(doc, '');

let dir: string;
let app: FakeGitHub;
let routes: AppRoutes;
let dash: FakeGitHub;
let stand: OAuthStandIn;
let baseSha: string;
let headSha: string;

const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'consort-gh-openapi-'));
  git('init', '-q', '-b', 'main');
  baseSha = await commit(dir, {
    'consort.config.json': '{}\n',
    'migrations/001_init.sql': 'create table t (id int);\n',
  });
  git('checkout', '-q', '-b', 'feature/orders');
  headSha = await commit(dir, { 'migrations/002_orders.sql': 'create table orders (id int);\n' }, 'orders');

  app = await startFakeGitHub(OWNER, REPO);
  routes = installAppRoutes(app, OWNER, REPO);
  routes.tarballs.set(headSha, await tarballOf(dir, headSha, OWNER, REPO));
  app.setPull({
    number: 7,
    state: 'open',
    title: 'Add orders table',
    body: null,
    head: { ref: 'feature/orders', sha: headSha, repo: 'mona/octo-repo' },
    base: { ref: 'main', sha: baseSha },
    author: 'mona',
  });
  app.permissions.set('mona', 'write').set('kim', 'maintain');
  app.teams.set('octo-org/reviewers', ['kim']);
  app.files.set('consort.config.json@main', JSON.stringify({ gates: { approvers: ['octo-org/reviewers'] } }));

  dash = await startFakeGitHub(OWNER, REPO);
  dash.permissions.set('kim', 'maintain');
  stand = installOAuthAndGit(dash, OWNER, REPO, path.join(dir, '.git'));
});

afterAll(async () => {
  stand?.close();
  await app?.close();
  await dash?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A recorded request as the checker reads it; requests outside the REST API (sign-in, archives) are left out. */
function exchanges(fake: FakeGitHub): Exchange[] {
  return fake.requests
    .filter((r: RecordedRequest) => !r.path.startsWith('/login/') && !r.path.startsWith('/_codeload/'))
    .map((r) => {
      const u = new URL(r.path, 'http://localhost');
      return {
        method: r.method,
        path: u.pathname,
        query: u.search.slice(1),
        status: r.status ?? 0,
        body: r.body ?? '',
        response: r.response,
        ...(r.status !== undefined ? { handledStatus: r.status } : {}),
      };
    });
}

/** Every `request('METHOD /route'` in the App's and the Action's sources. */
function routesCalled(): string[] {
  const found = new Set<string>();
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts'))
        for (const m of readFileSync(p, 'utf8').matchAll(/request\(\s*'([A-Z]+ \/[^']*)'/g)) found.add(m[1]!);
    }
  };
  walk('src');
  walk('app');
  return [...found].sort();
}

/** Whether an exchange is a call of `route` (`METHOD /template`; `{ref}` and `{path}` may hold slashes). */
function isCallOf(route: string, e: Exchange): boolean {
  const [method, template = ''] = route.split(' ');
  const pattern = template
    .split(/\{([^}]+)\}/)
    .map((part, i) =>
      i % 2 === 0 ? part.replace(/[.*+?^$()|[\]\\]/g, '\\$&') : part === 'ref' || part === 'path' ? '.+' : '[^/]+',
    )
    .join('');
  return e.method === method && new RegExp(`^${pattern}$`).test(e.path);
}

describe("Consort's GitHub calls, as GitHub's OpenAPI description defines them", () => {
  it('a pull request through the Action and the App: every request and every answer follows the description', async () => {
    const gh = octokitGitHub(createOctokitClient({ token: TOKEN, apiUrl: app.url, writePacing: 'none' }));
    // Opened: the pull request, who may run it, the check run, the code and its migrations.
    const pull = await gh.pull(R, 7);
    expect(pull).toMatchObject({ author: 'mona', body: '', head: { repo: 'mona/octo-repo' } });
    expect(await gh.permission(R, 'mona')).toBe('write');
    expect(await gh.permission(R, 'stranger')).toBe('none');
    const run = await gh.createCheckRun(R, {
      name: 'consort',
      headSha,
      externalId: 'pr-7',
      output: { title: 'Running', summary: 'Running the suite' },
    });
    expect(await gh.mergeBase(R, baseSha, headSha)).toBe(baseSha);
    expect((await gh.tarball(R, headSha)).length).toBeGreaterThan(0);
    expect((await gh.folderEntries(R, headSha, 'migrations'))?.map((e) => e.name)).toEqual([
      '001_init.sql',
      '002_orders.sql',
    ]);
    // The sticky comment: listed, created, listed again and updated; a command's reactions.
    expect(await gh.listComments(R, 7)).toEqual([]);
    const c = await gh.createComment(R, 7, 'Consort: running');
    expect((await gh.listComments(R, 7)).map((x) => x.id)).toEqual([c.id]);
    await gh.updateComment(R, c.id, 'Consort: passed');
    await gh.react(R, c.id, 'eyes');
    await gh.react(R, c.id, '+1');
    await gh.react(R, c.id, 'confused');
    // A duplicate of the sticky comment (two runs that both posted one) is deleted.
    const duplicate = await gh.createComment(R, 7, 'Consort: passed');
    await gh.deleteComment(R, duplicate.id);
    expect((await gh.listComments(R, 7)).map((x) => x.id)).toEqual([c.id]);
    // Done: the check run completes, the statuses, a review; an approver's team.
    await gh.completeCheckRun(R, run, {
      conclusion: 'failure',
      output: {
        title: 'Failed',
        summary: 'One migration failed',
        text: 'details',
        annotations: [
          {
            path: 'migrations/002_orders.sql',
            start_line: 1,
            end_line: 1,
            start_column: 1,
            end_column: 6,
            annotation_level: 'failure',
            title: 'syntax error',
            message: 'syntax error at or near "tabel"',
            raw_details: 'ERROR: 42601',
          },
          { path: 'migrations/001_init.sql', start_line: 0, end_line: 3, annotation_level: 'warning', message: '' },
        ],
      },
    });
    // A history with many findings: 120 annotations go in three requests of at most 50, all kept.
    const many = await gh.createCheckRun(R, {
      name: 'consort/many',
      headSha,
      externalId: 'pr-7-many',
      output: { title: 'Running', summary: 'Running' },
    });
    await gh.completeCheckRun(R, many, {
      conclusion: 'neutral',
      output: {
        title: '120 warnings',
        summary: 'Lint findings',
        annotations: Array.from({ length: 120 }, (_, i) => ({
          path: 'migrations/002_orders.sql',
          start_line: i + 1,
          end_line: i + 1,
          annotation_level: 'warning' as const,
          message: `finding ${i}`,
        })),
      },
    });
    const stored = routes.checkRuns.get(many)!;
    expect(stored.status).toBe('completed');
    expect(stored.output.annotations?.map((a) => a.message)).toEqual(
      Array.from({ length: 120 }, (_, i) => `finding ${i}`),
    );
    const second = await gh.createCheckRun(R, {
      name: 'consort/gate',
      headSha,
      externalId: 'pr-7-gate',
      output: { title: 'Waiting', summary: '' },
    });
    await gh.completeCheckRun(R, second, {
      conclusion: 'action_required',
      output: { title: 'Approve the gate', summary: 'A maintainer approves from the dashboard.' },
      detailsUrl: 'https://consort.example/gates/7',
    });
    await gh.setStatus(R, headSha, {
      context: 'consort/tdd',
      state: 'success',
      description: 'passed',
      targetUrl: 'https://consort.example/runs/1',
    });
    await gh.setStatus(R, headSha, { context: 'consort/gate', state: 'pending', description: 'waiting' });
    await gh.setStatus(R, headSha, { context: 'consort/gate', state: 'error', description: 'x'.repeat(300) });
    await gh.review(R, 7, headSha, 'Turn 1: wrote the failing test.');
    // Creates GitHub made before answering 502: each is looked for (its lists, paged and filtered), not made again.
    const retrying = octokitGitHub(createOctokitClient({ token: TOKEN, apiUrl: app.url, writePacing: 'none' }), {
      retryAfterBaseMs: 1,
    });
    app.failAfterNext = 1;
    await retrying.review(R, 7, headSha, 'Turn 2: made it pass.');
    app.failAfterNext = 1;
    await retrying.createComment(R, 7, 'Consort: running again');
    app.failAfterNext = 1;
    await retrying.createCheckRun(R, {
      name: 'consort',
      headSha,
      externalId: 'pr-7-again',
      output: { title: 'Running', summary: 'Running the suite' },
    });
    app.failAfterNext = 1;
    await retrying.completeCheckRun(R, run, {
      conclusion: 'failure',
      output: {
        title: 'Failed again',
        summary: 'One migration failed',
        annotations: [
          { path: 'migrations/002_orders.sql', start_line: 1, end_line: 1, annotation_level: 'failure', message: 'x' },
        ],
      },
    });
    // Annotations past the first 50 (GitHub appends each batch): a batch applied before a 502 is
    // known by the run's count (GET the check run, output.annotations_count), not sent again.
    app.failOn = { request: /^PATCH .*\/check-runs\/\d+$/, acted: true };
    await retrying.createCheckRun(R, {
      name: 'consort',
      headSha,
      externalId: 'pr-7-many',
      output: {
        title: 'Findings',
        summary: '60 findings',
        annotations: Array.from({ length: 60 }, (_, i) => ({
          path: 'migrations/002_orders.sql',
          start_line: i + 1,
          end_line: i + 1,
          annotation_level: 'warning' as const,
          message: `finding ${i}`,
        })),
      },
    });
    expect(app.failOn).toBeNull();
    expect(app.failAfterNext).toBe(0);
    expect(await gh.teamMember('octo-org', 'reviewers', 'kim')).toBe(true);
    expect(await gh.teamMember('octo-org', 'reviewers', 'mona')).toBe(false);
    // The dashboard's approval rule, read from the base branch's configuration.
    const installation = createOctokitClient({ token: TOKEN, apiUrl: app.url, writePacing: 'none' });
    expect(await approvalPolicyAt(installation, R, 'main')).toMatchObject({ approvers: ['octo-org/reviewers'] });

    expect(app.unexpected).toEqual([]);
    const all = exchanges(app);
    expect(all.flatMap((e) => checker.check(e))).toEqual([]);
  });

  it("the dashboard's reads, and a person's sign-in, commit and comment on the pull request's branch", async () => {
    stand.redirectUri = 'http://127.0.0.1:1/callback';
    const grant = await fetch(
      `${dash.url}/login/oauth/authorize/grant?login=kim&redirect_uri=${encodeURIComponent(stand.redirectUri)}`,
      { redirect: 'manual' },
    );
    const code = new URL(grant.headers.get('location') ?? '').searchParams.get('code') ?? '';
    const tokenReply = await fetch(`${dash.url}/login/oauth/access_token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        code,
        redirect_uri: stand.redirectUri,
      }),
    });
    const { access_token: token } = (await tokenReply.json()) as { access_token: string };
    expect(await currentUser({ apiUrl: dash.url, fetch }, token)).toMatchObject({ login: 'kim' });

    const records = githubRecords(createOctokitClient({ token: INSTALLATION_TOKEN, apiUrl: dash.url }));
    const tree = await records.tree(R, headSha);
    const blob = tree.entries.find((e) => e.path === 'migrations/002_orders.sql')!;
    expect(await records.blob(R, blob.sha)).toBe('create table orders (id int);\n');
    expect([...(await records.compare(R, baseSha, headSha)).keys()]).toEqual(['migrations/002_orders.sql']);
    expect(await records.permission(R, 'kim')).toBe('maintain');

    const person = githubCommits(restClient(dash.url, token));
    const head = await person.branchHead(R, 'feature/orders');
    expect(head).toBe(headSha);
    const sha = await person.commitFiles(R, {
      branch: 'feature/orders',
      parent: head,
      message: 'Approve the gate',
      files: [{ path: '.consort/approvals/7.json', content: '{"by":"kim"}\n' }],
    });
    expect(git('rev-parse', 'refs/heads/feature/orders')).toBe(sha);
    await person.comment(R, 7, 'Approved from the dashboard.');

    expect(dash.unexpected).toEqual([]);
    expect(exchanges(dash).flatMap((e) => checker.check(e))).toEqual([]);
  });

  it("every field Consort's parsers read from an answer is one the description has", () => {
    const parsers: [string, Parameters<OpenApiChecker['unknownReads']>[0]][] = [
      ['GET /repos/{owner}/{repo}/issues/{issue_number}/comments', A.Comments],
      ['POST /repos/{owner}/{repo}/issues/{issue_number}/comments', A.Created],
      ['GET /orgs/{org}/teams/{team_slug}/memberships/{username}', A.Membership],
      ['GET /repos/{owner}/{repo}/pulls/{pull_number}', A.Pull],
      ['POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews', A.Created],
      ['POST /repos/{owner}/{repo}/check-runs', A.Id],
      ['GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews', A.Reviews],
      ['GET /repos/{owner}/{repo}/commits/{ref}/check-runs', A.CheckRuns],
      ['GET /repos/{owner}/{repo}/check-runs/{check_run_id}', A.CheckRun],
      ['GET /repos/{owner}/{repo}/git/commits/{commit_sha}', A.GitCommit],
      ['GET /repos/{owner}/{repo}/git/trees/{tree_sha}', A.GitTree],
      ['GET /repos/{owner}/{repo}/compare/{basehead}', A.Compare],
      ['GET /repos/{owner}/{repo}/collaborators/{username}/permission', PermissionReply],
      ...Object.entries(DASHBOARD_PARSERS),
      ['GET /user', UserReply],
    ];
    expect(parsers.length).toBeGreaterThanOrEqual(21);
    expect(
      parsers.flatMap(([route, parser]) => checker.unknownReads(parser, checker.responseSchema(route), route)),
    ).toEqual([]);
    // What it is for: a misspelt field reads as absent from every real answer (`merge_base_commit`).
    expect(
      checker.unknownReads(
        z.object({ merge_base: z.object({ sha: z.string() }).optional() }),
        checker.responseSchema('GET /repos/{owner}/{repo}/compare/{basehead}'),
      ),
    ).toEqual(['(answer).merge_base: not in the description']);
  });

  it('every route the sources call was exercised above', () => {
    const all = [...exchanges(app), ...exchanges(dash)];
    const called = routesCalled();
    expect(called.length).toBeGreaterThanOrEqual(20);
    expect(called.filter((route) => !all.some((e) => isCallOf(route, e)))).toEqual([]);
  });

  it('the checker catches what it is for: an unknown route, a bad enum, a missing field, a null where none is allowed, a misspelt body field', () => {
    const at = `/repos/${OWNER}/${REPO}`;
    expect(
      checker.check({ method: 'GET', path: `${at}/check-runs`, query: '', status: 404, body: '', response: {} }),
    ).toEqual([`GET ${at}/check-runs: no such operation in the description`]);
    expect(
      checker.check({
        method: 'PATCH',
        path: `${at}/check-runs/12`,
        query: '',
        status: 200,
        body: { conclusion: 'passed' },
        response: undefined,
      }),
    ).toEqual([expect.stringContaining('"passed" is not one of')]);
    expect(
      checker.check({
        method: 'POST',
        path: `${at}/issues/7/comments`,
        query: '',
        status: 201,
        handledStatus: 201,
        body: { body: 'hi' },
        response: { id: 1, user: null },
      }),
    ).toEqual(expect.arrayContaining([expect.stringContaining('missing required "html_url"')]));
    // An issue comment's user may be null (a deleted account); a check run's id may not.
    expect(checker.validate({ $ref: '#/components/schemas/nullable-simple-user' }, null, 'user')).toEqual([]);
    expect(checker.validate({ $ref: '#/components/schemas/check-run' }, { id: null }, 'run')).toEqual(
      expect.arrayContaining(['run.id: expected an integer, got null']),
    );
    expect(
      checker.check({
        method: 'GET',
        path: `${at}/issues/7/comments`,
        query: 'page=first&color=red',
        status: 200,
        body: '',
        response: undefined,
      }),
    ).toEqual([
      `GET ${at}/issues/7/comments ?page: expected an integer, got "first"`,
      `GET ${at}/issues/7/comments: undocumented query parameter "color"`,
    ]);
    // Octokit's parameters take any extra key (RequestParameters), and GitHub ignores an unknown one.
    expect(
      checker.check({
        method: 'PATCH',
        path: `${at}/check-runs/12`,
        query: '',
        status: 200,
        body: {
          status: 'completed',
          conclusion: 'success',
          detail_url: 'https://x',
          output: { title: 't', summary: 's', annotation: [] },
        },
        response: undefined,
      }),
    ).toEqual([
      `PATCH ${at}/check-runs/12 request: property "detail_url" is not in the description`,
      `PATCH ${at}/check-runs/12 request.output: property "annotation" is not in the description`,
    ]);
  });
  it("the check-run stand-in refuses what GitHub's description refuses, so a careless request fails here too", async () => {
    const send = async (method: string, path: string, body: unknown) =>
      (
        await fetch(`${app.url}/repos/${OWNER}/${REPO}${path}`, {
          method,
          headers: { authorization: `token ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).status;
    const output = { title: 'T', summary: 'S' };
    const created = await fetch(`${app.url}/repos/${OWNER}/${REPO}/check-runs`, {
      method: 'POST',
      headers: { authorization: `token ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'consort', head_sha: headSha, status: 'in_progress', output }),
    });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { id: number }).id;
    const annotation = { path: 'a.sql', start_line: 1, end_line: 2, annotation_level: 'failure', message: 'm' };
    const refused: [string, string, unknown][] = [
      ['POST', '/check-runs', { head_sha: headSha }], // name is required
      ['POST', '/check-runs', { name: 'consort' }], // head_sha is required
      ['POST', '/check-runs', { name: 'consort', head_sha: headSha, status: 'running' }],
      ['PATCH', `/check-runs/${id}`, { status: 'completed' }], // completed needs a conclusion
      ['PATCH', `/check-runs/${id}`, { conclusion: 'passed' }],
      ['PATCH', `/check-runs/${id}`, { conclusion: 'success', output: { title: 'T' } }], // summary is required
      ['PATCH', `/check-runs/${id}`, { conclusion: 'failure', output: { ...output, annotations: [{ path: 'a' }] } }],
      [
        'PATCH',
        `/check-runs/${id}`,
        { conclusion: 'failure', output: { ...output, annotations: [{ ...annotation, annotation_level: 'error' }] } },
      ],
      [
        'PATCH',
        `/check-runs/${id}`,
        { conclusion: 'failure', output: { ...output, annotations: [{ ...annotation, start_column: 1 }] } },
      ],
    ];
    const statuses = [];
    for (const [method, path, body] of refused) statuses.push(await send(method, path, body));
    expect(statuses).toEqual(refused.map(() => 422));
    // Each of them breaks the description too: the stand-in refuses no request GitHub would take.
    const descriptionProblems = refused.map(([method, path, body]) =>
      checker.check({
        method,
        path: `/repos/${OWNER}/${REPO}${path}`,
        query: '',
        status: 0,
        body,
        response: undefined,
      }),
    );
    // All but the last: columns across lines are refused by GitHub's prose ("only when start_line and
    // end_line are the same"), not its schema.
    expect(descriptionProblems.map((p) => p.length > 0)).toEqual(refused.map((_, i) => i < refused.length - 1));
    expect(
      await send('PATCH', `/check-runs/${id}`, {
        conclusion: 'success',
        output: { ...output, annotations: [annotation] },
      }),
    ).toBe(200);
  });
});
