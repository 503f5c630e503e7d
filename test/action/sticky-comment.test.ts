/** The sticky PR comment: which comment is ours (marker + bot author), and create vs update. */
import { commentKey } from '../../src/action/comment-key.js';
import {
  CHECK_COMMENT_MARKER,
  checkCommentMarker,
  isOurs,
  planSticky,
  upsertStickyComment,
  withMarker,
} from '../../src/github/sticky-comment.js';
import { createOctokitClient } from '../../src/github/client.js';
import { octokitGitHub } from '../../src/github/octokit.js';
import type { GitHubPort, IssueComment, RepoRef } from '../../src/ports/github.js';
import { startFakeGitHub, postedText } from '../helpers/fake-github.js';

const M = CHECK_COMMENT_MARKER;
const BOT = { login: 'github-actions[bot]', type: 'Bot' };
const HUMAN = { login: 'mona', type: 'User' };
const comment = (id: number, body: string, user: IssueComment['user'] = BOT): IssueComment => ({
  id,
  body,
  user,
  htmlUrl: `https://github.com/o/r/pull/1#issuecomment-${id}`,
});

describe('withMarker', () => {
  it('puts the marker on its own first line, once', () => {
    expect(withMarker(M, '## Consort: passed')).toBe(`${M}\n## Consort: passed`);
    expect(withMarker(M, withMarker(M, 'x'))).toBe(`${M}\nx`);
  });
});

describe('isOurs', () => {
  it.each([
    ['a bot comment starting with the marker', comment(1, `${M}\nreport`), true],
    ['a bot comment without the marker', comment(2, 'Thanks for the PR!'), false],
    ['a bot comment quoting the marker later', comment(3, `see ${M}`), false],
    ['a person who pasted the marker', comment(4, `${M}\nme too`, HUMAN), false],
    ['a comment by a deleted account', comment(5, `${M}\nold`, null), false],
  ])('%s → %s', (_what, c, expected) => {
    expect(isOurs(c, { marker: M })).toBe(expected);
  });

  it('matches on the login when the caller knows it (an App bot, a PAT user)', () => {
    expect(isOurs(comment(1, `${M}\nr`, HUMAN), { marker: M, selfLogin: 'mona' })).toBe(true);
    expect(isOurs(comment(1, `${M}\nr`), { marker: M, selfLogin: 'consort[bot]' })).toBe(false);
  });
});

describe('planSticky', () => {
  it('creates the comment when there is none of ours', () => {
    expect(planSticky([comment(1, `${M}\nx`, HUMAN), comment(2, 'hi')], 'report', { marker: M })).toEqual({
      action: 'create',
      body: `${M}\nreport`,
      duplicates: [],
    });
  });

  it('updates the oldest comment of ours and deletes later duplicates of ours (not a person quoting the marker)', () => {
    expect(
      planSticky(
        [comment(7, 'hi'), comment(8, `${M}\nold`), comment(9, `${M}\nquoted`, HUMAN), comment(10, `${M}\nrace`)],
        'new',
        { marker: M },
      ),
    ).toEqual({ action: 'update', commentId: 8, body: `${M}\nnew`, duplicates: [10] });
    // Another bot's comment with the marker (another app posting as itself) is left alone.
    const otherBot = { login: 'other-app[bot]', type: 'Bot' as const };
    expect(
      planSticky([comment(8, `${M}\nold`), comment(11, `${M}\ntheirs`, otherBot)], 'new', { marker: M }).duplicates,
    ).toEqual([]);
  });

  it('does nothing when the text is the same', () => {
    expect(planSticky([comment(8, `${M}\nsame`)], 'same', { marker: M })).toEqual({
      action: 'unchanged',
      commentId: 8,
      duplicates: [],
    });
  });
});

describe('upsertStickyComment', () => {
  function fakePort(initial: IssueComment[]) {
    const comments = [...initial];
    const calls: string[] = [];
    const unused = async (): Promise<never> => {
      throw new Error('not a sticky-comment call');
    };
    const port: GitHubPort = {
      listComments: async (_r: RepoRef, issue: number) => {
        calls.push(`list ${issue}`);
        return [...comments];
      },
      createComment: async (_r: RepoRef, issue: number, body: string) => {
        calls.push(`create ${issue}`);
        const c = comment(100 + comments.length, body);
        comments.push(c);
        return { id: c.id, url: c.htmlUrl };
      },
      updateComment: async (_r: RepoRef, id: number, body: string) => {
        calls.push(`update ${id}`);
        comments.find((x) => x.id === id)!.body = body;
      },
      deleteComment: async (_r: RepoRef, id: number) => {
        calls.push(`delete ${id}`);
        comments.splice(
          comments.findIndex((x) => x.id === id),
          1,
        );
      },
      react: unused,
      permission: unused,
      teamMember: unused,
      pull: unused,
      review: unused,
      setStatus: unused,
      createCheckRun: unused,
      findCheckRun: unused,
      completeCheckRun: unused,
      tarball: unused,
      folderEntries: unused,
      mergeBase: unused,
    };
    return { port, comments, calls };
  }
  const repo = { owner: 'o', repo: 'r' };

  it('creates on the first run and updates the same comment on the next', async () => {
    const f = fakePort([comment(1, `${M}\nhuman`, HUMAN)]);
    expect(await upsertStickyComment(f.port, repo, 5, 'one', { marker: M })).toEqual({
      action: 'create',
      commentId: 101,
      url: expect.stringContaining('101'),
    });
    expect(await upsertStickyComment(f.port, repo, 5, 'two', { marker: M })).toEqual({
      action: 'update',
      commentId: 101,
      url: expect.stringContaining('101'),
    });
    expect(await upsertStickyComment(f.port, repo, 5, 'two', { marker: M })).toEqual({
      action: 'unchanged',
      commentId: 101,
      url: null,
    });
    expect(f.calls).toEqual(['list 5', 'create 5', 'list 5', 'update 101', 'list 5']);
    expect(f.comments.map((c) => c.body)).toEqual([`${M}\nhuman`, `${M}\ntwo`]);
  });

  it('leaves one comment of ours when two runs both posted one: the later is deleted, the older updated', async () => {
    const f = fakePort([comment(3, `${M}\nrun A`), comment(4, `${M}\nrun B`)]);
    expect(await upsertStickyComment(f.port, repo, 5, 'three', { marker: M })).toMatchObject({
      action: 'update',
      commentId: 3,
    });
    expect(f.calls).toEqual(['list 5', 'delete 4', 'update 3']);
    expect(f.comments.map((c) => c.body)).toEqual([`${M}\nthree`]);
  });
});

describe('the sticky comment and the post marker every created comment ends with (src/github/post-marker.ts)', () => {
  const POST = '<!-- consort:post 1b4e28ba-2fa1-11d2-883f-0016d3cca427 -->';

  it('a comment as created (its text, then its post marker) with the same text is unchanged', () => {
    expect(planSticky([comment(1, `${M}\nreport\n\n${POST}`)], 'report', { marker: M })).toEqual({
      action: 'unchanged',
      commentId: 1,
      duplicates: [],
    });
    expect(planSticky([comment(1, `${M}\nreport\n\n${POST}`)], 'other', { marker: M })).toMatchObject({
      action: 'update',
      body: `${M}\nother`,
    });
  });

  it('through the adapter on the GitHub stand-in: created with its marker first, found again, left unchanged', async () => {
    const fake = await startFakeGitHub('o', 'r');
    try {
      const gh = octokitGitHub(createOctokitClient({ token: 'ghs_test', apiUrl: fake.url, writePacing: 'none' }));
      const repo = { owner: 'o', repo: 'r' };
      expect(await upsertStickyComment(gh, repo, 5, '## Consort: passed', { marker: M })).toMatchObject({
        action: 'create',
      });
      const [made] = fake.comments;
      expect(postedText(made!.body)).toBe(`${M}\n## Consort: passed`);
      expect(await upsertStickyComment(gh, repo, 5, '## Consort: passed', { marker: M })).toEqual({
        action: 'unchanged',
        commentId: made!.id,
        url: null,
      });
      expect(await upsertStickyComment(gh, repo, 5, '## Consort: failed', { marker: M })).toMatchObject({
        action: 'update',
        commentId: made!.id,
      });
      expect(fake.comments.map((c) => c.body)).toEqual([`${M}\n## Consort: failed`]);
      expect(fake.requests.map((r) => r.method)).toEqual(['GET', 'POST', 'GET', 'GET', 'PATCH']);
      expect(fake.unexpected).toEqual([]);
    } finally {
      await fake.close();
    }
  });
});

describe('several check jobs on one pull request (comment-key)', () => {
  it('keys the comment by the config input when it is not a default file, else by nothing', () => {
    expect(commentKey({ commentKey: undefined, config: undefined })).toBeUndefined();
    expect(commentKey({ commentKey: undefined, config: '.github/consort.yml' })).toBeUndefined();
    expect(commentKey({ commentKey: undefined, config: './consort.config.json' })).toBeUndefined();
    expect(commentKey({ commentKey: undefined, config: './services/api/consort.yml' })).toBe(
      'services/api/consort.yml',
    );
    expect(commentKey({ commentKey: 'pg-17', config: 'services/api/consort.yml' })).toBe('pg-17');
  });

  it("gives each key a marker the others' are no prefix of, that cannot end the HTML comment", () => {
    const api = checkCommentMarker('services/api/consort.yml');
    expect(api).toBe('<!-- consort:check services/api/consort.yml -->');
    expect(checkCommentMarker()).toBe(M);
    expect(api.startsWith(M)).toBe(false);
    expect(checkCommentMarker('a--b>c')).toBe('<!-- consort:check a-b_c -->');
  });

  it("each job updates its own comment and never another job's (they used to overwrite one comment in turn)", () => {
    const api = checkCommentMarker('services/api/consort.yml');
    const web = checkCommentMarker('services/web/consort.yml');
    const comments = [comment(1, `${api}\napi report`), comment(2, `${web}\nweb report`), comment(3, `${M}\nroot`)];
    expect(planSticky(comments, 'new web report', { marker: web })).toEqual({
      action: 'update',
      commentId: 2,
      body: `${web}\nnew web report`,
      duplicates: [],
    });
    expect(planSticky(comments, 'root again', { marker: M })).toMatchObject({ action: 'update', commentId: 3 });
    expect(planSticky(comments.slice(1), 'api', { marker: api })).toMatchObject({ action: 'create', duplicates: [] });
  });
});
