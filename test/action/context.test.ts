/** The runner's environment and recorded event payloads, parsed into the Action's context. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { laneSuiteEnv, parseEvent, readActionContext, suiteEnv } from '../../src/action/context.js';
import { isConsortError } from '../../src/core/errors.js';

import { webhookPayload as fixture, type RecordedMergeGroupEvent } from '../helpers/action-run.js';

describe('parseEvent', () => {
  it('reads a pull_request payload: number, base and head, same-repository', async () => {
    const payload = await fixture('pull_request.synchronize.json');
    expect(parseEvent('pull_request', payload)).toEqual({
      kind: 'pull_request',
      target: false,
      action: 'synchronize',
      number: 2,
      fork: false,
      base: { ref: payload.pull_request.base.ref, sha: payload.pull_request.base.sha },
      head: { ref: payload.pull_request.head.ref, sha: payload.pull_request.head.sha },
      label: null,
      sender: { login: 'Codertocat', type: 'User' },
    });
  });

  it('marks a fork, and a PR whose fork was deleted (head.repo null), as forks', async () => {
    const payload = await fixture('pull_request.synchronize.json');
    payload.pull_request.head.repo = { full_name: 'someone/Hello-World', fork: true };
    expect(parseEvent('pull_request', payload)).toMatchObject({ fork: true });
    payload.pull_request.head.repo = null;
    expect(parseEvent('pull_request', payload)).toMatchObject({ fork: true });
  });

  it('flags pull_request_target runs', async () => {
    expect(parseEvent('pull_request_target', await fixture('pull_request.closed.json'))).toMatchObject({
      target: true,
      action: 'closed',
    });
  });

  it('reads a merge group: base_sha and head_sha', async () => {
    const payload = await fixture<RecordedMergeGroupEvent>('merge_group.checks_requested.json');
    expect(parseEvent('merge_group', payload)).toEqual({
      kind: 'merge_group',
      base: { ref: 'refs/heads/main', sha: payload.merge_group.base_sha },
      head: { ref: payload.merge_group.head_ref, sha: payload.merge_group.head_sha },
    });
  });

  it('reads a push, with a new branch (before = zeros) as no before', () => {
    const after = 'a'.repeat(40);
    expect(parseEvent('push', { ref: 'refs/heads/x', before: '0'.repeat(40), after })).toEqual({
      kind: 'push',
      ref: 'refs/heads/x',
      before: null,
      after,
    });
    expect(parseEvent('push', { ref: 'refs/heads/x', before: 'b'.repeat(40), after })).toMatchObject({
      before: 'b'.repeat(40),
    });
  });

  it('keeps other events by name', () => {
    expect(parseEvent('schedule', { schedule: '*/15 * * * *' })).toEqual({ kind: 'other', name: 'schedule' });
  });

  it("reads a comment, and tells a pull request's from an issue's", async () => {
    const payload = await fixture<{
      issue: { number: number; pull_request?: unknown };
      comment: { id: number; body: string };
    }>('issue_comment.created.json');
    expect(parseEvent('issue_comment', payload)).toEqual({
      kind: 'issue_comment',
      action: 'created',
      number: payload.issue.number,
      pullRequest: false,
      comment: { id: payload.comment.id, body: payload.comment.body, user: { login: 'Codertocat', type: 'User' } },
    });
    payload.issue.pull_request = { url: 'https://api.github.com/repos/Codertocat/Hello-World/pulls/1' };
    expect(parseEvent('issue_comment', payload)).toMatchObject({ pullRequest: true });
  });

  it('reads a label and a manual dispatch with its inputs and who started it', async () => {
    expect(parseEvent('pull_request', await fixture<unknown>('pull_request.labeled.json'))).toMatchObject({
      action: 'labeled',
      label: 'bug',
      sender: { login: 'Codertocat' },
    });
    const dispatch = await fixture<{ inputs: unknown; sender: { login: string } }>('workflow_dispatch.json');
    dispatch.inputs = { pr: '7', dry: true };
    expect(parseEvent('workflow_dispatch', dispatch)).toEqual({
      kind: 'workflow_dispatch',
      ref: 'refs/heads/master',
      inputs: { pr: '7', dry: 'true' },
      sender: { login: dispatch.sender.login, type: 'User' },
    });
  });

  it('rejects a payload that is not what GitHub sends, saying where', () => {
    try {
      parseEvent('pull_request', { action: 'opened', number: 1, pull_request: { base: {}, head: {} } });
      throw new Error('expected a rejection');
    } catch (e) {
      expect(isConsortError(e, 'invalid-input')).toBe(true);
      expect((e as Error).message).toMatch(
        /^The pull_request event payload is not what GitHub sends \(pull_request\.base\.ref: /,
      );
    }
  });
});

describe('readActionContext', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'consort-ctx-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('builds the context from the runner variables', async () => {
    const eventPath = path.join(dir, 'event.json');
    await writeFile(eventPath, JSON.stringify(await fixture('pull_request.synchronize.json')));
    const ctx = await readActionContext({
      GITHUB_EVENT_NAME: 'pull_request',
      GITHUB_EVENT_PATH: eventPath,
      GITHUB_WORKSPACE: '/w',
      GITHUB_REPOSITORY: 'octo/shop',
      RUNNER_TEMP: '/rt',
      GITHUB_API_URL: 'https://ghe.example.com/api/v3',
      GITHUB_SERVER_URL: 'https://ghe.example.com',
      GITHUB_RUN_ID: '77',
    });
    expect(ctx).toMatchObject({
      eventName: 'pull_request',
      workspace: '/w',
      repo: { owner: 'octo', repo: 'shop' },
      runnerTemp: '/rt',
      apiUrl: 'https://ghe.example.com/api/v3',
      runUrl: 'https://ghe.example.com/octo/shop/actions/runs/77',
      stepSummary: undefined,
      event: { kind: 'pull_request', number: 2 },
    });
  });

  it('defaults the API URL to api.github.com and refuses to run outside Actions', async () => {
    const eventPath = path.join(dir, 'other.json');
    await writeFile(eventPath, '{}');
    const ctx = await readActionContext({
      GITHUB_EVENT_NAME: 'schedule',
      GITHUB_EVENT_PATH: eventPath,
      GITHUB_WORKSPACE: '/w',
      GITHUB_REPOSITORY: 'o/r',
    });
    expect(ctx.apiUrl).toBe('https://api.github.com');
    await expect(readActionContext({})).rejects.toThrow(
      /^Not running as a GitHub Action: GITHUB_EVENT_NAME is not set/,
    );
  });
});

describe('suiteEnv', () => {
  it('hides the inputs (the token) and the runner credentials from the suite, and keeps the rest', () => {
    expect(
      suiteEnv({
        PATH: '/bin',
        HOME: '/home/runner',
        CI: 'true',
        GITHUB_SHA: 'abc',
        'INPUT_GITHUB-TOKEN': 'ghs_x',
        INPUT_MODE: 'check',
        ACTIONS_RUNTIME_TOKEN: 'rt',
        ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'id',
        ACTIONS_ID_TOKEN_REQUEST_URL: 'u',
        CONSORT_POSTGRES_URL: 'postgres://a:b@c/d',
      }),
    ).toEqual({ PATH: '/bin', HOME: '/home/runner', CI: 'true', GITHUB_SHA: 'abc' });
  });

  it("keeps the model keys but no GitHub token in the runner's environment source, and the TDD lane's suite has neither", () => {
    const env = {
      PATH: '/bin',
      GITHUB_TOKEN: 'ghs_y',
      GH_TOKEN: 'gho_z',
      'INPUT_OPENAI-API-KEY': 'sk-x',
      ANTHROPIC_API_KEY: 'sk-ant',
      OPENAI_API_KEY: 'sk-x',
      SERVING_TOKEN: 'dapi',
    };
    expect(suiteEnv(env)).toEqual({
      PATH: '/bin',
      ANTHROPIC_API_KEY: 'sk-ant',
      OPENAI_API_KEY: 'sk-x',
      SERVING_TOKEN: 'dapi',
    });
    expect(laneSuiteEnv(env, ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'SERVING_TOKEN'])).toEqual({ PATH: '/bin' });
  });
});
