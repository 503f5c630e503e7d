/** The dotenv writer: one line set, every other byte kept, written by rename, through symlinks. */
import { lstat, mkdtemp, readFile, readdir, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { formatEnvValue, getEnvValue, readEnvValue, setEnvLine, writeEnvValue } from '../../src/pairing/env-file.js';

const URL_A = 'postgresql://postgres@127.0.0.1:5432/app_feature-a';
const URL_B = 'postgresql://u:p%23ss@db:5432/app_b';

describe('setEnvLine', () => {
  it.each([
    ['an empty file', '', `DATABASE_URL=${URL_A}\n`],
    ['a file without the key', 'A=1\n# comment\n', `A=1\n# comment\nDATABASE_URL=${URL_A}\n`],
    ['a file without a final newline', 'A=1', `A=1\nDATABASE_URL=${URL_A}\n`],
    ['the key in the middle', 'A=1\nDATABASE_URL=old\nB="x y"\n', `A=1\nDATABASE_URL=${URL_A}\nB="x y"\n`],
    ['an exported key', 'export DATABASE_URL=old\n', `export DATABASE_URL=${URL_A}\n`],
    ['CRLF line ends', 'A=1\r\nDATABASE_URL=old\r\n', `A=1\r\nDATABASE_URL=${URL_A}\r\n`],
    ['a similar key left alone', 'DATABASE_URL_RO=ro\n', `DATABASE_URL_RO=ro\nDATABASE_URL=${URL_A}\n`],
  ])('sets the key in %s', (_label, before, after) => {
    expect(setEnvLine(before, 'DATABASE_URL', URL_A)).toBe(after);
  });

  it('quotes values a dotenv loader would cut, and reads them back', () => {
    for (const value of [URL_A, 'a b', 'p#ss', 'say "hi"', 'back\\slash', '$HOME', '']) {
      const content = setEnvLine('X=1\n', 'DATABASE_URL', value);
      expect(getEnvValue(content, 'DATABASE_URL')).toBe(value);
    }
    expect(formatEnvValue(URL_B)).toBe(URL_B);
    expect(formatEnvValue('p#ss')).toBe('"p#ss"');
  });
});

describe('writeEnvValue', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'consort-env-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('creates the file owner-only, then changes only the line, keeping the mode and leaving no temp file', async () => {
    const file = path.join(dir, '.env');
    expect(await writeEnvValue(file, 'DATABASE_URL', URL_A)).toBe('written');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    await writeFile(file, `# app\nSECRET=keep me\nDATABASE_URL=${URL_A}\nPORT=3000`, { mode: 0o640 });
    await import('node:fs/promises').then((fs) => fs.chmod(file, 0o640));
    expect(await writeEnvValue(file, 'DATABASE_URL', URL_B)).toBe('written');
    expect(await readFile(file, 'utf8')).toBe(`# app\nSECRET=keep me\nDATABASE_URL=${URL_B}\nPORT=3000`);
    expect((await stat(file)).mode & 0o777).toBe(0o640);
    expect(await writeEnvValue(file, 'DATABASE_URL', URL_B)).toBe('unchanged');
    expect(await readdir(dir)).toEqual(['.env']);
    expect(await readEnvValue(file, 'DATABASE_URL')).toBe(URL_B);
    expect(await readEnvValue(path.join(dir, 'missing'), 'DATABASE_URL')).toBeUndefined();
  });

  it('writes through a symlink and keeps the link', async () => {
    const real = path.join(dir, 'shared.env');
    await writeFile(real, 'A=1\n');
    await symlink('shared.env', path.join(dir, '.env'));
    await writeEnvValue(path.join(dir, '.env'), 'APP_DB', URL_A);
    expect((await lstat(path.join(dir, '.env'))).isSymbolicLink()).toBe(true);
    expect(await readlink(path.join(dir, '.env'))).toBe('shared.env');
    expect(await readFile(real, 'utf8')).toBe(`A=1\nAPP_DB=${URL_A}\n`);
  });

  it('a reader never sees a half-written file while values change', async () => {
    const file = path.join(dir, '.env');
    const long = (i: number) => `postgresql://postgres@127.0.0.1:5432/${String(i).repeat(2000)}`;
    await writeEnvValue(file, 'DATABASE_URL', long(1));
    let reads = 0;
    let stop = false;
    const reader = (async () => {
      while (!stop) {
        const v = await readEnvValue(file, 'DATABASE_URL');
        expect([long(1), long(2), long(3)]).toContain(v);
        reads += 1;
      }
    })();
    for (let i = 0; i < 30; i += 1) await writeEnvValue(file, 'DATABASE_URL', long((i % 3) + 1));
    stop = true;
    await reader;
    expect(reads).toBeGreaterThan(0);
  });
});
