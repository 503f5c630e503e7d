/**
 * Creates GitHub may have carried out before failing (src/github/create-once.ts): the stand-in makes
 * the comment, review or check run and answers 502 all the same (`failAfterNext`), as GitHub's
 * frontend does when it gives up on a request the API finished. The adapter must end with one
 * object, not a second from a retry — on the Action's client (src/github/client.ts) and on the App's
 * (Probot's Octokit with app/octokit.ts' policy), whose retry plugins repeat any 5xx by default.
 */
import type { Endpoints, RequestParameters } from '@octokit/types';
import { ProbotOctokit } from 'probot';
import { consortOctokit, DEFAULT_OCTOKIT_POLICY } from '../../app/octokit.js';
import { appGitHub } from '../../app/github.js';
import { createOctokitClient } from '../../src/github/client.js';
import { octokitGitHub, type Route } from '../../src/github/octokit.js';
import type { GitHubPort } from '../../src/ports/github.js';
import { installAppRoutes, TOKEN, type AppRoutes } from '../app/helpers/app-routes.js';
import { startFakeGitHub, postedText, type FakeGitHub } from '../helpers/fake-github.js';

const OWNER = 'octo-org';
const REPO = 'octo-repo';
const R = { owner: OWNER, repo: REPO };
const HEAD = '6dcb09b5b57875f334f61aebed695e2e4193db5e';

let fake: FakeGitHub;
let routes: AppRoutes;
let action: GitHubPort;

beforeAll(async () => {
  fake = await startFakeGitHub(OWNER, REPO);
  routes = installAppRoutes(fake, OWNER, REPO);
  fake.setPull({
    number: 7,
    state: 'open',
    title: 'Add orders table',
    body: null,
    head: { ref: 'feature/orders', sha: HEAD, repo: `${OWNER}/${REPO}` },
    base: { ref: 'main', sha: 'c5b97d5ae6c19d5c5df71a34c7fbeeda2479ccbc' },
  });
  action = octokitGitHub(createOctokitClient({ token: TOKEN, apiUrl: fake.url, writePacing: 'none' }), {
    retryAfterBaseMs: 1,
  });
});

afterAll(async () => {
  await fake?.close();
});

beforeEach(() => {
  fake.requests.length = 0;
  fake.comments.length = 0;
  fake.reviews.length = 0;
  routes.checkRuns.clear();
  fake.failNext = 0;
  fake.failAfterNext = 0;
  fake.failOn = null;
});

afterEach(() => {
  expect(fake.unexpected).toEqual([]);
});

/** The Action's adapter, with `before` run before each of its reads (what GitHub got meanwhile). */
function lookingAfter(before: () => void): GitHubPort {
  const client = createOctokitClient({ token: TOKEN, apiUrl: fake.url, writePacing: 'none' });
  return octokitGitHub(
    {
      request: <R extends Route>(route: R, parameters: Endpoints[R]['parameters'] & RequestParameters) => {
        if (route.startsWith('GET ')) before();
        return client.request(route, parameters);
      },
    },
    { retryAfterBaseMs: 1 },
  );
}

const calls = () => fake.requests.map((r) => `${r.method} ${r.path.replace(/\?.*/, '')} ${r.status ?? '-'}`);
const at = `/repos/${OWNER}/${REPO}`;

describe('a create GitHub made before answering 502 is not made twice (the Action’s client)', () => {
  it('an issue comment: looked for among the comments since the failure by its post marker, found, not posted again', async () => {
    fake.failAfterNext = 1;
    const c = await action.createComment(R, 7, '@mona, checking `6dcb09b`.');
    expect(fake.comments.map((x) => [x.id, postedText(x.body)])).toEqual([[c.id, '@mona, checking `6dcb09b`.']]);
    expect(c.url).toBe(`https://github.com/${OWNER}/${REPO}/pull/7#issuecomment-${c.id}`);
    expect(calls()).toEqual([`POST ${at}/issues/7/comments 502`, `GET ${at}/issues/7/comments 200`]);
    // Only the comments of the last minutes are asked for.
    expect(new URL(fake.requests[1]!.path, fake.url).searchParams.get('since')).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('a review: found among the pull request’s reviews by its commit and post marker', async () => {
    fake.failAfterNext = 1;
    const r = await action.review(R, 7, HEAD, 'Turn 3: made it pass.');
    expect(fake.reviews.map((x) => ({ ...x, body: postedText(x.body) }))).toEqual([
      { id: r.id, pr: 7, commitId: HEAD, body: 'Turn 3: made it pass.', event: 'COMMENT' },
    ]);
    expect(calls()).toEqual([`POST ${at}/pulls/7/reviews 502`, `GET ${at}/pulls/7/reviews 200`]);
  });

  it('a check run: found by its commit, name and external_id, and given the rest of its annotations', async () => {
    fake.failAfterNext = 1;
    const annotations = Array.from({ length: 60 }, (_, i) => ({
      path: 'migrations/002_orders.sql',
      start_line: i + 1,
      end_line: i + 1,
      annotation_level: 'warning' as const,
      message: `finding ${i}`,
    }));
    const id = await action.createCheckRun(R, {
      name: 'Consort',
      headSha: HEAD,
      externalId: '42',
      output: { title: 'Checking', summary: 'Checking the migrations', annotations },
    });
    expect([...routes.checkRuns.keys()]).toEqual([id]);
    expect(routes.checkRuns.get(id)!.output.annotations?.map((a) => a.message)).toEqual(
      annotations.map((a) => a.message),
    );
    expect(calls()).toEqual([
      `POST ${at}/check-runs 502`,
      `GET ${at}/commits/${HEAD}/check-runs 200`,
      // The run found may hold more than the first batch: its count is read before the rest is added.
      `GET ${at}/check-runs/${id} 200`,
      `PATCH ${at}/check-runs/${id} 200`,
    ]);
    expect(Object.fromEntries(new URL(fake.requests[1]!.path, fake.url).searchParams)).toEqual({
      check_name: 'Consort',
      filter: 'all',
      per_page: '100',
      page: '1',
    });
  });

  it('a completion with annotations GitHub made before answering 502 is not sent again (GitHub appends annotations)', async () => {
    const id = await action.createCheckRun(R, {
      name: 'Consort',
      headSha: HEAD,
      externalId: '44',
      output: { title: 'Checking', summary: 'Checking' },
    });
    const annotation = {
      path: 'migrations/002_orders.sql',
      start_line: 1,
      end_line: 1,
      annotation_level: 'failure' as const,
      message: 'adding a NOT NULL column',
    };
    const result = {
      conclusion: 'failure' as const,
      output: { title: 'Failed', summary: 'One', annotations: [annotation] },
    };
    fake.requests.length = 0;
    fake.failAfterNext = 1;
    await action.completeCheckRun(R, id, result);
    expect(routes.checkRuns.get(id)).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(routes.checkRuns.get(id)!.output.annotations).toHaveLength(1);
    expect(calls()).toEqual([`PATCH ${at}/check-runs/${id} 502`, `GET ${at}/check-runs/${id} 200`]);

    // A 502 before GitHub acted: the run is not completed, so the completion is sent again — once.
    const other = await action.createCheckRun(R, {
      name: 'Consort',
      headSha: HEAD,
      externalId: '45',
      output: { title: 'Checking', summary: 'Checking' },
    });
    fake.requests.length = 0;
    fake.failNext = 1;
    await action.completeCheckRun(R, other, result);
    expect(routes.checkRuns.get(other)!.output.annotations).toHaveLength(1);
    expect(calls()).toEqual([
      `PATCH ${at}/check-runs/${other} 502`,
      `GET ${at}/check-runs/${other} 200`,
      `PATCH ${at}/check-runs/${other} 200`,
    ]);
  });

  it('a 502 before anything was made: looked for, not found, posted again — one comment', async () => {
    fake.failNext = 1;
    const c = await action.createComment(R, 7, 'Consort: passed');
    expect(fake.comments.map((x) => x.id)).toEqual([c.id]);
    expect(calls()).toEqual([
      `POST ${at}/issues/7/comments 502`,
      `GET ${at}/issues/7/comments 200`,
      `POST ${at}/issues/7/comments 201`,
    ]);
  });

  it('an older comment with the same body is not taken for the one the failed attempt may have made', async () => {
    const old = fake.seed({
      issue: 7,
      body: '@mona, retrying.',
      user: { login: 'github-actions[bot]', id: 1, type: 'Bot' },
    });
    // An hour before: outside the minutes a failed create's comment may be dated.
    old.created_at = old.updated_at = '2025-05-04T09:00:00Z';
    fake.failNext = 1;
    const c = await action.createComment(R, 7, '@mona, retrying.');
    expect(c.id).not.toBe(old.id);
    expect(fake.comments.map((x) => x.id)).toEqual([old.id, c.id]);
  });

  it('a comment with the same text by someone else since shortly before is not taken for ours: ours is posted', async () => {
    fake.seed({ issue: 7, body: 'Consort: passed', user: { login: 'mona', id: 2, type: 'User' } });
    fake.seed({ issue: 7, body: 'Consort: passed', user: { login: 'other-bot[bot]', id: 3, type: 'Bot' } });
    fake.failNext = 1;
    const c = await action.createComment(R, 7, 'Consort: passed');
    expect(fake.comments.map((x) => x.user.login)).toEqual(['mona', 'other-bot[bot]', 'github-actions[bot]']);
    expect(fake.comments.at(-1)!.id).toBe(c.id);
    expect(postedText(fake.comments.at(-1)!.body)).toBe('Consort: passed');
    expect(calls()).toEqual([
      `POST ${at}/issues/7/comments 502`,
      `GET ${at}/issues/7/comments 200`,
      `POST ${at}/issues/7/comments 201`,
    ]);
  });

  it('two posts of ours with the same text are two comments, even when the second fails before GitHub acts', async () => {
    const first = await action.createComment(R, 7, '@mona, checking `6dcb09b`.');
    fake.requests.length = 0;
    fake.failNext = 1;
    const second = await action.createComment(R, 7, '@mona, checking `6dcb09b`.');
    expect(second.id).not.toBe(first.id);
    expect(fake.comments.map((x) => [x.id, postedText(x.body)])).toEqual([
      [first.id, '@mona, checking `6dcb09b`.'],
      [second.id, '@mona, checking `6dcb09b`.'],
    ]);
    // Each post has a marker of its own.
    expect(fake.comments[0]!.body).not.toBe(fake.comments[1]!.body);
  });

  it('ours, made before a 502, is found by its marker though the same text was posted since by someone else', async () => {
    // Between the failed POST and the look-up, a person posts the same words (then another account reviews so).
    let meanwhile = () =>
      void fake.seed({ issue: 7, body: 'Consort: passed', user: { login: 'mona', id: 2, type: 'User' } });
    const gh = lookingAfter(() => meanwhile());
    fake.failAfterNext = 1;
    const c = await gh.createComment(R, 7, 'Consort: passed');
    expect(fake.comments.map((x) => x.user.login)).toEqual(['github-actions[bot]', 'mona']);
    expect(postedText(fake.comments[0]!.body)).toBe('Consort: passed');
    expect(c.id).toBe(fake.comments[0]!.id);
    expect(calls()).toEqual([`POST ${at}/issues/7/comments 502`, `GET ${at}/issues/7/comments 200`]);

    fake.requests.length = 0;
    meanwhile = () =>
      void fake.reviews.push({ id: 43, pr: 7, commitId: HEAD, body: 'Turn 4: refactored.', event: 'COMMENT' });
    fake.failAfterNext = 1;
    const r = await gh.review(R, 7, HEAD, 'Turn 4: refactored.');
    expect(fake.reviews.map((x) => x.id)).toEqual([r.id, 43]);
    expect(calls()).toEqual([`POST ${at}/pulls/7/reviews 502`, `GET ${at}/pulls/7/reviews 200`]);
  });

  it('a refusal (4xx) is not looked into or repeated', async () => {
    fake.forbidCreate = true;
    try {
      await expect(action.createComment(R, 7, 'hello')).rejects.toMatchObject({ status: 403 });
    } finally {
      fake.forbidCreate = false;
    }
    expect(calls()).toEqual([`POST ${at}/issues/7/comments 403`]);
  });
});

describe('annotations past the first 50, which GitHub appends: a batch it applied before answering 502 is not sent again', () => {
  const findings = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      path: 'migrations/002_orders.sql',
      start_line: i + 1,
      end_line: i + 1,
      annotation_level: 'warning' as const,
      message: `finding ${i}`,
    }));
  const PATCH = /^PATCH \/repos\/[^/]+\/[^/]+\/check-runs\/\d+$/;
  const messages = (id: number) => routes.checkRuns.get(id)!.output.annotations?.map((a) => a.message);

  it('a create’s second batch, applied and answered 502: the run’s count shows it, the third follows', async () => {
    fake.failOn = { request: PATCH, acted: true };
    const annotations = findings(120);
    const id = await action.createCheckRun(R, {
      name: 'Consort',
      headSha: HEAD,
      externalId: '50',
      output: { title: 'Checking', summary: 'Checking', annotations },
    });
    expect(messages(id)).toEqual(annotations.map((a) => a.message));
    expect(calls()).toEqual([
      `POST ${at}/check-runs 201`,
      `PATCH ${at}/check-runs/${id} 502`,
      `GET ${at}/check-runs/${id} 200`,
      `PATCH ${at}/check-runs/${id} 200`,
    ]);
  });

  it('a create’s second batch answered 502 before GitHub acted: the count shows it missing, it is sent again once', async () => {
    fake.failOn = { request: PATCH, acted: false };
    const annotations = findings(120);
    const id = await action.createCheckRun(R, {
      name: 'Consort',
      headSha: HEAD,
      externalId: '51',
      output: { title: 'Checking', summary: 'Checking', annotations },
    });
    expect(messages(id)).toEqual(annotations.map((a) => a.message));
    expect(calls()).toEqual([
      `POST ${at}/check-runs 201`,
      `PATCH ${at}/check-runs/${id} 502`,
      `GET ${at}/check-runs/${id} 200`,
      `PATCH ${at}/check-runs/${id} 200`,
      `PATCH ${at}/check-runs/${id} 200`,
    ]);
  });

  it('a completion’s first batch, applied and answered 502, on a run that had annotations already', async () => {
    const before = findings(3);
    const id = await action.createCheckRun(R, {
      name: 'Consort',
      headSha: HEAD,
      externalId: '52',
      output: { title: 'Checking', summary: 'Checking', annotations: before },
    });
    fake.requests.length = 0;
    fake.failOn = { request: PATCH, acted: true };
    const annotations = findings(120);
    await action.completeCheckRun(R, id, {
      conclusion: 'failure',
      output: { title: 'Failed', summary: '120 findings', annotations },
    });
    expect(routes.checkRuns.get(id)).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(messages(id)).toEqual([...before, ...annotations].map((a) => a.message));
    expect(calls()).toEqual([
      `GET ${at}/check-runs/${id} 200`,
      `PATCH ${at}/check-runs/${id} 502`,
      `GET ${at}/check-runs/${id} 200`,
      `PATCH ${at}/check-runs/${id} 200`,
      `PATCH ${at}/check-runs/${id} 200`,
    ]);
  });
});

describe('the App’s client (Probot’s Octokit with its retry plugin on)', () => {
  it('a check run and a comment GitHub made before answering 502 are made once', async () => {
    const log = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };
    const policy = { ...DEFAULT_OCTOKIT_POLICY, retryAfterBaseMs: 1 };
    const Octokit = consortOctokit(log, policy, ProbotOctokit);
    const client = new Octokit({ auth: { token: TOKEN }, baseUrl: fake.url, throttle: { enabled: false } });
    const gh = appGitHub(client, undefined, { retries: policy.retries, retryAfterBaseMs: policy.retryAfterBaseMs });
    fake.failAfterNext = 1;
    const id = await gh.createCheckRun(R, {
      name: 'Consort',
      headSha: HEAD,
      externalId: '43',
      output: { title: 'Checking', summary: 'Checking' },
    });
    fake.failAfterNext = 1;
    const c = await gh.createComment(R, 7, '<!-- consort:app-check -->\nConsort: running');
    expect([...routes.checkRuns.keys()]).toEqual([id]);
    expect(fake.comments.map((x) => x.id)).toEqual([c.id]);
    expect(calls()).toEqual([
      `POST ${at}/check-runs 502`,
      `GET ${at}/commits/${HEAD}/check-runs 200`,
      `POST ${at}/issues/7/comments 502`,
      `GET ${at}/issues/7/comments 200`,
    ]);
  });
});
