/**
 * A pull request's commit can hold trees no checkout would produce: `git mktree` and
 * `git hash-object --literally -t tree` accept duplicate names, a file and a folder of one name,
 * names holding a `/`, link targets longer than any file system allows. The check reads such a
 * commit (filesAt) and writes it for the run (extractCommit): each is refused with the path named,
 * as a ConsortError, before anything is written — never a raw file-system error, never an
 * unhandled rejection that takes the whole process down (the App runs checks in its own).
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MAX_BYTES, MAX_ENTRIES, writeCommitTree } from '../../src/git/commit-tree.js';
import { extractCommit, filesAt } from '../../src/git/repo.js';
import { execFileAsync } from '../helpers/exec-file.js';

let scratch: string;
let repo: string;
const git = async (...args: string[]) => (await execFileAsync('git', ['-C', repo, ...args])).stdout.trim();
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'consort-tree-objects-'));
  repo = path.join(scratch, 'repo');
  await mkdir(repo);
  await git('init', '-q');
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

let n = 0;
/** A blob of `text`; its id. */
async function blob(text: string | Buffer): Promise<string> {
  const file = path.join(scratch, `blob-${++n}`);
  await writeFile(file, text);
  return git('hash-object', '-w', file);
}

/** A tree object of exactly these entries, in this order (mode, id, name); its id. */
async function tree(entries: [string, string, string][]): Promise<string> {
  const bytes = Buffer.concat(
    entries.map(([mode, id, name]) => Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(id, 'hex')])),
  );
  const file = path.join(scratch, `tree-${++n}`);
  await writeFile(file, bytes);
  return git('hash-object', '-t', 'tree', '--literally', '-w', file);
}

async function commitOf(root: string): Promise<string> {
  return git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit-tree', root, '-m', 'crafted');
}

async function out(): Promise<string> {
  const dir = path.join(scratch, `out-${++n}`);
  await mkdir(dir);
  return dir;
}

/**
 * extractCommit of `sha` into `dest` in a plain node process of its own, as the CLI and the App run
 * it (the built modules: npm test builds lib/ first); what it rejected with, or how the process died.
 */
async function extractApart(sha: string, dest: string): Promise<{ name?: string; message: string; died?: boolean }> {
  const script = `
    const { extractCommit } = await import(${JSON.stringify(path.resolve('lib/src/git/repo.js'))});
    const fail = (e) => console.log(JSON.stringify({ name: e.constructor.name, message: e.message }));
    await extractCommit(${JSON.stringify(repo)}, ${JSON.stringify(sha)}, ${JSON.stringify(dest)}).then(
      () => console.log(JSON.stringify({ message: 'written' })), fail);
    // Writes still going: an unhandled rejection would end the process here.
    await new Promise((resolve) => setTimeout(resolve, 200));`;
  try {
    const { stdout } = await execFileAsync(process.execPath, ['--input-type=module', '-e', script], {
      timeout: 60_000,
      env: { PATH: process.env.PATH },
    });
    return JSON.parse(stdout.trim()) as { name?: string; message: string };
  } catch (e) {
    return { died: true, message: String((e as { stderr?: string }).stderr ?? e) };
  }
}

describe('a write that fails', () => {
  it('rejects extractCommit with the path named, and leaves no rejection unhandled', async () => {
    // Small files are written several at a time while the next ones stream in; the first cannot
    // be written (its name is over the file system's 255 bytes).
    const sql = await blob(`SELECT 1;\n${'-- padding\n'.repeat(10_000)}`);
    const entries: [string, string, string][] = [['100644', sql, `${'x'.repeat(300)}.sql`]];
    for (let i = 0; i < 30; i++) entries.push(['100644', sql, `${i}_a.sql`]);
    const sha = await commitOf(await tree(entries));
    const r = await extractApart(sha, await out());
    expect(r).toEqual({ name: 'ConsortError', message: expect.stringMatching(/xxxx\.sql/) as unknown });
  });
});

describe('a tree no checkout would write', () => {
  // Each root tree holds `migrations` (1_a.sql) beside the oddity; filesAt reads the folder that
  // holds it (the plan: `migrations`, or the top) and extractCommit writes it all (the run): both
  // refuse, naming the path, and nothing is written.
  it.each([
    ['a name twice in one folder', 'twice-file', 'migrations'],
    ['a file and a folder of one name', 'file-and-folder', 'migrations'],
    ['a name holding a "/" whose folder the commit does not hold', 'slash-name', '.'],
    ['a name holding a "/" under a link', 'under-link', '.'],
    ['a file inside a submodule', 'in-submodule', '.'],
  ])('%s', async (_, kind, dir) => {
    const a = await blob('SELECT 1;\n');
    const b = await blob('DROP TABLE customers;\n');
    const m = (extra: [string, string, string][]) => tree([['100644', a, '1_a.sql'], ...extra]);
    const roots: Record<string, () => Promise<[string, string, string][]>> = {
      'twice-file': async () => [['40000', await m([['100644', b, '1_a.sql']]), 'migrations']],
      'file-and-folder': async () => [
        ['40000', await m([['40000', await tree([['100644', b, 'x']]), '1_a.sql']]), 'migrations'],
      ],
      'slash-name': async () => [
        ['40000', await m([]), 'migrations'],
        ['100644', b, 'db/2_b.sql'],
      ],
      'under-link': async () => [
        ['120000', await blob('migrations'), 'db'],
        ['40000', await m([]), 'migrations'],
        ['120000', await blob('/etc/passwd'), 'db/2_b.sql'],
      ],
      'in-submodule': async () => [
        ['160000', a.replace(/./, 'f'), 'lib'],
        ['100644', b, 'lib/x.js'],
        ['40000', await m([]), 'migrations'],
      ],
    };
    const sha = await commitOf(await tree(await roots[kind]!()));
    const refused = /^The commit [0-9a-f]{12} holds "(migrations\/1_a\.sql|db\/2_b\.sql|lib\/x\.js)": /;
    await expect(filesAt(repo, sha, dir)).rejects.toThrow(refused);
    const dest = await out();
    await expect(extractCommit(repo, sha, dest)).rejects.toThrow(refused);
    expect(await readdir(dest)).toEqual([]);
  });
});

describe('a link longer than a link can be', () => {
  it('is refused by the plan and left out of the run, its target quoted short', async () => {
    const a = await blob('SELECT 1;\n');
    // 2,500 "./" before the file: inside the commit by its path, but no file system can hold it
    // (symlink() refuses targets over 4,095 bytes), so the plan read what the run could not write.
    const long = `${'./'.repeat(2500)}1_a.sql`;
    const migrations = await tree([
      ['100644', a, '1_a.sql'],
      ['120000', await blob(long), '2_b.sql'],
    ]);
    const sha = await commitOf(await tree([['40000', migrations, 'migrations']]));
    const why = `migrations/2_b.sql is a link to "${long.slice(0, 200)}…", which is longer than a link can be (4095 bytes)`;
    await expect(filesAt(repo, sha, 'migrations')).rejects.toThrow(`${why} (commit ${sha.slice(0, 12)}).`);
    const dest = await out();
    expect(await extractCommit(repo, sha, dest)).toEqual({ leftOut: [why] });
    expect(await readdir(path.join(dest, 'migrations'))).toEqual(['1_a.sql']);
  });

  it('is read no further than that, whatever the size of its blob', async () => {
    // 64 MiB of "a/": held whole and split, it overflowed the stack ("Maximum call stack size exceeded").
    const huge = await blob(Buffer.alloc(64 * 1024 * 1024, 'a/'));
    const sha = await commitOf(await tree([['120000', huge, 'l']]));
    await expect(filesAt(repo, sha, 'l')).rejects.toThrow(
      /^l is a link to "(a\/){100}…", which is longer than a link can be/,
    );
    expect((await extractCommit(repo, sha, await out())).leftOut).toEqual([
      expect.stringMatching(/which is longer than a link can be/) as unknown,
    ]);
  }, 60_000);
});

describe('a folder another file system reads as .git', () => {
  // git refuses to check these out (core.protectNTFS is on everywhere, protectHFS on macOS); written
  // on a Mac or under Windows they would be a `.git` of the run's folder, whose config runs commands.
  it.each(['.git.', '.git  ', 'GIT~1', '.git::$INDEX_ALLOCATION', '.g\u200cit', '\ufeff.GIT'])(
    '%j is refused, and nothing is written',
    async (name) => {
      const config = await tree([['100644', await blob('[core]\n\tfsmonitor = touch /tmp/pwned\n'), 'config']]);
      const sha = await commitOf(await tree([['40000', config, name]]));
      const dest = await out();
      await expect(extractCommit(repo, sha, dest)).rejects.toThrow(
        `holds ${JSON.stringify(name)}: a name no checkout writes.`,
      );
      expect(await readdir(dest)).toEqual([]);
    },
  );
});

describe('a tree that names the same objects many times over', () => {
  /** `depth` trees of two entries, both the tree below: 2^(depth+1) - 2 paths from depth + 1 objects. */
  async function bomb(depth: number): Promise<string> {
    let t = await tree([
      ['100644', await blob('SELECT 1;\n'), 'a'],
      ['100644', await blob('SELECT 2;\n'), 'b'],
    ]);
    for (let i = 1; i < depth; i++)
      t = await tree([
        ['40000', t, 'a'],
        ['40000', t, 'b'],
      ]);
    return commitOf(t);
  }

  // The plan (filesAt) and the writer (extractCommit) list through listTree with MAX_ENTRIES (a
  // million); listing a million paths here took 13 s of the suite (97 s under its load), so the
  // limit is played with a small cap below, on the same streamed listing.
  it('caps the listing at a million paths by default', () => {
    expect(MAX_ENTRIES).toBe(1_000_000);
  });

  it('is refused past its limit of paths, and of bytes, before more is written', async () => {
    const paths = await bomb(12); // 8,190 paths
    await expect(writeCommitTree(repo, paths, await out(), { entries: 1000, bytes: MAX_BYTES })).rejects.toThrow(
      'lists more than 1000 paths',
    );
    // One 1 MiB file named 20 times: 20 MiB written from a 1 MiB blob.
    const big = await blob(Buffer.alloc(1024 * 1024, 'x'));
    const sha = await commitOf(
      await tree(Array.from({ length: 20 }, (_, i) => ['100644', big, `f${i}`] as [string, string, string])),
    );
    const dest = await out();
    await expect(writeCommitTree(repo, sha, dest, { entries: MAX_ENTRIES, bytes: 10 * 1024 * 1024 })).rejects.toThrow(
      /come to more than 10485760 bytes \(at f10\)/,
    );
    expect((await readdir(dest)).length).toBeLessThanOrEqual(10);
  });
});
