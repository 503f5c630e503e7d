/**
 * The example shop copied out of the repository, as a user copies it into a project of their own:
 * its suite command must run with the packages its package.json declares installed in its own
 * node_modules, and must not reach into Consort's. No network: the "install" links the
 * repository's copies of exactly the declared packages, as npm would place them.
 */
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { withDatabase } from '../../src/db/sql.js';
import { readJUnitReports } from '../../src/suite/junit.js';
import { execFileAsync, type ExecError } from '../helpers/exec-file.js';
import { query } from '../helpers/servers.js';
import { sharedServer } from '../setup/clusters.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SHOP = path.join(ROOT, 'examples', 'shop');
const Manifest = z.object({
  scripts: z.record(z.string(), z.string()),
  dependencies: z.record(z.string(), z.string()),
  devDependencies: z.record(z.string(), z.string()),
});
const Config = z.object({ suite: z.object({ command: z.string() }) });

let tmp: string;
let project: string;
let adminUrl: string;
const database = `shop_standalone_${process.pid}`;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'consort-users-repo-'));
  project = path.join(tmp, 'shop');
  await cp(SHOP, project, {
    recursive: true,
    filter: (src) => !src.startsWith(path.join(SHOP, 'scenarios')) && path.basename(src) !== 'junit.xml',
  });
  adminUrl = (await sharedServer()).url;
  await query(adminUrl, `CREATE DATABASE ${database}`);
});

afterAll(async () => {
  if (adminUrl) await query(adminUrl, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

/** The command of .github/consort.yml, run as the check runs it: by sh, in the project. */
async function runSuite(): Promise<{ code: number; output: string }> {
  const { suite } = Config.parse(parseYaml(await readFile(path.join(project, '.github/consort.yml'), 'utf8')));
  try {
    const r = await execFileAsync('sh', ['-c', suite.command], {
      cwd: project,
      env: { PATH: process.env.PATH ?? '', HOME: tmp, DATABASE_URL: withDatabase(adminUrl, database) },
      timeout: 120_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, output: `${r.stdout}${r.stderr}` };
  } catch (e) {
    const err = e as ExecError;
    return { code: Number(err.code ?? -1), output: `${String(err.stdout)}${String(err.stderr)}` };
  }
}

it('runs its suite with only the packages its package.json declares, from its own node_modules', async () => {
  // Nothing above the copy may lend it packages (Node would find them there).
  for (let d = tmp; d !== path.dirname(d); d = path.dirname(d)) expect(existsSync(path.join(d, 'node_modules'))).toBe(false);

  // Before `npm install`: the runner is not found, and nothing of the repository's is used.
  const before = await runSuite();
  expect(before.code).not.toBe(0);
  expect(before.output).toContain("Cannot find module 'jest/bin/jest'");

  // `npm install`: each declared package where npm puts it (its own dependencies resolve from where it lives).
  const manifest = Manifest.parse(JSON.parse(await readFile(path.join(project, 'package.json'), 'utf8')));
  for (const name of Object.keys({ ...manifest.dependencies, ...manifest.devDependencies })) {
    await mkdir(path.dirname(path.join(project, 'node_modules', name)), { recursive: true });
    await symlink(path.join(ROOT, 'node_modules', name), path.join(project, 'node_modules', name), 'dir');
  }
  expect(manifest.scripts.test).toBe(
    Config.parse(parseYaml(await readFile(path.join(project, '.github/consort.yml'), 'utf8'))).suite.command,
  );

  // The migrations with the declared node-pg-migrate, then the suite.
  await execFileAsync(
    process.execPath,
    [path.join(project, 'node_modules/node-pg-migrate/bin/node-pg-migrate.js'), 'up', '-m', 'migrations', '-d', 'DATABASE_URL'],
    { cwd: project, env: { PATH: process.env.PATH ?? '', DATABASE_URL: withDatabase(adminUrl, database) } },
  );
  const after = await runSuite();
  expect({ code: after.code, tail: after.output.slice(-2000) }).toMatchObject({ code: 0 });
  const junit = await readJUnitReports(['junit.xml'], project);
  expect(junit.totals).toMatchObject({ failed: 0, errored: 0 });
  expect(junit.totals.passed).toBeGreaterThan(10);
}, 180_000);
