/**
 * The Action's check mode when the parent branch has a migration the base does not know (applied
 * to it by hand): without the `rebuild-baseline` input the check fails with "Parent ahead" and its
 * summary names that input — not the CLI's flag, which a workflow cannot pass; with
 * `rebuild-baseline: true` the baseline is built from base alone and the check passes. It runs the
 * Action's tsc build (lib/) as check-cancel.test.ts does, on the run's shared PostgreSQL 18.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createPostgresProvider } from '../../src/branches/postgres-provider.js';
import type { TemplateBranchProvider } from '../../src/branches/template-provider.js';
import { scenarioRepo, type ScenarioRepo } from '../../src/demo/scenarios.js';
import { installAction, runAction, webhookPayload, type InstalledAction } from '../helpers/action-run.js';
import { startFakeGitHub, type FakeGitHub } from '../helpers/fake-github.js';
import { query } from '../helpers/servers.js';
import { sharedServer } from '../setup/clusters.js';

// What the shop's suite would write, without the minute jest takes: this is about the baseline.
const SUITE = `printf '<testsuites><testsuite name="s" tests="1"><testcase classname="c" name="t"/></testsuite></testsuites>' > junit.xml`;
const TOKEN = `ghs_${'Rb4x'.repeat(9)}`;
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
  await writeFile(
    path.join(action.dir, 'dist', 'index.js'),
    `await import(${JSON.stringify(pathToFileURL(path.resolve('lib/src/action/index.js')).href)});\n`,
  );
  url = (await sharedServer()).url;
  provider = createPostgresProvider({ url, namespace });
  // A hotfix applied to the parent by hand: recorded as run there, on no branch of the repository.
  await query(
    await provider.connectionUri('main'),
    `CREATE TABLE pgmigrations (id serial PRIMARY KEY, name varchar(255) NOT NULL, run_on timestamp NOT NULL);
     INSERT INTO pgmigrations (name, run_on) VALUES ('1720000000000_hotfix_invoices', now());
     CREATE TABLE hotfix_invoices (id bigint)`,
  );
});

afterAll(async () => {
  for (const b of (await provider?.list()) ?? [])
    if (b.name !== 'main') await provider.delete(b.name, { recursive: true }).catch(() => undefined);
  await provider?.close();
  await Promise.all([action?.cleanup(), github?.close(), repo?.dispose()]);
});

async function check(inputs: Record<string, string> = {}) {
  const payload = await webhookPayload('pull_request.synchronize.json');
  payload.pull_request.base.sha = repo.baseSha;
  payload.pull_request.head.sha = repo.headSha;
  return runAction({
    action,
    token: TOKEN,
    eventName: 'pull_request',
    payload,
    workspace: repo.dir,
    repository: `${OWNER}/${REPO}`,
    apiUrl: github.url,
    dataDir: path.join(repo.dir, 'unused-data-dir'),
    node: 'machine',
    inputs: { provider: 'postgres', 'database-url': url, 'suite-command': SUITE, comment: 'off', ...inputs },
    env: { CONSORT_NAMESPACE: namespace },
  });
}

it('fails on a parent ahead of base, and its summary names the input that builds the baseline from base alone', async () => {
  const r = await check();
  expect(r.outputs.conclusion).toBe('failure');
  expect(r.report).toMatchObject({
    stages: {
      plan: { problems: [{ kind: 'parent-ahead', migrations: ['1720000000000_hotfix_invoices'] }] },
      baseline: { status: 'failed' },
    },
  });
  expect(r.summary).toContain('<code>rebuild-baseline: true</code>');
  expect(r.summary).not.toContain('--rebuild-baseline');
});

it('with rebuild-baseline: true, builds the baseline from base alone and passes', async () => {
  const r = await check({ 'rebuild-baseline': 'true' });
  expect(r.outputs.conclusion).toBe('success');
  expect(r.report).toMatchObject({
    conclusion: 'success',
    stages: { plan: { problems: [] }, baseline: { status: 'passed', reused: false } },
  });
  // Built from base alone: the hand-applied table is not on the PR branch.
  const tables = await query(
    await provider.connectionUri('pr-2'),
    "SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'hotfix_invoices'",
  );
  expect(tables[0]!.n).toBe(0);
});
