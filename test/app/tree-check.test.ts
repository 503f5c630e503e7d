/**
 * GitHub's tarball is `git archive`, which honours the commit's own `.gitattributes`: a pull
 * request's `export-ignore` hid its migration from the App's plan and run (a deploy from a checkout
 * applies it), `export-subst` changed the text that ran. The App now compares each unpacked
 * migrations folder with the commit's own tree (the Git Trees API) and stops on any difference.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sameAsCommit, blobId } from '../../app/tree-check.js';
import { checkoutCommit } from '../../app/workspace.js';
import { isConsortError } from '../../src/core/errors.js';
import { FakeGitHub } from './helpers/fake-github.js';
import { commit, tarballOf } from './helpers/repo.js';
import { execFileAsync } from '../helpers/exec-file.js';

const REPO = { owner: 'Codertocat', repo: 'Hello-World' };
const UP = (table: string) =>
  `-- Up Migration\nCREATE TABLE ${table} (id int);\n-- Down Migration\nDROP TABLE ${table};\n`;

let dir: string;
const gh = new FakeGitHub();

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'consort-tree-check-'));
  await execFileAsync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The commit as the App sees it: its tarball unpacked, then compared with its tree. */
async function appSees(sha: string): Promise<unknown> {
  gh.tarballs.set(sha, await tarballOf(dir, sha));
  const ws = await checkoutCommit(gh, REPO, sha);
  try {
    await sameAsCommit(gh, REPO, sha, ws.dir, 'migrations');
    return 'same';
  } catch (e) {
    if (!isConsortError(e)) throw e;
    return e.message;
  } finally {
    await ws.dispose();
  }
}

test('a plain commit is the same in the tarball as in its tree', async () => {
  const sha = await commit(dir, { 'migrations/1_a.sql': UP('a'), 'README.md': '# x\n' });
  expect(await appSees(sha)).toBe('same');
});

test('export-ignore on a migration: the App stops, naming it', async () => {
  const sha = await commit(dir, {
    'migrations/2_b.sql': UP('b'),
    '.gitattributes': 'migrations/2_b.sql export-ignore\n.gitattributes export-ignore\n',
  });
  expect(await appSees(sha)).toMatch(/^migrations\/2_b\.sql is missing in GitHub's tarball of [0-9a-f]{12}/);
});

test('export-subst rewriting a migration: the App stops, naming it', async () => {
  const sha = await commit(dir, {
    'migrations/3_c.sql': `${UP('c')}-- $Format:%H$\n`,
    '.gitattributes': 'migrations/3_c.sql export-subst\n',
  });
  expect(await appSees(sha)).toMatch(/^migrations\/3_c\.sql is not the file committed in GitHub's tarball/);
});

test('a migration linked to a file export-subst rewrites: the App stops, naming the link', async () => {
  await mkdir(path.join(dir, 'shared'), { recursive: true });
  await writeFile(path.join(dir, 'shared', 'd.sql'), `${UP('d')}-- $Format:%H$\n`);
  await symlink('../shared/d.sql', path.join(dir, 'migrations', '4_d.sql'));
  const sha = await commit(dir, { '.gitattributes': 'shared/d.sql export-subst\n' });
  expect(await appSees(sha)).toMatch(/^migrations\/4_d\.sql leads to shared\/d\.sql, which is not the file committed/);
  // The same link to a file as committed is the same.
  const clean = await commit(dir, { '.gitattributes': '' });
  expect(await appSees(clean)).toBe('same');
});

test("blobId is git's object id", async () => {
  await writeFile(path.join(dir, 'hello.txt'), 'hello\n');
  const { stdout } = await execFileAsync('git', ['hash-object', 'hello.txt'], { cwd: dir });
  expect(blobId(Buffer.from('hello\n'))).toBe(String(stdout).trim());
});
