/**
 * Attacks on where a pull request's gate approval comes from that the defences hold against: the
 * judgement of an approval written into the branch's gates.json (`uncountedApproval`, the same one
 * the lane and the gate statuses use) over a conversation built comment by comment. Who may
 * approve is asked now (permission, team membership), so a removed team member's or a triager's
 * comment backs nothing; bots, quotes, code, other gates' announcements and look-alike characters
 * approve nothing; the author is the author whatever the case of the login.
 */
import type { ApprovalPolicy } from '../../src/conductor/gates.js';
import type { IssueComment, Permission } from '../../src/ports/github.js';
import { uncountedApproval } from '../../src/lanes/tdd/pull-request.js';

const HASH = `sha256:${'a'.repeat(64)}`;
const repo = { owner: 'octo-org', repo: 'shop' };
const pull = { number: 7, author: 'OctoCat' };
let id = 100;
let second = 0;
/** A comment one second after the previous one. */
function said(login: string, body: string, type = 'User'): IssueComment {
  const at = new Date(Date.UTC(2030, 0, 1, 9, 0, second++)).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return { id: id++, body, user: { login, type }, htmlUrl: '', createdAt: at, updatedAt: at };
}
const announce = (gate: string, hash = HASH) =>
  said('github-actions[bot]', `<!-- consort:gate ${gate} ${hash} -->\n### ⏸ Gate \`${gate}\``, 'Bot');

function judge(
  comments: IssueComment[],
  approver: string,
  o: { policy?: Partial<ApprovalPolicy>; permission?: Permission; teams?: string[]; gate?: string } = {},
) {
  const github = {
    permission: () => Promise.resolve(o.permission ?? 'write'),
    teamMember: (org: string, team: string) => Promise.resolve((o.teams ?? []).includes(`${org}/${team}`)),
  };
  const policy = { approvers: [], selfApproval: false, gateMode: 'human' as const, ...o.policy };
  return uncountedApproval(
    github,
    repo,
    pull,
    policy,
    o.gate ?? 'spec',
    { approver, proxy: false, hash: HASH },
    comments,
  );
}

it("counts a team member's approval only while they are on the team", async () => {
  const comments = [announce('spec'), said('kim', '/consort approve spec')];
  const policy = { approvers: ['octo-org/reviewers'] };
  expect(await judge(comments, 'kim', { policy, teams: ['octo-org/reviewers'] })).toBeUndefined();
  expect(await judge(comments, 'kim', { policy, teams: [] })).toMatch(/^only the approvers gates.approvers names/);
});

it.each<Permission>(['triage', 'read', 'none'])('does not count the approval of someone with %s access', async (p) => {
  const comments = [announce('spec'), said('tri', '/consort approve spec')];
  expect(await judge(comments, 'tri', { permission: p })).toBe(`@tri has ${p} access`);
});

it("does not count a bot's /consort approve, whatever gates.json names", async () => {
  const comments = [announce('spec'), said('helper-app[bot]', '/consort approve spec', 'Bot')];
  expect(await judge(comments, 'helper-app[bot]')).toBe('@helper-app[bot] left no /consort approve spec on #7');
});

it('refuses the author approving, whatever the case of the login gates.json gives', async () => {
  const comments = [announce('spec'), said('octocat', '/consort approve spec')];
  expect(await judge(comments, 'OCTOCAT')).toMatch(/^the author of a pull request may not approve its gates/);
});

it('binds a command to its own gate: an earlier gate announced with the same hash is no announcement of this one', async () => {
  const comments = [announce('plan'), said('mona', '/consort approve spec'), announce('spec')];
  expect(await judge(comments, 'mona')).toMatch(
    /^@mona's \/consort approve spec on #7 was not given on these artifacts/,
  );
});

it.each([
  ['a quote of it', '> /consort approve spec\n\nWhy would I?'],
  ['a code block', '```\n/consort approve spec\n```'],
  ['a list item’s code block', 'To approve:\n\n- ```\n  /consort approve spec\n  ```'],
  ['a <pre> block', '<pre>\n/consort approve spec\n</pre>'],
  ['a <code> element (GitHub shows it as code)', 'To approve, comment <code>\n/consort approve spec\n</code>'],
  ['indented code', '    /consort approve spec'],
  ['an HTML comment', '<!-- /consort approve spec -->'],
  ['a fullwidth slash', '／consort approve spec'],
  ['a Cyrillic ѕ in the gate', '/consort approve ѕpec'],
  ['a zero-width space in the gate', '/consort approve sp\u200bec'],
  ['a zero-width space before it', '\u200b/consort approve spec'],
  ['the gate in capitals', '/consort approve SPEC'],
  ['no gate', '/consort approve'],
])('does not count %s', async (_what, body) => {
  const comments = [announce('spec'), said('mona', body)];
  expect(await judge(comments, 'mona')).toBe('@mona left no /consort approve spec on #7');
});

it('counts a no-break space after /consort as the space it shows (Option-space, pasted text)', async () => {
  // It reads as the command, and is one (src/github/commands.ts): the approver is who decides, not the byte.
  const comments = [announce('spec'), said('mona', '/consort\u00a0approve spec')];
  expect(await judge(comments, 'mona')).toBeUndefined();
});

it('counts the command in any case, with whitespace around it', async () => {
  const comments = [announce('spec'), said('mona', '  /CONSORT  Approve\tspec  \n\nread it all')];
  expect(await judge(comments, 'mona')).toBeUndefined();
});
