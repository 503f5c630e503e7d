/**
 * Several App processes on one store (each a runtime with its own queue workers and pool): per-PR
 * work is serialized and a newer SHA supersedes an older one; a process killed mid-check leaves a
 * run another process takes over; duplicate jobs and redelivered webhooks do nothing twice.
 * GitHub is a local stand-in and the lane a recording stand-in: this is about the queue and store.
 */
import { scenarioRepo, type ScenarioRepo } from '../../src/demo/scenarios.js';
import { handleAnnounce } from '../../app/jobs/announce.js';
import { handleRunJob } from '../../app/jobs/run-job.js';
import { recoverRuns } from '../../app/jobs/sweep.js';
import type { AppRuntime } from '../../app/runtime.js';
import { getRun, prSubject, runsOf } from '../../app/store/runs.js';
import { GitHubApiError } from '../../src/ports/github.js';
import { freshDatabase, type TestDatabase } from './helpers/database.js';
import { FakeGitHub } from './helpers/fake-github.js';
import { recordingLane } from './helpers/lanes.js';
import { pullRequestPayload } from './helpers/payloads.js';
import { commit, tarballOf } from './helpers/repo.js';
import { noBranches, startTestRuntime } from './helpers/runtime.js';
import { eventually } from './helpers/wait.js';

let db: TestDatabase;
let repo: ScenarioRepo;
const runtimes: AppRuntime[] = [];
const REPO_ID = 5150;

beforeAll(async () => {
  db = await freshDatabase();
  repo = await scenarioRepo(null);
});
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.stop({ graceful: false })));
});
afterAll(async () => {
  await repo?.dispose();
  await db?.drop();
});

async function setup(extraHeads = 0): Promise<{ gh: FakeGitHub; heads: string[] }> {
  const gh = new FakeGitHub();
  gh.tarballs.set(repo.baseSha, await tarballOf(repo.dir, repo.baseSha));
  const heads: string[] = [];
  for (let i = 0; i <= extraHeads; i++) {
    const sha = await commit(repo.dir, { [`notes/${Date.now()}-${i}.txt`]: String(i) });
    gh.tarballs.set(sha, await tarballOf(repo.dir, sha));
    heads.push(sha);
  }
  return { gh, heads };
}

async function processWith(
  gh: FakeGitHub,
  lane: ReturnType<typeof recordingLane>['lane'],
  leaseSeconds = 5,
): Promise<AppRuntime> {
  const r = await startTestRuntime({
    storeUrl: db.url,
    github: async () => gh,
    providers: noBranches(),
    lane,
    jobs: { leaseSeconds },
  });
  runtimes.push(r);
  return r;
}

const opened = (id: string, number: number, head: string, action: 'opened' | 'synchronize' = 'opened') => ({
  id,
  name: 'pull_request',
  payload: pullRequestPayload({ action, number, head, base: repo.baseSha, repositoryId: REPO_ID }),
});

it('serializes a pull request across processes: a newer push cancels the running check, then runs', async () => {
  const {
    gh,
    heads: [a, b],
  } = await setup(1);
  const { lane, calls } = recordingLane(new Set([a!]));
  const p1 = await processWith(gh, lane);
  const p2 = await processWith(gh, lane);
  await p1.intake.pullRequest(opened('ser-1', 1, a!));
  await eventually(async () => calls.find((c) => c.head === a), 'the first check to start');
  await p2.intake.pullRequest(opened('ser-2', 1, b!, 'synchronize'));
  const states = async () => (await runsOf(p1.store.pool, prSubject(REPO_ID, 1))).map((r) => [r.state, r.conclusion]);
  await eventually(
    async () => (await states()).every(([state]) => state === 'completed' || state === 'cancelled'),
    'both runs to finish',
  );

  const [first, second] = [calls.find((c) => c.head === a)!, calls.find((c) => c.head === b)!];
  expect(first.aborted).toBe(true);
  expect(second.started).toBeGreaterThanOrEqual(first.ended!); // never side by side
  expect(gh.concluded().map((c) => c.conclusion)).toEqual(['cancelled', 'success']);
  expect(gh.concluded()[0]!.summary).toContain(`superseded by a newer run at ${b!.slice(0, 7)}`);
  expect(await states()).toEqual([
    ['cancelled', 'cancelled'],
    ['completed', 'success'],
  ]);
});

it('a process killed mid-check leaves a run that another process takes over; the dead one writes nothing', async () => {
  const {
    gh,
    heads: [head],
  } = await setup();
  const held = recordingLane(new Set([head!]));
  const victim = await processWith(gh, held.lane, 1);
  await victim.intake.pullRequest(opened('kill-1', 2, head!));
  await eventually(async () => held.calls.length === 1, 'the check to start in the first process');
  const [run] = await runsOf(victim.store.pool, prSubject(REPO_ID, 2));
  // Killed: its queue and its connections are gone without a goodbye; its lease stops being renewed.
  await victim.stop({ graceful: false });

  const survivorLane = recordingLane();
  const survivor = await processWith(gh, survivorLane.lane, 1);
  // The periodic sweep finds the run once its lease has passed and hands it to a live process.
  await eventually(async () => (await recoverRuns(survivor.deps)).includes(run!.id), 'the lease to pass', 10_000, 250);
  await eventually(
    async () => (await getRun(survivor.store.pool, run!.id))?.state === 'completed',
    'the survivor to finish the run',
  );
  expect(survivorLane.calls).toHaveLength(1);
  await eventually(
    async () => held.calls[0]!.ended !== undefined,
    'the dead process to notice its lease is gone',
    10_000,
  );
  expect(held.calls[0]!.aborted).toBe(true);
  // One conclusion, by the survivor (FakeGitHub throws if a check run is concluded twice).
  expect(gh.concluded()).toEqual([expect.objectContaining({ conclusion: 'success' })]);
  expect((await getRun(survivor.store.pool, run!.id))!.attempts).toBe(2);
});

it('no check runs twice: not for a redelivered webhook, not for duplicate jobs', async () => {
  const {
    gh,
    heads: [head],
  } = await setup();
  const { lane, calls } = recordingLane();
  const p1 = await processWith(gh, lane);
  const p2 = await processWith(gh, lane);
  expect(await p1.intake.pullRequest(opened('dup-1', 3, head!))).toMatchObject({ kind: 'enqueued', job: 'announce' });
  expect(await p2.intake.pullRequest(opened('dup-1', 3, head!))).toEqual({ kind: 'duplicate' });
  await eventually(
    async () => (await runsOf(p1.store.pool, prSubject(REPO_ID, 3)))[0]?.state === 'completed',
    'the check to finish',
  );
  const [run] = await runsOf(p1.store.pool, prSubject(REPO_ID, 3));
  // The same run's job, sent again to both processes (as a retry or a recovery might).
  await p1.queue.sendRun({ runId: run!.id });
  await p2.queue.sendRun({ runId: run!.id });
  p1.queue.wake();
  p2.queue.wake();
  const open = async () =>
    (
      await p1.store.pool.query(
        "SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'consort-run' AND (data->>'runId')::int = $1 AND state < 'completed'",
        [run!.id],
      )
    ).rows[0].n as number;
  await eventually(async () => (await open()) === 0, 'the duplicate jobs to be done');
  const done = await p1.store.pool.query(
    "SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'consort-run' AND (data->>'runId')::int = $1 AND state = 'completed'",
    [run!.id],
  );
  expect(done.rows[0].n).toBe(3);
  expect(calls).toHaveLength(1);
  expect(gh.calls.filter((c) => c.method === 'createCheckRun')).toHaveLength(1);
});

it('an unexpected error gives the run back to the queue; the last attempt reports it on the check run', async () => {
  const {
    gh,
    heads: [head],
  } = await setup();
  let calls = 0;
  const failing = async (): Promise<never> => {
    calls++;
    throw new Error('the lane fell over');
  };
  const p = await startTestRuntime({
    storeUrl: db.url,
    github: async () => gh,
    providers: noBranches(),
    lane: failing,
    workers: false,
    jobs: { maxAttempts: 2 },
  });
  runtimes.push(p);
  await p.intake.pullRequest(opened('err-1', 4, head!));
  const [run] = await runsOf(p.store.pool, prSubject(REPO_ID, 4));
  await handleAnnounce(p.deps, { kind: 'announce', runId: run!.id });
  // Attempt 1: the job fails (pg-boss retries it) and the run is claimable again.
  await expect(handleRunJob(p.deps, { runId: run!.id })).rejects.toThrow('the lane fell over');
  expect(await getRun(p.store.pool, run!.id)).toMatchObject({ state: 'queued', attempts: 1 });
  expect(gh.concluded()).toEqual([]);
  // Attempt 2, the last: reported, and the run is over.
  await handleRunJob(p.deps, { runId: run!.id });
  expect(calls).toBe(2);
  expect(gh.concluded()).toEqual([
    expect.objectContaining({ conclusion: 'failure', summary: expect.stringContaining('the lane fell over') }),
  ]);
  expect(await getRun(p.store.pool, run!.id)).toMatchObject({ state: 'completed', conclusion: 'failure', attempts: 2 });
});

it('the sweep announces a check whose announcement was lost', async () => {
  const {
    gh,
    heads: [head],
  } = await setup();
  const p = await startTestRuntime({
    storeUrl: db.url,
    github: async () => gh,
    providers: noBranches(),
    workers: false,
  });
  runtimes.push(p);
  await p.intake.pullRequest(opened('lost-1', 5, head!));
  const [run] = await runsOf(p.store.pool, prSubject(REPO_ID, 5));
  await p.store.pool.query("DELETE FROM pgboss.job WHERE name = 'consort-quick' AND (data->>'runId')::int = $1", [
    run!.id,
  ]); // the job is gone
  expect(await recoverRuns(p.deps, 3600)).not.toContain(run!.id); // too recent to call lost
  expect(await recoverRuns(p.deps, 0)).toContain(run!.id);
  const queued = await p.store.pool.query(
    "SELECT data FROM pgboss.job WHERE name = 'consort-quick' AND (data->>'runId')::int = $1",
    [run!.id],
  );
  expect(queued.rows.map((r) => r.data)).toEqual([{ kind: 'announce', runId: run!.id }]);
});

it('an announcement retried after GitHub made the check run (its id never saved) takes that run, not a second', async () => {
  const {
    gh,
    heads: [head],
  } = await setup();
  const p = await startTestRuntime({
    storeUrl: db.url,
    github: async () => gh,
    providers: noBranches(),
    workers: false,
  });
  runtimes.push(p);
  await p.intake.pullRequest(opened('made-1', 6, head!));
  const [run] = await runsOf(p.store.pool, prSubject(REPO_ID, 6));
  // GitHub makes the run, then answers 502 (and the adapter's look for it failed too): the job fails.
  const create = gh.createCheckRun.bind(gh);
  gh.createCheckRun = async (...args) => {
    await create(...args);
    throw new GitHubApiError(502, 'GitHub API create check run failed (HTTP 502): Bad Gateway');
  };
  await expect(handleAnnounce(p.deps, { kind: 'announce', runId: run!.id })).rejects.toThrow('HTTP 502');
  expect(await getRun(p.store.pool, run!.id)).toMatchObject({ checkRunId: null });
  gh.createCheckRun = create;
  // The queue's retry (or the sweep) announces it again.
  await handleAnnounce(p.deps, { kind: 'announce', runId: run!.id });
  const made = [...gh.checkRuns.entries()].filter(([, c]) => c.headSha === head);
  expect(made).toHaveLength(1);
  expect(await getRun(p.store.pool, run!.id)).toMatchObject({ checkRunId: made[0]![0] });
});
