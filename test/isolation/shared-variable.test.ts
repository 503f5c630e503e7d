/**
 * respectExisting with the configuration's `suite.env` (how `consort check` hands the suite its branch
 * when the project names another variable than DATABASE_URL): the global setup leaves that variable
 * alone, and every file must then run with it — the jest environment and vitest's fixture cannot read
 * the configuration, so the setup tells them its name. Nothing here opens a database.
 */
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileAsync } from '../helpers/exec-file.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE = path.join(REPO, 'test/fixtures/isolation-project');
const SHARED_URL = 'postgresql://suite:secret@127.0.0.1:1/check_branch';

let project: string;

beforeAll(async () => {
  project = await mkdtemp(path.join(os.tmpdir(), 'consort-shared-variable-'));
  await cp(FIXTURE, project, { recursive: true });
  await mkdir(path.join(project, 'node_modules/@jest'), { recursive: true });
  await symlink(REPO, path.join(project, 'node_modules/consort-db'));
  for (const dep of ['pg', 'jest', 'vitest', 'vite', '@jest/globals'])
    await symlink(path.join(REPO, 'node_modules', dep), path.join(project, 'node_modules', dep));
  await writeFile(
    path.join(project, 'consort.config.json'),
    JSON.stringify({ migrations: { dir: 'migrations' }, suite: { env: 'TEST_DATABASE_URL' } }),
  );
  await mkdir(path.join(project, 'shared'));
  await writeFile(
    path.join(project, 'shared/jest.test.js'),
    [
      "import { expect, test } from '@jest/globals';",
      `test('runs on the variable it was given', () => expect(process.env.TEST_DATABASE_URL).toBe('${SHARED_URL}'));`,
      '',
    ].join('\n'),
  );
  await writeFile(
    path.join(project, 'shared/vitest.test.js'),
    [
      "import { expect } from 'vitest';",
      "import { test } from 'consort-db/vitest';",
      `test('the fixture is the variable it was given', ({ database }) => expect(database.url).toBe('${SHARED_URL}'));`,
      '',
    ].join('\n'),
  );
  await writeFile(
    path.join(project, 'jest.shared.config.js'),
    [
      "export default { testEnvironment: 'consort-db/jest', globalSetup: 'consort-db/jest/global-setup',",
      "  globalTeardown: 'consort-db/jest/global-teardown', transform: {}, testMatch: ['<rootDir>/shared/jest.test.js'] };",
      '',
    ].join('\n'),
  );
  await writeFile(
    path.join(project, 'vitest.shared.config.js'),
    "export default { test: { include: ['shared/vitest.test.js'], globalSetup: ['consort-db/vitest/global-setup'] } };\n",
  );
});
afterAll(async () => {
  if (project) await rm(project, { recursive: true, force: true });
});

async function run(args: string[]): Promise<string> {
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TMPDIR: os.tmpdir(),
    NO_COLOR: '1',
    CI: 'true',
    TEST_DATABASE_URL: SHARED_URL,
  };
  const { stdout, stderr } = await execFileAsync(process.execPath, args, { cwd: project, env, timeout: 120_000 }).catch(
    (e: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
    },
  );
  return `${stdout}\n${stderr}`;
}

it("jest: every file runs on suite.env's variable, left as it was set", async () => {
  const out = await run([
    '--experimental-vm-modules',
    path.join(REPO, 'node_modules/jest/bin/jest.js'),
    '--ci',
    '--config',
    'jest.shared.config.js',
  ]);
  expect(out).toContain('consort-db: TEST_DATABASE_URL is already set, so every test file uses that database');
  expect(out).toMatch(/Tests:\s+1 passed, 1 total/);
});

it("vitest: the database fixture is suite.env's variable, left as it was set", async () => {
  const out = await run([
    path.join(REPO, 'node_modules/vitest/vitest.mjs'),
    'run',
    '--config',
    'vitest.shared.config.js',
  ]);
  expect(out).toContain('consort-db: TEST_DATABASE_URL is already set, so every test file uses that database');
  expect(out).toMatch(/Tests\s+1 passed \(1\)/);
});
