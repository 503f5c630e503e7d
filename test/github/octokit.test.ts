/**
 * The GitHubPort's calls (src/github/octokit.ts on the client of src/github/client.ts) against a local stand-in
 * for GitHub's REST API, through the real Octokit with the throttling and retry plugins: the
 * fields read, the requests sent, and how rate limits and server errors are waited out.
 *
 * The plugins' limiters are shared by every Octokit in the process, so writes in one test pace
 * the next; reviews and comments also go through the "notifications" group (≥ 3 s apart). A
 * client with `writePacing: 'none'` has limiters of its own, without the spacing.
 */
import { createOctokitClient } from '../../src/github/client.js';
import { octokitGitHub } from '../../src/github/octokit.js';
import { GitHubApiError, type GitHubPort } from '../../src/ports/github.js';
import { startFakeGitHub, postedText, type FakeGitHub, type RecordedRequest } from '../helpers/fake-github.js';

const OWNER = 'octo-org';
const REPO = 'octo-repo';
const HEAD_SHA = '6dcb09b5b57875f334f61aebed695e2e4193db5e';
const BASE_SHA = 'c5b97d5ae6c19d5c5df71a34c7fbeeda2479ccbc';

let fake: FakeGitHub;
let api: GitHubPort;
const R = { owner: OWNER, repo: REPO };
const msgs: string[] = [];

beforeAll(async () => {
  fake = await startFakeGitHub(OWNER, REPO);
  api = octokitGitHub(createOctokitClient({ token: 'ghs_test', apiUrl: fake.url, onLimit: (m) => msgs.push(m) }));
  fake.setPull({
    number: 7,
    state: 'open',
    title: 'Add orders table',
    body: 'Adds `orders`.',
    head: { ref: 'feature/orders', sha: HEAD_SHA, repo: 'mona/octo-repo' },
    base: { ref: 'main', sha: BASE_SHA },
  });
});

afterAll(async () => {
  await fake?.close();
});

beforeEach(() => {
  fake.requests.length = 0;
  fake.reviews.length = 0;
  fake.statuses.length = 0;
  fake.limitNext = null;
  fake.failNext = 0;
  msgs.length = 0;
});

afterEach(() => {
  expect(fake.unexpected).toEqual([]);
});

const gaps = (rs: RecordedRequest[]) => rs.slice(1).map((r, i) => r.at - rs[i]!.at);
/**
 * The least gap that shows a 1 s pacing: measured where the fake server receives the requests, so a
 * loaded machine's scheduling moves each arrival by up to a few hundred ms (883 ms was seen with six
 * jest workers on two cores); back-to-back requests arrive milliseconds apart.
 */
const PACED_MS = 600;

describe('pull request calls', () => {
  it('review() creates a COMMENT review on the given commit', async () => {
    const r = await api.review(R, 7, HEAD_SHA, 'Turn 1: wrote the failing test.');
    const body = fake.reviews[0]!.body;
    expect(fake.reviews).toEqual([{ id: r.id, pr: 7, commitId: HEAD_SHA, body, event: 'COMMENT' }]);
    expect(postedText(body)).toBe('Turn 1: wrote the failing test.');
    expect(r.url).toBe(`https://github.com/${OWNER}/${REPO}/pull/7#pullrequestreview-${r.id}`);
    expect(fake.requests).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: `/repos/${OWNER}/${REPO}/pulls/7/reviews`,
        authorization: 'token ghs_test',
        body: { commit_id: HEAD_SHA, body, event: 'COMMENT' },
      }),
    ]);
    // GitHub: `body` is "required when using REQUEST_CHANGES or COMMENT"; the stand-in refuses it too.
    // A blank body gets no post marker, which would make it a review that shows nothing.
    await expect(api.review(R, 7, HEAD_SHA, '')).rejects.toMatchObject({ status: 422 });
    expect(fake.reviews).toHaveLength(1);
  });

  it('pull() maps the fields, a deleted fork to a null head repo, and an unknown number to a 404 error', async () => {
    expect(await api.pull(R, 7)).toEqual({
      number: 7,
      state: 'open',
      title: 'Add orders table',
      body: 'Adds `orders`.',
      author: 'octocat',
      head: { ref: 'feature/orders', sha: HEAD_SHA, repo: 'mona/octo-repo' },
      base: { ref: 'main', sha: BASE_SHA, repo: `${OWNER}/${REPO}` },
    });
    fake.setPull({
      number: 8,
      state: 'closed',
      title: 'Gone',
      body: null,
      head: { ref: 'patch-1', sha: 'a'.repeat(40), repo: null },
      base: { ref: 'main', sha: BASE_SHA },
    });
    expect(await api.pull(R, 8)).toEqual({
      number: 8,
      state: 'closed',
      title: 'Gone',
      body: '',
      author: 'octocat',
      head: { ref: 'patch-1', sha: 'a'.repeat(40), repo: null },
      base: { ref: 'main', sha: BASE_SHA, repo: `${OWNER}/${REPO}` },
    });
    const missing = api.pull(R, 99);
    await expect(missing).rejects.toBeInstanceOf(GitHubApiError);
    await expect(missing).rejects.toMatchObject({ status: 404 });
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual(
      [7, 8, 99].map((n) => `GET /repos/${OWNER}/${REPO}/pulls/${n}`),
    );
  });

  it('permission() reads the role (maintain and triage, not the folded permission); an unknown user has none', async () => {
    fake.permissions
      .set('writer', 'write')
      .set('keeper', 'maintain')
      .set('reader', 'read')
      .set('triager', 'triage')
      .set('boss', 'admin');
    expect(await api.permission(R, 'writer')).toBe('write');
    expect(await api.permission(R, 'keeper')).toBe('maintain');
    expect(await api.permission(R, 'reader')).toBe('read');
    expect(await api.permission(R, 'triager')).toBe('triage');
    expect(await api.permission(R, 'boss')).toBe('admin');
    expect(await api.permission(R, 'stranger')).toBe('none');
    expect(fake.requests.map((r) => r.path)).toEqual(
      ['writer', 'keeper', 'reader', 'triager', 'boss', 'stranger'].map(
        (u) => `/repos/${OWNER}/${REPO}/collaborators/${u}/permission`,
      ),
    );
  });

  it('status() sends target_url and clips the description to 140 characters', async () => {
    await api.setStatus(R, HEAD_SHA, {
      context: 'consort/tdd',
      state: 'pending',
      description: 'x'.repeat(200),
      targetUrl: 'https://github.com/octo-org/octo-repo/actions/runs/1',
    });
    expect(fake.statuses).toEqual([
      {
        sha: HEAD_SHA,
        state: 'pending',
        context: 'consort/tdd',
        description: 'x'.repeat(140),
        targetUrl: 'https://github.com/octo-org/octo-repo/actions/runs/1',
      },
    ]);
    expect(fake.requests).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: `/repos/${OWNER}/${REPO}/statuses/${HEAD_SHA}`,
        body: {
          state: 'pending',
          context: 'consort/tdd',
          description: 'x'.repeat(140),
          target_url: 'https://github.com/octo-org/octo-repo/actions/runs/1',
        },
      }),
    ]);
  });

  it('consecutive writes are paced at least a second apart (and target_url is left out when not given)', async () => {
    for (const state of ['pending', 'failure', 'success'] as const)
      await api.setStatus(R, HEAD_SHA, { context: 'consort/gate', state, description: state });
    expect(fake.statuses.map((s) => [s.state, s.targetUrl])).toEqual([
      ['pending', null],
      ['failure', null],
      ['success', null],
    ]);
    expect(fake.requests.map((r) => r.body)).toEqual(
      ['pending', 'failure', 'success'].map((state) => ({ state, context: 'consort/gate', description: state })),
    );
    expect(fake.requests).toHaveLength(3);
    for (const gap of gaps(fake.requests)) expect(gap).toBeGreaterThanOrEqual(PACED_MS);
  });

  it('comment() creates an issue comment and react() reacts to it', async () => {
    const c = await api.createComment(R, 7, 'On it.');
    expect(c.url).toBe(`https://github.com/${OWNER}/${REPO}/pull/7#issuecomment-${c.id}`);
    expect(fake.comments).toEqual([expect.objectContaining({ id: c.id, issue: 7 })]);
    const body = fake.comments[0]!.body;
    expect(postedText(body)).toBe('On it.');
    await api.react(R, c.id, 'eyes');
    await api.react(R, c.id, '+1');
    expect(fake.reactions).toEqual([
      { commentId: c.id, content: 'eyes' },
      { commentId: c.id, content: '+1' },
    ]);
    expect(fake.requests.map((r) => `${r.method} ${r.path} ${JSON.stringify(r.body)}`)).toEqual([
      `POST /repos/${OWNER}/${REPO}/issues/7/comments ${JSON.stringify({ body })}`,
      `POST /repos/${OWNER}/${REPO}/issues/comments/${c.id}/reactions {"content":"eyes"}`,
      `POST /repos/${OWNER}/${REPO}/issues/comments/${c.id}/reactions {"content":"+1"}`,
    ]);
  });

  it("bodies past GitHub's 65,536 characters are cut to fit, saying so, instead of refused (comments, edits, reviews)", async () => {
    const unpaced = octokitGitHub(createOctokitClient({ token: 'ghs_test', apiUrl: fake.url, writePacing: 'none' }));
    // A command's reply that quotes a comment at GitHub's own limit, emoji past it (two UTF-16 units each).
    const long = `<!-- marker -->\n> /consort reject ${'x'.repeat(65_536)}`;
    const c = await unpaced.createComment(R, 7, long);
    await unpaced.updateComment(R, c.id, '😀'.repeat(70_000));
    await unpaced.review(R, 7, HEAD_SHA, `Turn.\n\n${'y'.repeat(80_000)}`);
    const stored = fake.comments.find((x) => x.id === c.id)!.body;
    const review = fake.reviews.at(-1)!.body;
    for (const body of [stored, review]) expect(body.length).toBeLessThanOrEqual(65_536);
    // An edit keeps no post marker; a created review's is kept whole after the cut text.
    expect(stored).toMatch(/cut to fit GitHub's limit\._$/);
    expect(postedText(review)).toMatch(/cut to fit GitHub's limit\._$/);
    expect(review.length).toBe(65_536);
    expect(review.startsWith('Turn.')).toBe(true);
    expect(stored.startsWith('😀')).toBe(true);
    expect(fake.requests.map((r) => r.status)).toEqual([201, 200, 200]);
    const short = await unpaced.createComment(R, 7, 'Short.');
    expect(postedText(fake.comments.find((x) => x.id === short.id)!.body)).toBe('Short.');
  });

  it('a 502 on a read is retried and the call succeeds', async () => {
    // A fresh client: the retry plugin keeps its retry count on the client's shared request
    // defaults, so after any earlier failed request (the 404s above) its first backoff is 4 s, not 1 s.
    const fresh = octokitGitHub(
      createOctokitClient({ token: 'ghs_test', apiUrl: fake.url, onLimit: (m) => msgs.push(m) }),
    );
    fake.failNext = 1;
    expect(await fresh.pull(R, 7)).toMatchObject({ number: 7, title: 'Add orders table' });
    expect(fake.failNext).toBe(0);
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `GET /repos/${OWNER}/${REPO}/pulls/7`,
      `GET /repos/${OWNER}/${REPO}/pulls/7`,
    ]);
    expect(gaps(fake.requests)[0]).toBeGreaterThanOrEqual(PACED_MS); // the retry plugin's first backoff: 1 s
    expect(msgs).toEqual([]);
  });

  it('a secondary rate limit (403, retry-after: 1) on a review is waited out and retried; the review is made once', async () => {
    fake.limitNext = { status: 403, retryAfter: 1, count: 1 };
    const r = await api.review(R, 7, HEAD_SHA, 'Turn 2: made it pass.');
    expect(fake.limitNext).toEqual({ status: 403, retryAfter: 1, count: 0 });
    expect(fake.reviews.map((v) => ({ ...v, body: postedText(v.body) }))).toEqual([
      { id: r.id, pr: 7, commitId: HEAD_SHA, body: 'Turn 2: made it pass.', event: 'COMMENT' },
    ]);
    expect(fake.requests.map((q) => `${q.method} ${q.path}`)).toEqual(
      [1, 2].map(() => `POST /repos/${OWNER}/${REPO}/pulls/7/reviews`),
    );
    // retry-after says 1 s; reviews also go through the plugin's notification group (3 s apart).
    expect(gaps(fake.requests)[0]).toBeGreaterThanOrEqual(PACED_MS);
    expect(msgs).toEqual([
      'GitHub secondary rate limit on POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews: waiting 1 s (retry 1 of 3)',
    ]);
  });

  it('a secondary rate limit answered 429 (retry-after: 1) is waited out and retried the same way', async () => {
    fake.limitNext = { status: 429, retryAfter: 1, count: 1 };
    await api.setStatus(R, HEAD_SHA, { context: 'consort/gate', state: 'success', description: 'limited' });
    expect(fake.limitNext).toEqual({ status: 429, retryAfter: 1, count: 0 });
    expect(fake.statuses).toEqual([expect.objectContaining({ state: 'success', description: 'limited' })]);
    expect(fake.requests.map((q) => q.method)).toEqual(['POST', 'POST']);
    expect(gaps(fake.requests)[0]).toBeGreaterThanOrEqual(PACED_MS);
    expect(msgs).toEqual([
      'GitHub secondary rate limit on POST /repos/{owner}/{repo}/statuses/{sha}: waiting 1 s (retry 1 of 3)',
    ]);
  });

  it("writePacing 'none': writes go one at a time in order without GitHub's spacing, and a rate limit is still waited out", async () => {
    const unpaced = octokitGitHub(
      createOctokitClient({ token: 'ghs_test', apiUrl: fake.url, onLimit: (m) => msgs.push(m), writePacing: 'none' }),
    );
    // Three reviews: GitHub's spacing puts them ≥ 3 s apart (the notifications group), 6 s in all.
    const started = Date.now();
    await Promise.all([1, 2, 3].map((n) => unpaced.review(R, 7, HEAD_SHA, `Turn ${n}.`)));
    expect(Date.now() - started).toBeLessThan(3000);
    expect(fake.reviews.map((v) => postedText(v.body))).toEqual(['Turn 1.', 'Turn 2.', 'Turn 3.']);

    fake.requests.length = 0;
    fake.limitNext = { status: 429, retryAfter: 1, count: 1 };
    await unpaced.setStatus(R, HEAD_SHA, { context: 'consort/gate', state: 'success', description: 'limited' });
    expect(fake.requests.map((q) => q.method)).toEqual(['POST', 'POST']);
    expect(gaps(fake.requests)[0]).toBeGreaterThanOrEqual(PACED_MS);
    expect(msgs).toEqual([
      'GitHub secondary rate limit on POST /repos/{owner}/{repo}/statuses/{sha}: waiting 1 s (retry 1 of 3)',
    ]);
  });

  it('gives up with a 403 GitHubApiError when the first try and all 3 retries hit the limit', async () => {
    fake.limitNext = { status: 403, retryAfter: 1, count: 5 };
    const call = api.setStatus(R, HEAD_SHA, { context: 'consort/gate', state: 'success', description: 'done' });
    await expect(call).rejects.toBeInstanceOf(GitHubApiError);
    await expect(call).rejects.toMatchObject({ status: 403, message: expect.stringContaining('secondary rate limit') });
    // onSecondaryRateLimit gets retryCount 0, 1, 2 (→ retry) and 3 (→ false, give up): 4 attempts,
    // each after the 1 s retry-after; a 403 is not retried again by the retry plugin.
    expect(fake.limitNext).toMatchObject({ count: 1 });
    expect(fake.requests.map((q) => q.method)).toEqual(['POST', 'POST', 'POST', 'POST']);
    for (const gap of gaps(fake.requests)) expect(gap).toBeGreaterThanOrEqual(PACED_MS);
    expect(fake.statuses).toEqual([]);
    const prefix = 'GitHub secondary rate limit on POST /repos/{owner}/{repo}/statuses/{sha}: ';
    expect(msgs).toEqual([
      ...[1, 2, 3].map((n) => `${prefix}waiting 1 s (retry ${n} of 3)`),
      `${prefix}giving up after 3 retries`,
    ]);
  });
});
