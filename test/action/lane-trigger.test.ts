/** What a TDD-lane run was asked to do, from its event alone (permissions are checked later, through the API). */
import type { ActionEvent } from '../../src/action/context.js';
import { laneRequest } from '../../src/action/lane/trigger.js';

const lane = { feature: undefined, pullRequest: undefined, buildLabel: 'consort:build' };
const person = { login: 'ada', type: 'User' };
const onPr = (body: string, extra: Partial<Extract<ActionEvent, { kind: 'issue_comment' }>> = {}): ActionEvent => ({
  kind: 'issue_comment',
  action: 'created',
  number: 7,
  pullRequest: true,
  comment: { id: 11, body, user: person },
  ...extra,
});

describe('laneRequest', () => {
  it('reads /consort build with the rest of the paragraph as the feature request', () => {
    expect(
      laneRequest(
        'build',
        onPr('/consort build customer-phones\nCustomers want a phone number.\n\nUnrelated text.'),
        lane,
      ),
    ).toEqual({
      kind: 'build',
      pr: 7,
      feature: 'customer-phones',
      request: 'Customers want a phone number.',
      actor: person,
      commentId: 11,
      via: 'comment',
    });
    expect(laneRequest('build', onPr('/consort build 001'), lane)).toMatchObject({
      kind: 'build',
      feature: '001',
      request: null,
    });
  });

  it('reads /consort approve in both modes, but /consort build only in mode build', () => {
    expect(laneRequest('approve', onPr('/consort approve spec'), lane)).toEqual({
      kind: 'approve',
      pr: 7,
      gate: 'spec',
      actor: person,
      commentId: 11,
    });
    expect(laneRequest('build', onPr('/consort approve'), lane)).toMatchObject({ kind: 'approve', gate: null });
    expect(laneRequest('approve', onPr('/consort build phones'), lane)).toMatchObject({
      kind: 'ignore',
      why: expect.stringContaining('mode: build'),
    });
  });

  it.each([
    [
      'a bot',
      onPr('/consort approve spec', {
        comment: { id: 1, body: '/consort approve spec', user: { login: 'consort[bot]', type: 'Bot' } },
      }),
      /by a bot/,
    ],
    ['a quoted command', onPr('> /consort approve spec'), /no \/consort command/],
    ['a command in a code block', onPr('```\n/consort approve spec\n```'), /no \/consort command/],
    ['an edit', onPr('/consort approve spec', { action: 'edited' }), /edited/],
    ['an issue', onPr('/consort build x', { pullRequest: false }), /issue, not a pull request/],
    ['the fork-run approval', onPr('/consort approve run'), /^`\/consort allow-run` is answered by the Consort App$/],
    ['an App command', onPr('/consort retry'), /^`\/consort retry` is answered by the Consort App$/],
  ])('ignores %s', (_what, event, why) => {
    expect(laneRequest('build', event, lane)).toEqual({ kind: 'ignore', why: expect.stringMatching(why) });
  });

  it('starts on the build label only, with the feature input', () => {
    const labeled = (label: string): ActionEvent => ({
      kind: 'pull_request',
      target: false,
      action: 'labeled',
      number: 3,
      fork: false,
      base: { ref: 'main', sha: 'a'.repeat(40) },
      head: { ref: 'x', sha: 'b'.repeat(40) },
      label,
      sender: person,
    });
    expect(laneRequest('build', labeled('consort:build'), { ...lane, feature: 'phones' })).toEqual({
      kind: 'build',
      pr: 3,
      feature: 'phones',
      request: null,
      actor: person,
      commentId: null,
      via: 'label',
    });
    expect(laneRequest('build', labeled('bug'), lane)).toMatchObject({ kind: 'ignore' });
  });

  it('needs the pull request number on a manual run', () => {
    const dispatch: ActionEvent = { kind: 'workflow_dispatch', ref: 'refs/heads/main', inputs: {}, sender: person };
    expect(() => laneRequest('build', dispatch, lane)).toThrow(/pull-request input is empty/);
    expect(laneRequest('build', dispatch, { ...lane, pullRequest: 9 })).toMatchObject({
      kind: 'build',
      pr: 9,
      via: 'dispatch',
      feature: null,
    });
  });
});
