/**
 * check-dist: the committed dist/ is exactly what `npm run bundle` builds from this tree, so what
 * GitHub runs is what was reviewed and tested. After changing anything the Action bundles, run
 * `npm run bundle` and commit dist/.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Where two builds part, with some context, or null when they are equal. */
function firstDifference(a: Buffer, b: Buffer): { offset: number; built: string; committed: string } | null {
  if (a.equals(b)) return null;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const around = (x: Buffer) => x.subarray(Math.max(0, i - 60), i + 60).toString('utf8');
  return { offset: i, built: around(a), committed: around(b) };
}

let out: string;
beforeAll(async () => {
  out = await mkdtemp(path.join(os.tmpdir(), 'consort-check-dist-'));
  await exec(process.execPath, [path.join(ROOT, 'scripts', 'bundle.mjs'), out], { cwd: ROOT });
});
afterAll(() => rm(out, { recursive: true, force: true }));

describe('dist/', () => {
  it('holds exactly the bundle, the migration child, the post step, its license list and the built-in role prompts', async () => {
    expect((await readdir(path.join(ROOT, 'dist'))).sort()).toEqual([
      'apply-child.js',
      'index.js',
      'licenses.txt',
      'post.js',
      'roles',
    ]);
    expect(await readdir(path.join(ROOT, 'dist', 'roles'))).toEqual(await readdir(path.join(out, 'roles')));
  });

  it('ships every built-in role prompt unchanged', async () => {
    const names = (await readdir(path.join(ROOT, 'roles'))).filter((f) => f.endsWith('.md')).sort();
    expect((await readdir(path.join(ROOT, 'dist', 'roles'))).sort()).toEqual(names);
    for (const name of names)
      expect(await readFile(path.join(ROOT, 'dist', 'roles', name), 'utf8')).toBe(
        await readFile(path.join(ROOT, 'roles', name), 'utf8'),
      );
  });

  it.each(['index.js', 'apply-child.js', 'post.js', 'licenses.txt'])(
    '%s is byte-for-byte what npm run bundle builds (run it and commit dist/ if this fails)',
    async (file) => {
      const [built, committed] = await Promise.all([
        readFile(path.join(out, file)),
        readFile(path.join(ROOT, 'dist', file)),
      ]);
      expect(firstDifference(built, committed)).toBeNull();
    },
  );

  // That it loads with no node_modules at all is what dist.test.ts shows, running it from a copy.
  it('lists the license of every bundled package with its text', async () => {
    const licenses = await readFile(path.join(ROOT, 'dist', 'licenses.txt'), 'utf8');
    for (const pkg of ['@actions/core', '@actions/github', 'pg', 'node-pg-migrate', 'zod', 'yaml', 'undici']) {
      expect(licenses).toMatch(new RegExp(`^${pkg}@\\d[^\\n]* \\(MIT|ISC\\)\\n={78}\\n\\n\\S`, 'm'));
    }
  });
});
