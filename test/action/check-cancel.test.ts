/**
 * The Action's check mode cancelled as a runner cancels it (`cancel-in-progress`, the Cancel
 * button: SIGINT to the step's process): the suite's process group is killed, the temporary
 * branches removed, and the `conclusion` output is `cancelled`. It runs the Action's tsc build
 * (lib/) through a one-line dist/index.js, the way runAction starts the bundle, so it tests this
 * code before `npm run bundle`; the `postgres` provider points at the run's shared PostgreSQL 18.
 * Then `mode: cleanup` removes what a killed run left.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createPostgresProvider } from '../../src/branches/postgres-provider.js';
import type { TemplateBranchProvider } from '../../src/branches/template-provider.js';
import { scenarioRepo, type ScenarioRepo } from '../../src/demo/scenarios.js';
import { installAction, runAction, webhookPayload, type InstalledAction } from '../helpers/action-run.js';
import { startFakeGitHub, type FakeGitHub } from '../helpers/fake-github.js';
import { sharedServer } from '../setup/clusters.js';
import { processesRunning, uniqueSleep } from '../helpers/processes.js';

const TOKEN = `ghs_${'Cq7w'.repeat(9)}`;
const OWNER = 'Codertocat';
const REPO = 'Hello-World';

let action: InstalledAction;
let github: FakeGitHub;
let repo: ScenarioRepo;
let url: string;
let provider: TemplateBranchProvider;
const namespace = `a${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  [action, github, repo] = await Promise.all([installAction(), startFakeGitHub(OWNER, REPO), scenarioRepo('clean')]);
  // The tsc build of the Action instead of the bundle (lib/ resolves packages from this repository).
  await writeFile(
    path.join(action.dir, 'dist', 'index.js'),
    `await import(${JSON.stringify(pathToFileURL(path.resolve('lib/src/action/index.js')).href)});\n`,
  );
  url = (await sharedServer()).url;
  provider = createPostgresProvider({ url, namespace });
});

afterAll(async () => {
  await provider?.close();
  await Promise.all([action?.cleanup(), github?.close(), repo?.dispose()]);
});

it('SIGINT during the suite: the suite group is killed, temporary branches removed, conclusion cancelled', async () => {
  const payload = await webhookPayload('pull_request.synchronize.json');
  payload.pull_request.base.sha = repo.baseSha;
  payload.pull_request.head.sha = repo.headSha;
  const started = path.join(repo.dir, 'suite-started');
  const sleep = uniqueSleep(300); // the suite's grandchild, found by its argument in any PID namespace
  const r = await runAction({
    action,
    token: TOKEN,
    eventName: 'pull_request',
    payload,
    workspace: repo.dir,
    repository: `${OWNER}/${REPO}`,
    apiUrl: github.url,
    dataDir: path.join(repo.dir, 'unused-data-dir'),
    node: 'machine',
    inputs: {
      provider: 'postgres',
      'database-url': url,
      'suite-command': `sleep ${sleep} & touch suite-started; wait`,
      comment: 'off',
    },
    env: { CONSORT_NAMESPACE: namespace },
    signalOn: { when: () => existsSync(started), signal: 'SIGINT' },
  });
  expect(r.stdout).toContain('SIGINT: cancelling the check');
  expect(r.outputs.conclusion).toBe('cancelled');
  expect(r.code).toBe(1);
  expect(r.report).toMatchObject({ conclusion: 'cancelled', cancelled: { reason: 'SIGINT' } });
  expect(await processesRunning(sleep)).toBe(0); // the grandchild is gone (found by its argument)
  expect((await provider.list()).map((b) => b.name).filter((n) => n.startsWith('pr-'))).toEqual(['pr-2']);
});

it('mode: cleanup removes pr-N with the pr-N-rev a killed run left on the baseline', async () => {
  const baseline = (await provider.list()).find((b) => b.name.startsWith('baseline-'))!.name;
  await provider.create({ name: 'pr-2-rev', parent: baseline }); // what a run killed during reversibility leaves
  const payload = await webhookPayload('pull_request.closed.json');
  const r = await runAction({
    action,
    token: TOKEN,
    eventName: 'pull_request',
    payload,
    workspace: repo.dir,
    repository: `${OWNER}/${REPO}`,
    apiUrl: github.url,
    dataDir: path.join(repo.dir, 'unused-data-dir'),
    node: 'machine',
    inputs: { mode: 'cleanup', provider: 'postgres', 'database-url': url },
    env: { CONSORT_NAMESPACE: namespace },
  });
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('Deleted database branches pr-2-rev, pr-2.');
  expect((await provider.list()).map((b) => b.name).filter((n) => n.startsWith('pr-'))).toEqual([]);
});
