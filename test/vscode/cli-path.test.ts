/**
 * The extension starts the project's own consort when `consort.cli` keeps its default: the README
 * installs Consort with `npm i -D consort-db`, which puts no `consort` on PATH, so starting
 * `consort` failed with ENOENT in every such project until the setting was changed by hand.
 */
import { build } from 'esbuild';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

type CliPath = typeof import('../../vscode/src/cli-path.js');
let projectCli: CliPath['projectCli'];
let resolveCli: CliPath['resolveCli'];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'consort-cli-path-'));
  // vscode/ is a CommonJS package built by esbuild: the module is built the same way to be loaded here.
  const outfile = path.join(dir, 'cli-path.mjs');
  const source = fileURLToPath(new URL('../../vscode/src/cli-path.ts', import.meta.url));
  await build({ entryPoints: [source], bundle: true, platform: 'node', format: 'esm', outfile, logLevel: 'warning' });
  ({ projectCli, resolveCli } = (await import(pathToFileURL(outfile).href)) as CliPath);
  await mkdir(path.join(dir, 'node_modules', 'consort-db', 'bin'), { recursive: true });
  await writeFile(path.join(dir, 'node_modules', 'consort-db', 'bin', 'consort.js'), '');
  await mkdir(path.join(dir, 'packages', 'db'), { recursive: true });
});
afterAll(() => rm(dir, { recursive: true, force: true }));

it("runs the project's installed CLI with node while consort.cli keeps its default, as npx would find it", () => {
  const bin = path.join(dir, 'node_modules', 'consort-db', 'bin', 'consort.js');
  expect(resolveCli({}, dir)).toEqual({ file: 'node', prefix: [bin] });
  expect(resolveCli({ cli: 'consort', node: '/opt/node/bin/node' }, dir)).toEqual({
    file: '/opt/node/bin/node',
    prefix: [bin],
  });
  // A workspace folder below the package that installed it (a monorepo's package) finds it too.
  expect(projectCli(path.join(dir, 'packages', 'db'))).toBe(bin);
});

it('keeps what the setting names, and PATH when the project has no install', () => {
  expect(resolveCli({ cli: '/usr/local/bin/consort' }, dir)).toEqual({ file: '/usr/local/bin/consort', prefix: [] });
  expect(resolveCli({ cli: '/src/consort/bin/consort.js' }, dir)).toEqual({
    file: 'node',
    prefix: ['/src/consort/bin/consort.js'],
  });
  expect(resolveCli({}, dir, () => false)).toEqual({ file: 'consort', prefix: [] });
  expect(resolveCli({}, undefined)).toEqual({ file: 'consort', prefix: [] });
});
