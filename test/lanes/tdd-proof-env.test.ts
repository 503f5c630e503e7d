/**
 * What a TDD proof's suite gets of the run's environment: the basics and the variables the project
 * passes its code (`suite.passEnv`, credential-looking or not) — nothing else, since the agents wrote
 * the code it runs. The migrations of the same proof get the same (tdd-migration-env.test.ts).
 */
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bindWorkspace } from '../../src/git/local-workspace.js';
import { openWorkspace, type GitWorkspace } from '../../src/git/workspace.js';
import { snapshotDependencies, type Dependencies } from '../../src/lanes/tdd/clean-tree.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { proveHead, sumRepo, testStates } from '../helpers/sum-repo.js';

/** One test per variable: passes when the suite has it, fails when it does not. */
const ENV_TEST = `import { test } from 'node:test';
import assert from 'node:assert/strict';
for (const name of ['JWT_SECRET', 'APP_REGION', 'DEPLOY_TOKEN', 'APP_MODE'])
  test(name, () => assert.ok(process.env[name], name + ' is not set'));
`;

let dir: string;
let ws: GitWorkspace;
let deps: Dependencies;

beforeAll(async () => {
  dir = await sumRepo('consort-proof-env-', {
    before: async (d) => {
      await writeFile(path.join(d, 'test', 'env.test.js'), ENV_TEST);
      await writeFile(
        path.join(d, '.github', 'consort.yml'),
        'suite:\n  command: node node_modules/runner/run.mjs\n  reports: junit.xml\n  passEnv: [JWT_SECRET, APP_REGION]\nmigrations:\n  dir: migrations\n',
      );
    },
  });
  ws = await openWorkspace(dir);
  deps = await snapshotDependencies(bindWorkspace(ws), localProcessRunner);
}, 60_000);

afterAll(async () => {
  await deps?.dispose();
  await rm(dir, { recursive: true, force: true });
});

it('the suite gets the basics and suite.passEnv, not the rest of the run’s environment', async () => {
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    JWT_SECRET: 'not-a-real-secret',
    APP_REGION: 'eu',
    DEPLOY_TOKEN: 'the-runners-token',
    APP_MODE: 'production',
  };
  const states = testStates(await proveHead(dir, ws, deps, { env }));
  expect(states.filter((s) => !s.includes('sum'))).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/JWT_SECRET passed$/),
      expect.stringMatching(/APP_REGION passed$/),
      expect.stringMatching(/DEPLOY_TOKEN failed$/),
      expect.stringMatching(/APP_MODE failed$/),
    ]),
  );
}, 120_000);
