/**
 * A commit's files as the check reads them (filesAt) and writes them for the run (extractCommit):
 * a link (mode 120000) reads as the file it leads to inside the commit, as a checkout would, and
 * one that leads outside, nowhere, to a folder (for a migration) or round in a loop is refused
 * with its target named — never followed on the runner's disk. What is written is the objects'
 * bytes: no `.gitattributes` of the commit drops or rewrites a file (git archive did).
 */
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { extractCommit, filesAt } from '../../src/git/repo.js';
import { createWorkdir } from '../../src/lanes/check/workdir.js';
import { execFileAsync } from '../helpers/exec-file.js';

const SQL = '-- Up Migration\nSELECT 1;\n';
let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'consort-tree-links-'));
  await writeFile(path.join(scratch, 'secret.sql'), 'SELECT $$runner secret$$;\n');
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

let n = 0;
/**
 * A repository whose commit holds `files` (text) and `links` (path → target), and `attributes` as
 * its `.gitattributes` (added last, so they do not convert the files as they are added); its commit id.
 */
async function commit(
  files: Record<string, string>,
  links: Record<string, string> = {},
  attributes?: string,
): Promise<[string, string]> {
  const repo = path.join(scratch, `repo-${++n}`);
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(repo, file)), { recursive: true });
    await writeFile(path.join(repo, file), text);
  }
  for (const [link, target] of Object.entries(links)) {
    await mkdir(path.dirname(path.join(repo, link)), { recursive: true });
    await symlink(target, path.join(repo, link));
  }
  const git = (...args: string[]) => execFileAsync('git', ['-C', repo, ...args]);
  await git('init', '-q');
  await git('add', '-A');
  if (attributes !== undefined) {
    await writeFile(path.join(repo, '.gitattributes'), attributes);
    await git('add', '.gitattributes');
  }
  await git('-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', 'commit', '-qm', 'one');
  return [repo, (await git('rev-parse', 'HEAD')).stdout.trim()];
}

describe('filesAt follows links inside the commit', () => {
  it('a migration linked to a shared file reads as that file (a chain too), not as its target path', async () => {
    const [repo, sha] = await commit(
      { 'shared/1_a.sql': SQL, 'shared/2_b.sql': 'SELECT 2;\n', 'migrations/0_own.sql': 'SELECT 0;\n' },
      { 'migrations/1_a.sql': '../shared/1_a.sql', 'migrations/2_b.sql': '../alias/2_b.sql', alias: 'shared' },
    );
    expect(await filesAt(repo, sha, 'migrations')).toEqual([
      { file: 'migrations/0_own.sql', content: 'SELECT 0;\n' },
      { file: 'migrations/1_a.sql', content: SQL },
      { file: 'migrations/2_b.sql', content: 'SELECT 2;\n' },
    ]);
    // The seed or the configuration, named by path.
    expect(await filesAt(repo, sha, 'migrations/1_a.sql')).toEqual([{ file: 'migrations/1_a.sql', content: SQL }]);
  });

  it('a migrations folder that is a link reads the folder it leads to, under its own name', async () => {
    const [repo, sha] = await commit(
      { 'packages/db/migrations/1_a.sql': SQL },
      { migrations: 'packages/db/migrations' },
    );
    expect(await filesAt(repo, sha, 'migrations')).toEqual([{ file: 'migrations/1_a.sql', content: SQL }]);
    expect(await filesAt(repo, sha, 'migrations/1_a.sql')).toEqual([{ file: 'migrations/1_a.sql', content: SQL }]);
    expect(await filesAt(repo, sha, 'nothing/here')).toEqual([]);
  });

  it.each([
    [
      'an absolute path',
      path.join('/tmp', 'x', 'secret.sql'),
      /which leads outside the repository \(an absolute path\)/,
    ],
    ['a path past the top', '../../secret.sql', /which leads outside the repository/],
    ['a missing file', '../shared/gone.sql', /which names nothing in the commit \(no shared\/gone\.sql\)/],
    ['a folder', '../shared', /which is a folder, not a file/],
    ['itself', '1_a.sql', /which loops \(more than 40 links followed\)/],
  ])('refuses a migration linked to %s, naming the link and its target', async (_what, target, why) => {
    const [repo, sha] = await commit({ 'shared/ok.sql': SQL }, { 'migrations/1_a.sql': target });
    const error = await filesAt(repo, sha, 'migrations').then(
      () => null,
      (e: Error) => e,
    );
    expect(error?.message).toMatch(
      new RegExp(
        `^migrations/1_a\\.sql is a link to ${JSON.stringify(JSON.stringify(target))
          .slice(1, -1)
          .replace(/[.()/]/g, '\\$&')}, `,
      ),
    );
    expect(error?.message).toMatch(why);
    expect(error?.message).not.toContain('runner secret');
  });

  it('refuses a loop of two links, and a link into a file', async () => {
    const [repo, sha] = await commit(
      { 'shared/ok.sql': SQL },
      { 'migrations/1_a.sql': 'b', 'migrations/b': '1_a.sql' },
    );
    await expect(filesAt(repo, sha, 'migrations')).rejects.toThrow(
      /migrations\/1_a\.sql is a link to "b", which loops/,
    );
    const [repo2, sha2] = await commit({ 'shared/ok.sql': SQL }, { 'migrations/1_a.sql': '../shared/ok.sql/x' });
    await expect(filesAt(repo2, sha2, 'migrations')).rejects.toThrow(
      /names nothing in the commit \(shared\/ok\.sql is a file/,
    );
  });
});

describe('extractCommit writes the objects, byte for byte', () => {
  it("ignores the commit's .gitattributes: export-ignore, export-subst, ident, eol, working-tree-encoding", async () => {
    const attributes = [
      'migrations/1_gone.sql export-ignore',
      'migrations/2_subst.sql export-subst',
      'migrations/3_ident.sql ident',
      'migrations/4_crlf.sql text eol=crlf',
      'migrations/5_utf16.sql text working-tree-encoding=UTF-16',
      '',
    ].join('\n');
    const files = {
      'migrations/1_gone.sql': SQL,
      'migrations/2_subst.sql': 'SELECT 1; -- $Format:%H$\n',
      'migrations/3_ident.sql': 'SELECT 1; -- $Id$\n',
      'migrations/4_crlf.sql': 'SELECT 1;\nSELECT 2;\n',
      'migrations/5_utf16.sql': 'SELECT 1;\n',
    };
    const [repo, sha] = await commit(files, {}, attributes);
    const out = path.join(scratch, `out-${n}`);
    await mkdir(out);
    expect(await extractCommit(repo, sha, out)).toEqual({ leftOut: [] });
    expect(await readFile(path.join(out, '.gitattributes'), 'utf8')).toBe(attributes);
    for (const [file, text] of Object.entries(files))
      expect([file, await readFile(path.join(out, file), 'utf8')]).toEqual([file, text]);
  });

  it('writes links that lead inside as they are, leaves out and names the rest; keeps the executable bit', async () => {
    const [repo, sha] = await commit(
      { 'shared/1_a.sql': SQL, 'bin/run.sh': '#!/bin/sh\n', 'src/kinds.js': 'module.exports = 1;\n' },
      {
        'migrations/1_a.sql': '../shared/1_a.sql',
        'migrations/lib': '../src',
        'migrations/out.sql': path.join(scratch, 'secret.sql'),
        'migrations/up.sql': '../../secret.sql',
        'migrations/gone.sql': 'nothing.sql',
        'migrations/loop': 'loop',
      },
    );
    await chmod(path.join(repo, 'bin/run.sh'), 0o755);
    await execFileAsync('git', ['-C', repo, 'add', '--chmod=+x', 'bin/run.sh']);
    await execFileAsync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'x']);
    const head = (await execFileAsync('git', ['-C', repo, 'rev-parse', 'HEAD'])).stdout.trim();
    expect(head).not.toBe(sha);
    const out = path.join(scratch, `out-${n}-links`);
    await mkdir(out);
    const { leftOut } = await extractCommit(repo, head, out);
    expect(leftOut.sort()).toEqual(
      [
        'migrations/gone.sql is a link to "nothing.sql", which names nothing in the commit (no migrations/nothing.sql)',
        'migrations/loop is a link to "loop", which loops (more than 40 links followed)',
        `migrations/out.sql is a link to ${JSON.stringify(path.join(scratch, 'secret.sql'))}, which leads outside the repository (an absolute path)`,
        'migrations/up.sql is a link to "../../secret.sql", which leads outside the repository',
      ].sort(),
    );
    expect((await readdir(path.join(out, 'migrations'))).sort()).toEqual(['1_a.sql', 'lib']);
    expect(await readlink(path.join(out, 'migrations/1_a.sql'))).toBe('../shared/1_a.sql');
    expect(await readFile(path.join(out, 'migrations/1_a.sql'), 'utf8')).toBe(SQL);
    expect(await readFile(path.join(out, 'migrations/lib/kinds.js'), 'utf8')).toBe('module.exports = 1;\n');
    expect((await lstat(path.join(out, 'bin/run.sh'))).mode & 0o777).toBe(0o755);
    expect((await lstat(path.join(out, 'shared/1_a.sql'))).mode & 0o777).toBe(0o644);
  });
});

describe("the run directory's migrations are the ones planned", () => {
  it('refuses to hand over a migrations folder whose files differ from what the plan read', async () => {
    const [repo, sha] = await commit({ 'migrations/1_a.sql': SQL, 'migrations/2_b.sql': SQL });
    const planned = await filesAt(repo, sha, 'migrations');
    // A materialisation that still applied attributes: 1_a rewritten, 2_b dropped, 3_c added.
    const cases: [string, (out: string) => Promise<void>, RegExp][] = [
      [
        'changed',
        (out) => writeFile(path.join(out, 'migrations/1_a.sql'), 'SELECT 666;\n'),
        /1_a\.sql written for the run differs/,
      ],
      ['dropped', (out) => rm(path.join(out, 'migrations/2_b.sql')), /2_b\.sql written for the run is missing/],
      [
        'added',
        (out) => writeFile(path.join(out, 'migrations/3_c.sql'), SQL),
        /3_c\.sql written for the run is not in the commit/,
      ],
    ];
    for (const [, tamper, error] of cases) {
      const git = {
        extractCommit: async (r: string, s: string, out: string) => {
          const written = await extractCommit(r, s, out);
          await tamper(out);
          return written;
        },
      };
      const workdir = await createWorkdir(repo, git);
      try {
        await expect(workdir.extract('head', 'migrations', repo, sha, planned)).rejects.toThrow(error);
      } finally {
        await workdir.dispose();
      }
    }
    const workdir = await createWorkdir(repo, { extractCommit });
    try {
      await expect(workdir.extract('head', 'migrations', repo, sha, planned)).resolves.toMatchObject({ leftOut: [] });
    } finally {
      await workdir.dispose();
    }
  });
});
