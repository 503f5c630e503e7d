/**
 * A turn's diff stat in the App's dashboard comes from GitHub's compare, which lists at most 300
 * files: a file past those has unknown counts, not "0 added, 0 removed".
 */
import { githubRecords } from '../../app/dashboard/github-records.js';
import { diffStatOf } from '../../src/dashboard/diff-stat.js';
import type { OctokitClient } from '../../src/github/octokit.js';
import type { TurnRecord } from '../../src/conductor/state.js';

const file = (i: number) => `src/generated/model-${String(i).padStart(3, '0')}.ts`;

/** GitHub's compare answer for `changed` files, as the API lists them: at most 300. */
function compareOf(changed: number): OctokitClient {
  return {
    request: async (route: string) => {
      expect(route).toBe('GET /repos/{owner}/{repo}/compare/{basehead}');
      const files = Array.from({ length: Math.min(changed, 300) }, (_, i) => ({
        filename: file(i),
        status: 'modified',
        additions: 2,
        deletions: 1,
        changes: 3,
      }));
      return { status: 200, data: { files } };
    },
  } as OctokitClient;
}

const turn = (changed: number) => ({ filesChanged: Array.from({ length: changed }, (_, i) => file(i)) }) as TurnRecord;
const repo = { owner: 'o', repo: 'r' };

it('past the 300 files GitHub lists, a changed file has unknown counts', async () => {
  const record = turn(305);
  const counts = await githubRecords(compareOf(305)).compare(repo, 'a'.repeat(40), 'b'.repeat(40), record.filesChanged);
  const stat = diffStatOf(record, counts);
  expect(stat[0]).toEqual({ path: file(0), added: 2, removed: 1 });
  expect(stat[299]).toEqual({ path: file(299), added: 2, removed: 1 });
  expect(stat.slice(300)).toEqual(
    [300, 301, 302, 303, 304].map((i) => ({ path: file(i), added: null, removed: null })),
  );
});

it('a complete list: a recorded file it leaves out did not change', async () => {
  const record = turn(3);
  const counts = await githubRecords(compareOf(2)).compare(repo, 'a'.repeat(40), 'b'.repeat(40), record.filesChanged);
  expect(diffStatOf(record, counts)[2]).toEqual({ path: file(2), added: 0, removed: 0 });
});
