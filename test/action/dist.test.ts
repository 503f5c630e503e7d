/**
 * The committed dist/index.js, run as a GitHub runner runs it (see test/helpers/action-run.ts),
 * on the example shop's `clean` scenario against a local stand-in for GitHub's REST API: a pull
 * request checked twice (one sticky comment, created then updated), secrets kept out of every
 * output, and the branch deleted when the pull request closes.
 */
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { createLocalProvider } from '../../src/branches/local/provider.js';
import { EmbeddedServer } from '../../src/branches/local/server.js';
import { scenarioRepo, type ScenarioRepo } from '../../src/demo/scenarios.js';
import { CHECK_COMMENT_MARKER } from '../../src/github/sticky-comment.js';
import { CheckReport } from '../../src/report/check-report.js';
import {
  installAction,
  QUICK_SUITE,
  runAction,
  webhookPayload,
  type ActionResult,
  type InstalledAction,
  type RecordedPullRequestEvent,
} from '../helpers/action-run.js';
import { startFakeGitHub, type FakeGitHub } from '../helpers/fake-github.js';
import { ownDataDir, postgresTestProvider, SYSTEM_PG_URL, type TestProvider } from '../helpers/servers.js';

const TOKEN = `ghs_${'x7Kq2'.repeat(7)}a`;
const OWNER = 'Codertocat';
const REPO = 'Hello-World';

let action: InstalledAction;
let github: FakeGitHub;
let repo: ScenarioRepo;
let dataDir: string;
/**
 * One namespace on the system server for both Nodes: the second run reuses the baseline the first
 * built (building it is the first run's proof), and each run's pr-2 is created and deleted anew.
 */
let systemNamespace: Promise<TestProvider> | undefined;
const systemServerNamespace = (): Promise<TestProvider> => (systemNamespace ??= postgresTestProvider());

beforeAll(async () => {
  [action, github, repo] = await Promise.all([installAction(), startFakeGitHub(OWNER, REPO), scenarioRepo('clean')]);
  dataDir = await ownDataDir(); // the Action starts it, as on a runner
});

afterAll(async () => {
  await (await systemNamespace)?.cleanup();
  if (dataDir) {
    await new EmbeddedServer(dataDir).stop();
    await rm(dataDir, { recursive: true, force: true });
  }
  await Promise.all([action?.cleanup(), github?.close(), repo?.dispose()]);
});

beforeEach(() => {
  github.requests.length = 0;
});
afterEach(() => expect(github.unexpected).toEqual([]));

async function prPayload(file: string): Promise<RecordedPullRequestEvent> {
  const payload = await webhookPayload(file);
  payload.pull_request.base.sha = repo.baseSha;
  payload.pull_request.head.sha = repo.headSha;
  return payload;
}

function run(
  eventFile: string,
  inputs: Record<string, string> = {},
  env: Record<string, string> = {},
  node?: 'machine',
): Promise<ActionResult> {
  return prPayload(eventFile).then((payload) =>
    runAction({
      action,
      inputs,
      token: TOKEN,
      eventName: 'pull_request',
      payload,
      workspace: repo.dir,
      repository: `${OWNER}/${REPO}`,
      apiUrl: github.url,
      dataDir,
      env,
      node,
    }),
  );
}

async function serverPassword(): Promise<string> {
  return (JSON.parse(await readFile(path.join(dataDir, 'server.json'), 'utf8')) as { password: string }).password;
}

/** Every place a secret could leak to, except the masked `database-url` output. */
function visibleText(r: ActionResult): string {
  const log = `${r.stdout}\n${r.stderr}`
    .split('\n')
    .filter((l) => !l.startsWith('::add-mask::'))
    .join('\n');
  const outputs = Object.entries(r.outputs)
    .filter(([k]) => k !== 'database-url')
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');
  return [
    log,
    r.summary,
    outputs,
    ...github.comments.map((c) => c.body),
    ...github.requests.map((q) => JSON.stringify(q.body ?? '')),
  ].join('\n');
}

describe('dist/index.js on a pull_request', () => {
  // GitHub runs dist/ on the Node that runs.using names (node24); the machine's own Node must load it too.
  it.each([
    ['node24, as action.yml says', undefined],
    ["the machine's Node", 'machine'],
  ] as const)(
    'uses a server you give (provider: postgres, database-url from a secret) and masks its password, on %s',
    async (_label, node) => {
      const t = await systemServerNamespace();
      // The test server trusts local connections, so any password gets in: a stand-in for a real secret.
      const url = SYSTEM_PG_URL.replace('postgres@', 'postgres:S3cret-db-pw@');
      const env = { CONSORT_NAMESPACE: t.namespace };
      const r = await run(
        'pull_request.synchronize.json',
        { provider: 'postgres', 'database-url': url, 'suite-command': QUICK_SUITE, comment: 'off' },
        env,
        node,
      );
      expect(r.code).toBe(0);
      expect(r.report).toMatchObject({ conclusion: 'success', provider: 'postgres', branch: 'pr-2' });
      expect(r.outputs['database-url']).toMatch(
        new RegExp(
          `^postgresql://postgres:S3cret-db-pw@${new URL(SYSTEM_PG_URL).host.replace(/\./g, '\\.')}/${t.namespace}_pr-2$`,
        ),
      );
      expect(r.stdout.split('\n').slice(0, 3)).toEqual([
        `::add-mask::${TOKEN}`,
        `::add-mask::${url}`,
        '::add-mask::S3cret-db-pw',
      ]);
      expect(visibleText(r)).not.toContain('S3cret-db-pw');
      expect(await t.provider.get('pr-2')).toBeDefined();
      const cleanup = await run(
        'pull_request.closed.json',
        { mode: 'cleanup', provider: 'postgres', 'database-url': url },
        env,
        node,
      );
      expect(cleanup.code).toBe(0);
      expect(await t.provider.get('pr-2')).toBeUndefined();
      expect(github.requests).toEqual([]);
    },
    // Two runs of the bundle (check, then cleanup) on a fresh Node each: minutes on a loaded 2-core CI box.
    180_000,
  );

  it('checks the PR, reports everywhere, and keeps one sticky comment across pushes', async () => {
    const human = github.seed({
      issue: 2,
      body: `${CHECK_COMMENT_MARKER}\nQuoting the bot: is this right?`,
      user: { login: 'Codertocat', id: 21031067, type: 'User' },
    });

    const first = await run('pull_request.synchronize.json');
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.outputs).toMatchObject({ conclusion: 'success', branch: 'pr-2' });
    expect(first.outputs['database-url']).toMatch(/^postgresql:\/\/postgres:[^@]+@127\.0\.0\.1:\d+\/pr-2$/);
    expect(first.outputs.report).toMatch(/consort\/check-report\.json$/);
    const report = CheckReport.parse(first.report);
    expect(report).toMatchObject({
      conclusion: 'success',
      pr: 2,
      base: { sha: repo.baseSha },
      head: { ref: 'changes', sha: repo.headSha },
    });
    expect(report.stages.plan.newMigrations).toEqual(['1730000400000_add_customer_phone']);
    expect(report.stages.suite.tests).toMatchObject({ passed: 18, failed: 0 });
    expect(first.summary).toContain('database checks passed');
    expect(first.stdout).toContain('PR comment created');

    const bot = () => github.comments.filter((c) => c.user.type === 'Bot');
    expect(bot()).toHaveLength(1);
    const sticky = bot()[0]!;
    expect(sticky.body.startsWith(`${CHECK_COMMENT_MARKER}\n`)).toBe(true);
    expect(sticky.body).toContain('database checks passed');

    const second = await run('pull_request.synchronize.json', { 'suite-command': QUICK_SUITE });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('PR comment updated');
    expect(bot()).toEqual([expect.objectContaining({ id: sticky.id })]);
    expect(github.comments.find((c) => c.id === human.id)!.body).toBe(
      `${CHECK_COMMENT_MARKER}\nQuoting the bot: is this right?`,
    );
    expect(second.report).toMatchObject({
      conclusion: 'success',
      stages: { suite: { command: QUICK_SUITE, tests: { passed: 1 } } },
    });

    expect(github.requests.map((q) => `${q.method} ${q.path}`)).toEqual([
      `GET /repos/${OWNER}/${REPO}/issues/2/comments?per_page=100&page=1`,
      `POST /repos/${OWNER}/${REPO}/issues/2/comments`,
      `GET /repos/${OWNER}/${REPO}/issues/2/comments?per_page=100&page=1`,
      `PATCH /repos/${OWNER}/${REPO}/issues/comments/${sticky.id}`,
    ]);
    expect(github.requests.every((q) => q.authorization === `token ${TOKEN}`)).toBe(true);
    expect(github.unexpected).toEqual([]);

    const password = await serverPassword();
    for (const r of [first, second]) {
      const text = visibleText(r);
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain(password);
      // Masked before anything else is printed.
      const lines = r.stdout.split('\n');
      expect(lines[0]).toBe(`::add-mask::${TOKEN}`);
      expect(lines.indexOf(`::add-mask::${password}`)).toBeGreaterThan(0);
      // Registered as soon as the server is up, before the lane runs anything that could print it.
      expect(lines.indexOf(`::add-mask::${password}`)).toBeLessThan(lines.findIndex((l) => l.startsWith('▸ plan')));
    }
    expect(await readFile(action.npmCalls, 'utf8').catch(() => '')).toBe('');
  }, 180_000);

  it('deletes the PR branch with mode: cleanup when the PR closes', async () => {
    const { provider } = await createLocalProvider({ dataDir });
    try {
      expect(await provider.get('pr-2')).toBeDefined();
      const r = await run('pull_request.closed.json', { mode: 'cleanup' });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('Deleted database branch pr-2');
      expect(await provider.get('pr-2')).toBeUndefined();
      expect(r.outputs).toMatchObject({ conclusion: 'success', branch: '' });
    } finally {
      await provider.close();
    }
  });
});
