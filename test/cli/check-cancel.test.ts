/**
 * `consort check` as a CI runner cancels it: SIGINT (Ctrl-C, the runner's first signal) while the
 * suite runs. The built CLI in a process of its own, on the example shop's history, with the
 * postgres provider (no server of its own to boot): the suite's process group is
 * killed, the temporary branches are removed, the report says `cancelled`, the exit code is 130.
 * The postgres provider points at the run's shared PostgreSQL 18 (clones, no server to boot).
 */
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createPostgresProvider } from '../../src/branches/postgres-provider.js';
import type { TemplateBranchProvider } from '../../src/branches/template-provider.js';
import { scenarioRepo, type ScenarioRepo } from '../../src/demo/scenarios.js';
import { CheckReport } from '../../src/report/check-report.js';
import { processesRunning, uniqueSleep } from '../helpers/processes.js';
import { sharedServer } from '../setup/clusters.js';

const BIN = path.resolve('bin/consort.js');

let url: string;
let namespace: string;
let provider: TemplateBranchProvider;
let repo: ScenarioRepo;
beforeAll(async () => {
  url = (await sharedServer()).url;
  namespace = `c${randomBytes(4).toString('hex')}`;
  provider = createPostgresProvider({ url, namespace });
  repo = await scenarioRepo('clean');
});
afterAll(async () => {
  await repo?.dispose();
  await provider?.close();
});

function consort(args: string[], onStderr: (text: string, child: ReturnType<typeof spawn>) => void = () => undefined) {
  const child = spawn(
    process.execPath,
    [BIN, '-C', repo.dir, '--provider', 'postgres', '--namespace', namespace, ...args],
    {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, CONSORT_POSTGRES_URL: url, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
    onStderr(stderr, child);
  });
  child.stdout!.resume();
  return new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stderr })),
  );
}

it('SIGINT during the suite: suite group killed, temporaries removed, report cancelled, exit 130; the next run passes', async () => {
  const config = path.join(repo.dir, 'cancel.consort.yml');
  const sleep = uniqueSleep(300); // the suite's grandchild, found by its argument in any PID namespace
  await writeFile(
    config,
    [
      'database: { seed: { file: seed.sql } }',
      'migrations: { dir: migrations }',
      `suite: { command: "sleep ${sleep} & echo suite-started; wait", reports: [] }`,
    ].join('\n'),
  );
  const json = path.join(repo.dir, 'report.json');
  let sent = false;
  const r = await consort(
    ['check', '--base', 'main', '--pr', '41', '--config', config, '--json', json, '--verbose'],
    (text, child) => {
      if (!sent && text.includes('suite-started')) {
        sent = true;
        child.kill('SIGINT');
      }
    },
  );
  expect(sent).toBe(true);
  expect(r.stderr).toContain('SIGINT: cancelling the check');
  expect(r.code).toBe(130);
  const report = CheckReport.parse(JSON.parse(await readFile(json, 'utf8')));
  expect(report).toMatchObject({ conclusion: 'cancelled', cancelled: { reason: 'SIGINT' } });
  expect(await processesRunning(sleep)).toBe(0); // the grandchild is gone (found by its argument)
  const names = (await provider.list()).map((b) => b.name);
  expect(names.filter((n) => n.startsWith('pr-41-'))).toEqual([]);

  await writeFile(
    config,
    [
      'database: { seed: { file: seed.sql } }',
      'migrations: { dir: migrations }',
      'suite: { command: "true", reports: [] }',
    ].join('\n'),
  );
  const again = await consort([
    'check',
    '--base',
    'main',
    '--pr',
    '41',
    '--config',
    config,
    '--json',
    json,
    '--cleanup',
  ]);
  expect(again.code).toBe(0);
  expect(JSON.parse(await readFile(json, 'utf8'))).toMatchObject({ conclusion: 'success' });
});

it("SIGTERM (a CI runner's cancel) during the suite: the same clean-up, report cancelled with SIGTERM, exit 143", async () => {
  const config = path.join(repo.dir, 'term.consort.yml');
  const sleep = uniqueSleep(300); // the suite's grandchild, found by its argument in any PID namespace
  await writeFile(
    config,
    [
      'database: { seed: { file: seed.sql } }',
      'migrations: { dir: migrations }',
      `suite: { command: "sleep ${sleep} & echo suite-started; wait", reports: [] }`,
    ].join('\n'),
  );
  const json = path.join(repo.dir, 'term-report.json');
  let sent = false;
  const r = await consort(
    ['check', '--base', 'main', '--pr', '42', '--config', config, '--json', json, '--verbose'],
    (text, child) => {
      if (!sent && text.includes('suite-started')) {
        sent = true;
        child.kill('SIGTERM');
      }
    },
  );
  expect(sent).toBe(true);
  expect(r.stderr).toContain('SIGTERM: cancelling the check');
  expect(r.code).toBe(143);
  const report = CheckReport.parse(JSON.parse(await readFile(json, 'utf8')));
  expect(report).toMatchObject({ conclusion: 'cancelled', cancelled: { reason: 'SIGTERM' } });
  expect(await processesRunning(sleep)).toBe(0); // the grandchild is gone (found by its argument)
  expect((await provider.list()).map((b) => b.name).filter((n) => n.startsWith('pr-42-'))).toEqual([]);
});
