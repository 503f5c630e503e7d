/**
 * The webhook handlers and the HTTP edge, without a database: recorded payloads through Probot's
 * `receive()` reach the intake only when they should, and the server refuses unsigned or
 * wrongly signed webhooks before any handler runs.
 */
import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import type http from 'node:http';
import { consortApp } from '../../app/index.js';
import { closeServer, createAppServer, listen } from '../../app/http.js';
import type { Intake, IntakeOutcome, WebhookEvent } from '../../app/intake.js';
import { forbidNetwork, githubLeftovers, restoreNetwork, testProbot, WEBHOOK_SECRET } from './helpers/github.js';
import {
  checkRunPayload,
  checkSuitePayload,
  commentPayload,
  delivery,
  example,
  installationPayload,
  mergeGroupPayload,
  pullRequestPayload,
  type PullJson,
} from './helpers/payloads.js';

type Call = { method: keyof Intake; event: WebhookEvent };

function stubIntake(): { intake: Intake; calls: Call[] } {
  const calls: Call[] = [];
  const record =
    (method: keyof Intake) =>
    async (event: WebhookEvent): Promise<IntakeOutcome> => {
      calls.push({ method, event });
      return { kind: 'ignored', reason: 'stub' };
    };
  return {
    intake: {
      pullRequest: record('pullRequest'),
      mergeGroup: record('mergeGroup'),
      checkRunRerequested: record('checkRunRerequested'),
      checkSuiteRerequested: record('checkSuiteRerequested'),
      comment: record('comment'),
      installationRemoved: record('installationRemoved'),
    },
    calls,
  };
}

const SHA = 'ec26c3e57ca3a959ca5aad62de7213c562f8c821';
const BASE = 'f95f852bd8fca8fcc58a9a2d6c842781e32a215e';

beforeAll(forbidNetwork);
afterAll(restoreNetwork);
afterEach(() => {
  // The handlers make no GitHub call at all: nothing expected, nothing unexpected.
  expect(githubLeftovers()).toEqual({ unexpected: [], unused: [] });
});

async function appWith() {
  const stub = stubIntake();
  const probot = testProbot();
  await probot.load(consortApp(stub.intake));
  return { probot, ...stub };
}

describe('handlers hand off to the intake, after their guard clauses', () => {
  it.each(['opened', 'synchronize', 'reopened', 'edited', 'closed'] as const)('pull_request.%s', async (action) => {
    const { probot, calls } = await appWith();
    await probot.receive(
      delivery('pull_request', `d-${action}`, pullRequestPayload({ action, number: 2, head: SHA, base: BASE })),
    );
    expect(calls).toEqual([
      { method: 'pullRequest', event: expect.objectContaining({ id: `d-${action}`, name: 'pull_request' }) },
    ]);
  });

  it('ignores pull_request actions that do not change code (labeled)', async () => {
    const { probot, calls } = await appWith();
    await probot.receive(
      delivery('pull_request', 'd-label', pullRequestPayload({ action: 'labeled', number: 2, head: SHA, base: BASE })),
    );
    expect(calls).toEqual([]);
  });

  it('ignores deliveries without an installation', async () => {
    const { probot, calls } = await appWith();
    const payload = example<PullJson>('pull_request', 'opened');
    expect(payload.installation).toBeUndefined(); // recorded that way
    await probot.receive(delivery('pull_request', 'd-noinst', payload));
    expect(calls).toEqual([]);
  });

  it('merge_group.checks_requested, check_run.rerequested and check_suite.rerequested ("Re-run all checks")', async () => {
    const { probot, calls } = await appWith();
    await probot.receive(delivery('merge_group', 'd-mg', mergeGroupPayload({ head: SHA, base: BASE })));
    await probot.receive(delivery('check_run', 'd-cr', checkRunPayload({ checkRunId: 9, head: SHA })));
    await probot.receive(delivery('check_suite', 'd-cs', checkSuitePayload({ head: SHA })));
    expect(calls.map((c) => c.method)).toEqual(['mergeGroup', 'checkRunRerequested', 'checkSuiteRerequested']);
  });

  it.each([
    ['a command on a pull request', { body: '/consort status', number: 2 }, 1],
    ['an edited comment', { body: '/consort status', number: 2, action: 'edited' as const, from: 'hi' }, 1],
    ['a comment without a command', { body: 'Looks good!', number: 2 }, 0],
    [
      'a command from a bot',
      { body: '/consort approve', number: 2, user: 'consort[bot]', userType: 'Bot' as const },
      0,
    ],
    ['a command on an issue', { body: '/consort approve', number: 2, onIssue: true }, 0],
  ])('issue_comment: %s', async (_label, options, expected) => {
    const { probot, calls } = await appWith();
    await probot.receive(delivery('issue_comment', 'd-comment', commentPayload(options)));
    expect(calls).toHaveLength(expected);
  });
  it('installation.deleted and installation_repositories.removed (GitHub sends them unasked); not created or suspend', async () => {
    const { probot, calls } = await appWith();
    await probot.receive(delivery('installation', 'd-created', installationPayload({ action: 'created' })));
    await probot.receive(delivery('installation', 'd-suspend', installationPayload({ action: 'suspend' })));
    await probot.receive(delivery('installation', 'd-deleted', installationPayload({ action: 'deleted' })));
    await probot.receive(
      delivery(
        'installation_repositories',
        'd-removed',
        installationPayload({ action: 'removed', repositoryIds: [7] }),
      ),
    );
    expect(calls.map((c) => [c.method, c.event.id, c.event.name])).toEqual([
      ['installationRemoved', 'd-deleted', 'installation'],
      ['installationRemoved', 'd-removed', 'installation_repositories'],
    ]);
  });
});

describe('the App manifest (app.yml)', () => {
  it('subscribes to exactly the events the App handles, with the minimum permissions', async () => {
    const manifest = parse(await readFile(new URL('../../app.yml', import.meta.url), 'utf8')) as {
      default_events: string[];
      default_permissions: Record<string, string>;
    };
    const handled = ['pull_request', 'merge_group', 'check_run', 'check_suite', 'issue_comment'];
    expect([...manifest.default_events].sort()).toEqual([...handled].sort());
    expect(manifest.default_permissions).toEqual({
      checks: 'write',
      statuses: 'write',
      pull_requests: 'write',
      issues: 'write',
      contents: 'read',
      metadata: 'read',
      merge_queues: 'read',
    });
  });
});

describe('the HTTP server', () => {
  let server: http.Server;
  let url: string;
  let healthy = true;
  let calls: Call[];

  beforeAll(async () => {
    const app = await appWith();
    calls = app.calls;
    server = createAppServer({
      webhooks: await app.probot.getNodeMiddleware(),
      healthy: async () => healthy,
      version: 'test',
    });
    url = (await listen(server, 0, '127.0.0.1')).url;
  });
  afterAll(() => closeServer(server));
  beforeEach(() => {
    calls.length = 0;
  });

  const body = JSON.stringify(pullRequestPayload({ action: 'opened', number: 2, head: SHA, base: BASE }));
  const sign = (text: string, secret = WEBHOOK_SECRET): string =>
    `sha256=${createHmac('sha256', secret).update(text).digest('hex')}`;
  const post = (headers: Record<string, string>) =>
    fetch(`${url}/api/github/webhooks`, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'pull_request',
        'x-github-delivery': 'http-1',
        ...headers,
      },
    });

  it('rejects an unsigned webhook (400) and runs no handler', async () => {
    const res = await post({});
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/x-hub-signature-256/);
    expect(calls).toEqual([]);
  });

  it("rejects a webhook signed with another secret (Probot's 'development' placeholder) and runs no handler", async () => {
    const res = await post({ 'x-hub-signature-256': sign(body, 'development') });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/signature does not match/);
    expect(calls).toEqual([]);
  });

  it('accepts a correctly signed webhook', async () => {
    const res = await post({ 'x-hub-signature-256': sign(body) });
    expect(res.status).toBe(200);
    expect(calls).toEqual([{ method: 'pullRequest', event: expect.objectContaining({ id: 'http-1' }) }]);
  });

  it('serves /health (503 when the store does not answer) and 404 elsewhere', async () => {
    healthy = true;
    expect(await (await fetch(`${url}/health`)).json()).toEqual({ status: 'ok', version: 'test', store: 'ok' });
    healthy = false;
    expect((await fetch(`${url}/health`)).status).toBe(503);
    expect((await fetch(`${url}/nothing-here`)).status).toBe(404);
  });
});
