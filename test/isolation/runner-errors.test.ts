/**
 * jest and vitest print an error's message, never a ConsortError's hint: what consort-db's wiring
 * says to do next must reach the user inside the message. Each run here stops before any database
 * (a missing global setup, invalid options), so no server is needed.
 */
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileAsync } from '../helpers/exec-file.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE = path.join(REPO, 'test/fixtures/isolation-project');

let project: string;

beforeAll(async () => {
  project = await mkdtemp(path.join(os.tmpdir(), 'consort-runner-errors-'));
  await cp(FIXTURE, project, { recursive: true });
  await mkdir(path.join(project, 'node_modules/@jest'), { recursive: true });
  await symlink(REPO, path.join(project, 'node_modules/consort-db'));
  for (const dep of ['pg', 'jest', 'vitest', 'vite', '@jest/globals'])
    await symlink(path.join(REPO, 'node_modules', dep), path.join(project, 'node_modules', dep));
});
afterAll(async () => {
  if (project) await rm(project, { recursive: true, force: true });
});

async function failingRun(args: string[]): Promise<string> {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: os.tmpdir(), NO_COLOR: '1', CI: 'true' };
  const result = await execFileAsync(process.execPath, args, { cwd: project, env, timeout: 120_000 }).then(
    (r) => ({ ok: true, out: `${r.stdout}\n${r.stderr}` }),
    (e: { stdout?: string; stderr?: string }) => ({ ok: false, out: `${e.stdout ?? ''}\n${e.stderr ?? ''}` }),
  );
  expect(result.ok).toBe(false);
  return result.out;
}

const jest = (config: string) => [
  '--experimental-vm-modules',
  path.join(REPO, 'node_modules/jest/bin/jest.js'),
  '--ci',
  '--config',
  config,
  'jest/a.test.js',
];

it('jest: the environment without its global setup says which lines to add to the config', async () => {
  await writeFile(
    path.join(project, 'jest.no-setup.config.js'),
    "export default { testEnvironment: 'consort-db/jest', transform: {}, testMatch: ['<rootDir>/jest/**/*.test.js'] };\n",
  );
  const out = await failingRun(jest('jest.no-setup.config.js'));
  // On the line after the message: not only in a code frame of the source, which the package leaves out.
  expect(out).toMatch(
    /has no test run to lease a database from\.\n\s*Add globalSetup: 'consort-db\/jest\/global-setup'/,
  );
});

it("jest: the global setup's invalid options name what it takes", async () => {
  await writeFile(
    path.join(project, 'jest.bad-options.config.js'),
    [
      "export default { testEnvironment: 'consort-db/jest', globalSetup: 'consort-db/jest/global-setup',",
      "  globalTeardown: 'consort-db/jest/global-teardown', testEnvironmentOptions: { consortDb: { poolSize: 'four' } },",
      "  transform: {}, testMatch: ['<rootDir>/jest/**/*.test.js'] };\n",
    ].join('\n'),
  );
  const out = await failingRun(jest('jest.bad-options.config.js'));
  expect(out).toMatch(
    /consortDb\.poolSize: .*\n\s*consortDb takes root, config, env, poolSize, ttl and respectExisting/,
  );
});

it('vitest: setupFiles without the global setup says which line to add to the config', async () => {
  await writeFile(
    path.join(project, 'vitest.no-setup.config.js'),
    "export default { test: { include: ['vitest/a.test.js'], setupFiles: ['consort-db/vitest/setup'] } };\n",
  );
  const out = await failingRun([
    path.join(REPO, 'node_modules/vitest/vitest.mjs'),
    'run',
    '--config',
    'vitest.no-setup.config.js',
  ]);
  expect(out).toMatch(
    /has no test run to lease a database from\.\n\s*Add globalSetup: \['consort-db\/vitest\/global-setup'\]/,
  );
});
