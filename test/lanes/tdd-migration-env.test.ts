/**
 * The TDD lane applies a feature's JS migrations with what its proofs' suites get of the run's
 * environment — the basics, and the variables the project passes its code (`suite.passEnv`) — so a
 * migration whose import reads `APP_REGION` when it loads runs where the suite would, and a
 * variable that is not passed is missing for both alike (the agents wrote this code: the run's
 * other variables, credentials or not, are not theirs to read). Connection variables never reach it.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { createBranches, type Branches } from '../../src/lanes/tdd/database.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { localTestProvider, query, type TestProvider } from '../helpers/servers.js';
import { tddAdapters, workspaceAt } from '../helpers/tdd.js';
import { execFileAsync } from '../helpers/exec-file.js';

const git = (cwd: string, ...args: string[]) =>
  execFileAsync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd });

const MIGRATION = `const region = process.env.APP_REGION;
if (!region) throw new Error('APP_REGION is not set');
exports.up = (pgm) => {
  pgm.createTable('region_' + region, { id: 'id' });
  pgm.sql("COMMENT ON TABLE region_" + region + " IS '" + [process.env.DEPLOY_TOKEN, process.env.DATABASE_URL].join('|') + "'");
};
exports.down = (pgm) => pgm.dropTable('region_' + region);
`;

let t: TestProvider;
let dir: string;
let branches: Branches | undefined;

beforeAll(async () => {
  t = await localTestProvider();
  dir = await mkdtemp(path.join(os.tmpdir(), 'consort-tdd-env-'));
  await mkdir(path.join(dir, 'migrations'));
  await mkdir(path.join(dir, '.github'));
  await writeFile(path.join(dir, 'migrations', '1700000000000_region.js'), MIGRATION);
  await writeFile(
    path.join(dir, '.github', 'consort.yml'),
    'migrations:\n  dir: migrations\nsuite:\n  command: node -e 0\n  passEnv: [APP_REGION, DATABASE_URL]\n',
  );
  await git(dir, 'init', '-q', '-b', 'main');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'base');
}, 60_000);

afterAll(async () => {
  await branches?.settle();
  await rm(dir, { recursive: true, force: true });
  await t?.cleanup();
});

const RUN_ENV = {
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '',
  APP_REGION: 'eu',
  DEPLOY_TOKEN: 'secret',
  DATABASE_URL: 'postgres://elsewhere/db',
};

/** The lane's branches for the repository, with its configuration's passEnv (or `passEnv`), in RUN_ENV. */
async function branchesWith(passEnv?: string[]): Promise<Branches> {
  const { config } = await loadConfig(dir);
  await branches?.settle();
  branches = createBranches({
    provider: t.provider,
    config: passEnv === undefined ? config : { ...config, suite: { ...config.suite, passEnv } },
    ws: await workspaceAt(dir),
    git: tddAdapters.git,
    migrations: tddAdapters.migrations,
    schemas: tddAdapters.schemas,
    env: RUN_ENV,
    processes: localProcessRunner,
    baseCommit: (await git(dir, 'rev-parse', 'HEAD')).stdout.trim(),
  });
  return branches;
}

it("applies a feature's JS migration with the variables the project passes, without another database's URL", async () => {
  const branches = await branchesWith();
  const fresh = await branches.fresh('env-proof', dir);
  expect(fresh.migrations.ok ? 'applied' : fresh.migrations.failed.error.message).toBe('applied');
  const [row] = await query<{ c: string }>(
    await t.provider.connectionUri(branches.providerName('env-proof')),
    "SELECT obj_description('region_eu'::regclass) AS c",
  );
  expect(row?.c).toBe('|');
}, 120_000);

it("a variable the project does not pass is missing, as it is for the proofs' suites", async () => {
  const fresh = await (await branchesWith([])).fresh('env-unpassed', dir);
  expect(fresh.migrations.ok ? 'applied' : fresh.migrations.failed.error.message).toContain('APP_REGION is not set');
}, 120_000);
