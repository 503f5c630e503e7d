/**
 * The dashboard's REST client (a person's OAuth token) takes the adapter's requests as Octokit
 * does: route parameters in the path, the rest in the query or the JSON body, Octokit's own
 * options (the creates' `request: { retries: 0 }`) sent nowhere. The fetch is a local stand-in.
 */
import { restClient } from '../../app/dashboard/rest-client.js';

function recording() {
  const sent: { url: string; method: string; body: unknown }[] = [];
  const fetcher = (async (url: URL | string, init?: RequestInit) => {
    sent.push({
      url: String(url),
      method: init?.method ?? 'GET',
      body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
    });
    return new Response(JSON.stringify({ id: 1 }), { status: 201, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  return { sent, client: restClient('https://api.example.test/', 'tok', fetcher) };
}

it("sends no Octokit option in a POST's body", async () => {
  const { sent, client } = recording();
  await client.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
    owner: 'o',
    repo: 'r',
    issue_number: 7,
    body: 'Approved.',
    request: { retries: 0 },
    headers: { 'x-extra': '1' },
    mediaType: { format: 'raw' },
  });
  expect(sent).toEqual([
    { url: 'https://api.example.test/repos/o/r/issues/7/comments', method: 'POST', body: { body: 'Approved.' } },
  ]);
});

it("sends no Octokit option in a GET's query", async () => {
  const { sent, client } = recording();
  await client.request('GET /repos/{owner}/{repo}/commits/{ref}/check-runs', {
    owner: 'o',
    repo: 'r',
    ref: 'abc',
    check_name: 'Consort / database',
    request: { retries: 0 },
  });
  expect(sent.map((s) => s.url)).toEqual([
    'https://api.example.test/repos/o/r/commits/abc/check-runs?check_name=Consort+%2F+database',
  ]);
});
