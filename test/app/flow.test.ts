/**
 * The App end to end: recorded webhooks through Probot's `receive()`, the real intake, queue and
 * jobs on a store in the embedded PostgreSQL 18, the real PR lane on that server's branches, and
 * GitHub behind nock — every request the App makes is expected here (unexpected ones and unused
 * expectations fail the test). The repository is the example shop as a real git repository,
 * served as GitHub serves tarballs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { CHECK_NAME, STICKY_MARKER } from '../../app/check-output.js';
import { snapshotName } from '../../app/promote.js';
import { isolationKind } from '../../src/process/isolate.js';
import { query } from '../helpers/servers.js';
import { api, expectTarball, expectToken } from './helpers/github.js';
import { PATH, setupFlow, SUITE, type Body } from './helpers/flow.js';
import { delivery, installationPayload, mergeGroupPayload, pullRequestPayload } from './helpers/payloads.js';
import { appConfig, commit } from './helpers/repo.js';
import { eventually } from './helpers/wait.js';
import { processesRunning, uniqueSleep } from '../helpers/processes.js';

/** The App's own secrets, in its environment from the start as in production (app/settings.ts reads them). */
const APP_SECRETS = {
  PRIVATE_KEY: '-----BEGIN RSA PRIVATE KEY----- consort-app-private-key',
  WEBHOOK_SECRET: 'consort-app-webhook-secret',
};
const savedSecrets = { PRIVATE_KEY: process.env.PRIVATE_KEY, WEBHOOK_SECRET: process.env.WEBHOOK_SECRET };
/** /proc/<pid>/environ shows a process's starting environment: this stands in for the App's process, started with its secrets. */
let appProcess: ChildProcess;
beforeAll(() => {
  Object.assign(process.env, APP_SECRETS);
  appProcess = spawn('sleep', ['600'], { env: { PATH: process.env.PATH, ...APP_SECRETS }, stdio: 'ignore' });
});
afterAll(() => {
  appProcess.kill('SIGKILL');
  for (const [k, v] of Object.entries(savedSecrets)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

const flow = setupFlow();

/**
 * A pull request `pr` whose head adds `files` on top of the repository's head: opened, checked
 * (check run 1000 + pr) and finished; `bodies` holds what the App sent.
 */
async function openPull(pr: number, files: Record<string, string>, subject: string) {
  const head = await commit(flow.repo.dir, files, subject, flow.repo.headSha);
  await flow.tarball(head);
  const bodies: Record<string, Body> = {};
  expectToken();
  flow.expectCheck({ pr, head, checkRunId: 1000 + pr, bodies });
  flow.expectStickyCreated(pr, bodies);
  await flow.probot.receive(
    delivery(
      'pull_request',
      `open-${pr}`,
      pullRequestPayload({ action: 'opened', number: pr, head, base: flow.repo.baseSha }),
    ),
  );
  await flow.finished(pr);
  return { head, bodies };
}

const BROKEN =
  '-- Up Migration\nCREATE TABLE ok (id bigint);\nCREATE TABEL broken (id bigint);\n-- Down Migration\nDROP TABLE ok;\n';

describe('pull requests', () => {
  it('opened: check run in progress, the lane on a fresh branch, then the conclusion and the sticky comment', async () => {
    const { repo } = flow;
    const bodies: Record<string, Body> = {};
    expectToken();
    flow.expectCheck({ pr: 2, head: repo.headSha, checkRunId: 1002, bodies });
    flow.expectStickyCreated(2, bodies);
    await flow.probot.receive(
      delivery(
        'pull_request',
        'open-2',
        pullRequestPayload({ action: 'opened', number: 2, head: repo.headSha, base: repo.baseSha }),
      ),
    );
    const [run] = await flow.finished(2);
    expect(bodies.created).toMatchObject({
      name: CHECK_NAME,
      head_sha: repo.headSha,
      status: 'in_progress',
      external_id: String(run!.id),
    });
    expect(bodies.completed).toMatchObject({
      status: 'completed',
      conclusion: 'success',
      output: {
        title: 'Database checks passed',
        summary: expect.stringContaining('+ column public.customers.phone text'),
      },
    });
    expect(bodies.comment).toEqual({
      body: expect.stringMatching(new RegExp(`^${STICKY_MARKER}\\n## ✅ ${CHECK_NAME}: database checks passed`)),
    });
    expect(run).toMatchObject({ state: 'completed', conclusion: 'success', checkRunId: 1002 });
    expect(await flow.branches()).toContain('pr-2');
    expect((await flow.branches()).filter((b) => b.startsWith('pr-2-'))).toEqual([]);
  });

  it('a failing migration: conclusion failure with annotations at the file and line', async () => {
    const { bodies } = await openPull(3, { 'migrations/1730000500000_broken.sql': BROKEN }, 'broken');
    expect(bodies.completed).toMatchObject({
      conclusion: 'failure',
      output: { title: expect.stringMatching(/^Database checks failed/) },
    });
    expect((bodies.completed!.output as { annotations: Body[] }).annotations).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          path: 'migrations/1730000500000_broken.sql',
          start_line: 3,
          annotation_level: 'failure',
          title: 'Migration failed',
        }),
      ]),
    );
  });

  it("a pull request that sets check.migrationsRole: admin in its own configuration gets no elevation: the base's counts", async () => {
    const { bodies } = await openPull(
      31,
      {
        '.github/consort.yml': appConfig(SUITE, 'check:\n  migrationsRole: admin\n'),
        'migrations/1730000500000_dblink.sql':
          '-- Up Migration\nCREATE EXTENSION IF NOT EXISTS dblink;\n-- Down Migration\nDROP EXTENSION dblink;\n',
      },
      'grant myself the admin',
    );
    expect(bodies.completed).toMatchObject({ conclusion: 'failure' });
    expect(bodies.comment!.body).toContain('ERROR 42501: permission denied to create extension');
    expect(bodies.comment!.body).toContain(
      'runs as the admin only with <code>check.migrationsRole: admin</code> in the Consort configuration of the base branch, which must land on the base first',
    );
  });

  it("a pull request's JS migration sees none of the App's secrets: not in its environment, not in /proc", async () => {
    // What the migration can see of the App: its environment, its parent's, every /proc/<pid>/environ.
    const snoop = [
      "import { readdirSync, readFileSync } from 'node:fs';",
      `const MARKS = ${JSON.stringify(Object.values(APP_SECRETS).map((v) => v.slice(-18)))};`,
      'const hit = (text) => MARKS.some((m) => text.includes(m));',
      'const environ = (pid) => { try { return readFileSync(`/proc/${pid}/environ`, "latin1"); } catch { return null; } };',
      'export const up = (pgm) => {',
      '  const pids = readdirSync("/proc").filter((p) => /^\\d+$/.test(p));',
      '  const readable = pids.filter((p) => environ(p) !== null);',
      '  const seen = {',
      '    pid: process.pid,',
      '    keys: Object.keys(process.env).sort(),',
      '    env: hit(JSON.stringify(process.env)),',
      '    parent: hit(environ(process.ppid) ?? ""),',
      '    found: readable.filter((p) => hit(environ(p) ?? "")),',
      '    read: readable.length,',
      '  };',
      "  pgm.createTable('seen', { what: 'text' });",
      "  pgm.sql(`INSERT INTO seen VALUES ('${JSON.stringify(seen).replace(/'/g, \"''\")}')`);",
      '};',
      "export const down = (pgm) => pgm.dropTable('seen');",
      '',
    ].join('\n');
    const { bodies } = await openPull(
      32,
      { 'migrations/1730000500000_snoop.js': snoop },
      'a migration that looks around',
    );
    expect(bodies.completed).toMatchObject({ conclusion: 'success' });
    const url = await (await flow.providers.forRepository(186853002)).connectionUri('pr-32');
    const [row] = await query<{ what: string }>(url, 'SELECT what FROM seen');
    const seen = JSON.parse(row!.what) as {
      pid: number;
      keys: string[];
      env: boolean;
      parent: boolean;
      found: string[];
      read: number;
    };
    expect(process.env.PRIVATE_KEY).toBe(APP_SECRETS.PRIVATE_KEY); // the App's process has them
    expect(seen.pid).not.toBe(process.pid);
    expect(seen.env).toBe(false);
    expect(seen.keys).not.toEqual(expect.arrayContaining(['PRIVATE_KEY']));
    expect(seen.keys).not.toEqual(expect.arrayContaining(['WEBHOOK_SECRET']));
    expect(seen.keys.filter((k) => /TOKEN|SECRET|KEY|PASSWORD|INPUT_|ACTIONS_/.test(k))).toEqual([]);
    expect(seen.parent).toBe(false);
    expect(seen.read).toBeGreaterThan(0); // the scan ran
    // Without a PID namespace the child shares /proc with the App: the attack is real (docs/security.md).
    if (isolationKind() === 'sweep') expect(seen.found).toContain(String(appProcess.pid));
    else expect(seen.found).toEqual([]);
  });

  it("a pull request's suite sees none of the App's secrets in /proc, nor the local server's password file", async () => {
    const marks = await mkdtemp(path.join(os.tmpdir(), 'consort-flow-snoop-'));
    const snoop = [
      "const { readdirSync, readFileSync, writeFileSync } = require('node:fs');",
      `const MARKS = ${JSON.stringify(Object.values(APP_SECRETS).map((v) => v.slice(-18)))};`,
      'const environ = (pid) => { try { return readFileSync(`/proc/${pid}/environ`, "latin1"); } catch { return null; } };',
      'const pids = readdirSync("/proc").filter((p) => /^\\d+$/.test(p));',
      'const readable = pids.filter((p) => environ(p) !== null);',
      'const found = readable.filter((p) => MARKS.some((m) => (environ(p) ?? "").includes(m)));',
      'let server = "unreadable";',
      'try { server = readFileSync(process.argv[2], "utf8").includes("password") ? "read" : "empty"; } catch {}',
      'writeFileSync(process.argv[3], JSON.stringify({ found, read: readable.length, server }));',
      '',
    ].join('\n');
    const serverFile = path.join(flow.dataDir!, 'server.json');
    expect(existsSync(serverFile)).toBe(true); // the App's local provider keeps its password there
    const out = path.join(marks, 'seen.json');
    try {
      const { bodies } = await openPull(
        33,
        {
          'snoop.cjs': snoop,
          '.github/consort.yml': appConfig(`node snoop.cjs '${serverFile}' '${out}'`),
        },
        'a suite that looks around',
      );
      expect(bodies.completed).toMatchObject({ conclusion: 'success' });
      const seen = JSON.parse(await readFile(out, 'utf8')) as { found: string[]; read: number; server: string };
      expect(seen.read).toBeGreaterThan(0); // the scan ran
      // Without a PID namespace the suite shares /proc with the App (docs/security.md).
      if (isolationKind() === 'sweep') expect(seen.found).toContain(String(appProcess.pid));
      else expect(seen.found).toEqual([]);
      // Under bubblewrap the data directory is an empty folder to the suite.
      if (isolationKind() === 'bwrap') expect(seen.server).toBe('unreadable');
    } finally {
      await rm(marks, { recursive: true, force: true });
    }
  });

  it('a new push cancels the check in flight for the older SHA, cleans its branch work, then checks the new one', async () => {
    const { repo } = flow;
    // The slow suite says when it starts and when it finishes; its sleep has an argument no other
    // process on the machine has, so its processes can be found (in a PID namespace or not).
    const marks = await mkdtemp(path.join(os.tmpdir(), 'consort-flow-suite-'));
    const sleep = uniqueSleep(30);
    const slowSuite = `touch ${marks}/started; sleep ${sleep}; touch ${marks}/finished`;
    const slow = await commit(repo.dir, { '.github/consort.yml': appConfig(slowSuite) }, 'slow suite', repo.headSha);
    const fast = await commit(repo.dir, { '.github/consort.yml': appConfig(SUITE) }, 'fast suite', repo.headSha);
    await flow.tarball(slow);
    await flow.tarball(fast);
    const old: Record<string, Body> = {};
    const next: Record<string, Body> = {};
    expectToken();
    flow.expectCheck({ pr: 4, head: slow, checkRunId: 1041, bodies: old });
    flow.expectCheck({ pr: 4, head: fast, checkRunId: 1042, bodies: next });
    flow.expectStickyCreated(4, next);
    await flow.probot.receive(
      delivery(
        'pull_request',
        'open-4',
        pullRequestPayload({ action: 'opened', number: 4, head: slow, base: repo.baseSha }),
      ),
    );
    await eventually(async () => existsSync(path.join(marks, 'started')), 'the slow suite to start');
    await eventually(async () => (await processesRunning(sleep)) > 0, "the slow suite's sleep to run");
    await flow.probot.receive(
      delivery(
        'pull_request',
        'sync-4',
        pullRequestPayload({ action: 'synchronize', number: 4, head: fast, base: repo.baseSha }),
      ),
    );
    const runs = await flow.finished(4, 2);
    // The slow suite was stopped, not waited for (it would have finished) nor left running.
    expect(existsSync(path.join(marks, 'finished'))).toBe(false);
    expect(await processesRunning(sleep)).toBe(0);
    await rm(marks, { recursive: true, force: true });
    expect(old.completed).toMatchObject({
      conclusion: 'cancelled',
      output: { summary: expect.stringContaining(`superseded by a newer run at ${fast.slice(0, 7)}`) },
    });
    expect(next.completed).toMatchObject({ conclusion: 'success' });
    expect(runs.map((r) => [r.headSha, r.state])).toEqual([
      [slow, 'cancelled'],
      [fast, 'completed'],
    ]);
    expect((await flow.branches()).filter((b) => b.startsWith('pr-4'))).toEqual(['pr-4']);
  });

  it("migrations that import project code run in their own side's tree; the baseline is seeded as base has it", async () => {
    const { repo } = flow;
    // Base: an ESM migration that takes its enum labels from base's code.
    const base = await commit(
      repo.dir,
      {
        'src/kinds.js': "export const KINDS = ['retail', 'wholesale'];\n",
        'migrations/1730000450000_customer_kind.js': [
          "import { KINDS } from '../src/kinds.js';",
          "export const up = (pgm) => { pgm.createType('customer_kind', KINDS); pgm.addColumn('customers', { kind: { type: 'customer_kind', notNull: true, default: KINDS[0] } }); };",
          "export const down = (pgm) => { pgm.dropColumn('customers', 'kind'); pgm.dropType('customer_kind'); };",
          '',
        ].join('\n'),
      },
      'customer kinds',
      repo.headSha,
    );
    // Head: a TypeScript migration importing head's code (which now has a third kind), and a seed
    // for the table it creates, which base's schema does not have.
    const head = await commit(
      repo.dir,
      {
        'src/kinds.js': "export const KINDS = ['retail', 'wholesale', 'partner'];\n",
        'src/discounts.ts':
          "import { KINDS } from './kinds.js';\nexport const DISCOUNTS: Record<string, number> = Object.fromEntries(KINDS.map((k, i) => [k, i * 5]));\n",
        'migrations/1730000800000_kind_discounts.ts': [
          "import type { MigrationBuilder } from 'node-pg-migrate';",
          "import { DISCOUNTS } from '../src/discounts';",
          'export async function up(pgm: MigrationBuilder): Promise<void> {',
          "  pgm.createTable('kind_discounts', { kind: { type: 'text', primaryKey: true }, percent: { type: 'integer', notNull: true } });",
          "  for (const [kind, percent] of Object.entries(DISCOUNTS)) pgm.sql(`INSERT INTO kind_discounts VALUES ('${kind}', ${percent})`);",
          '}',
          "export const down = (pgm: MigrationBuilder): void => pgm.dropTable('kind_discounts');",
          '',
        ].join('\n'),
        'seed.sql': `${await readFile(path.join(repo.dir, 'seed.sql'), 'utf8')}\nUPDATE kind_discounts SET percent = 7 WHERE kind = 'partner';\n`,
      },
      'kind discounts',
      base,
    );
    await flow.tarball(base);
    await flow.tarball(head);
    const bodies: Record<string, Body> = {};
    expectToken();
    flow.expectCheck({ pr: 8, head, base, checkRunId: 1008, bodies });
    flow.expectStickyCreated(8, bodies);
    await flow.probot.receive(
      delivery('pull_request', 'open-8', pullRequestPayload({ action: 'opened', number: 8, head, base })),
    );
    await flow.finished(8);
    expect(bodies.completed).toMatchObject({
      conclusion: 'success',
      output: { summary: expect.stringContaining('kind_discounts') },
    });
    const url = await (await flow.providers.forRepository(186853002)).connectionUri('pr-8');
    // The baseline ran base's migration with base's code: two labels, not head's three.
    expect(
      await query<{ label: string }>(
        url,
        "SELECT enumlabel AS label FROM pg_enum WHERE enumtypid = 'customer_kind'::regtype ORDER BY enumsortorder",
      ),
    ).toEqual([{ label: 'retail' }, { label: 'wholesale' }]);
    expect(await query(url, 'SELECT kind, percent FROM kind_discounts ORDER BY kind')).toEqual([
      { kind: 'partner', percent: 10 },
      { kind: 'retail', percent: 0 },
      { kind: 'wholesale', percent: 5 },
    ]);
  });

  it('a re-check of a pull request whose branch has a connected session: the session is ended, and the App logs whom it disconnected', async () => {
    // The branch of #2, checked by the first test (a check of its own here would make the same branch again).
    const { repo } = flow;
    expect(await flow.branches()).toContain('pr-2');
    expect((await flow.runs(2)).map((r) => r.state)).toEqual(['completed']);

    // A reviewer looks at the PR's branch in psql while a new push arrives.
    const client = new pg.Client({
      connectionString: await (await flow.providers.forRepository(186853002)).connectionUri('pr-2'),
      application_name: 'psql-of-a-reviewer',
    });
    const ended = new Promise<string>((resolve) => {
      client.on('error', (e: Error & { code?: string }) => resolve(e.code ?? e.message));
      client.on('end', () => resolve('end'));
    });
    await client.connect();
    try {
      const head = await commit(repo.dir, { 'notes/review.txt': 'second push' }, 'second push', repo.headSha);
      await flow.tarball(head);
      const second: Record<string, Body> = {};
      expectToken();
      flow.expectCheck({ pr: 2, head, checkRunId: 1022, bodies: second });
      api()
        .get(`${PATH}/issues/2/comments`)
        .query({ per_page: 100, page: 1 })
        .reply(200, [{ id: 902, body: `${STICKY_MARKER}\n## ✅`, user: { login: 'consort[bot]', type: 'Bot' } }]);
      api().patch(`${PATH}/issues/comments/902`).reply(200, { id: 902 });
      await flow.probot.receive(
        delivery(
          'pull_request',
          'sync-2',
          pullRequestPayload({ action: 'synchronize', number: 2, head, base: repo.baseSha }),
        ),
      );
      const runs = await flow.finished(2, 2);
      expect(second.completed).toMatchObject({ conclusion: 'success' });
      // The session was ended by the re-check (57P01: terminated by an administrator), not left to fail it.
      expect(await ended).toMatch(/^(57P01|end)$/);
      const disconnected = flow.logs.filter((l) => l.message.startsWith('Disconnected'));
      expect(disconnected).toEqual([
        {
          level: 'info',
          message: expect.stringMatching(
            /^Disconnected 1 session from branch "pr-2": psql-of-a-reviewer \(pid \d+, user \w+/,
          ) as string,
          fields: { runId: runs[1]!.id },
        },
      ]);
    } finally {
      await client.end().catch(() => undefined);
    }
  });

  it('closed: the pull request’s branches are deleted (no GitHub call needed)', async () => {
    const { repo } = flow;
    expect(await flow.branches()).toContain('pr-2');
    await flow.probot.receive(
      delivery(
        'pull_request',
        'close-2',
        pullRequestPayload({ action: 'closed', number: 2, head: repo.headSha, base: repo.baseSha }),
      ),
    );
    await eventually(
      async () => (await flow.runs(2)).some((r) => r.kind === 'close' && r.state === 'completed'),
      'the close run',
    );
    expect((await flow.branches()).filter((b) => b === 'pr-2' || b.startsWith('pr-2-'))).toEqual([]);
  });
});

describe('uninstalled', () => {
  it("installation_repositories.removed: an open pull request's branches are deleted (no GitHub call: the App has no token there any more)", async () => {
    await openPull(20, { 'notes/uninstall.txt': 'soon uninstalled' }, 'uninstall');
    expect(await flow.branches()).toContain('pr-20');
    const repositoryId = pullRequestPayload({
      action: 'opened',
      number: 20,
      head: 'a'.repeat(40),
      base: 'b'.repeat(40),
    }).repository.id;
    await flow.probot.receive(
      delivery(
        'installation_repositories',
        'removed-1',
        installationPayload({ action: 'removed', repositoryIds: [repositoryId] }),
      ),
    );
    await eventually(
      async () => (await flow.runs(20)).some((r) => r.kind === 'close' && r.state === 'completed'),
      'the close run',
    );
    expect((await flow.branches()).filter((b) => b === 'pr-20' || b.startsWith('pr-20-'))).toEqual([]);
  });
});

describe('promote on merge', () => {
  beforeAll(() => {
    flow.settings.promote = true;
  });
  afterAll(() => {
    flow.settings.promote = false;
  });

  const parentMigrations = async (): Promise<string[]> => {
    const url = await (await flow.providers.forRepository(186853002)).connectionUri('main');
    return (await query<{ name: string }>(url, 'SELECT name FROM pgmigrations ORDER BY id')).map((r) => r.name);
  };

  async function merge(pr: number, mergeSha: string): Promise<string> {
    let comment = '';
    expectToken();
    expectTarball('Codertocat', 'Hello-World', mergeSha, await flow.tarball(mergeSha));
    api()
      .post(`${PATH}/issues/${pr}/comments`, (b: { body: string }) => ((comment = b.body), true))
      .reply(201, { id: 7000 + pr });
    await flow.probot.receive(
      delivery(
        'pull_request',
        `merge-${pr}`,
        pullRequestPayload({
          action: 'closed',
          number: pr,
          head: mergeSha,
          base: flow.repo.baseSha,
          merged: true,
          mergeSha,
        }),
      ),
    );
    await eventually(
      async () => (await flow.runs(pr)).some((r) => r.kind === 'close' && r.state === 'completed') && comment !== '',
      `the merge of #${pr}`,
    );
    return comment;
  }

  it('a migration that fails on the parent: the pre-migration snapshot is kept, and the comment says how to restore', async () => {
    const mergeSha = await commit(
      flow.repo.dir,
      { 'migrations/1730000500000_broken.sql': BROKEN },
      'merge broken',
      flow.repo.headSha,
    );
    const comment = await merge(5, mergeSha);
    const snapshot = snapshotName(5, mergeSha);
    expect(comment).toContain('could not promote the migrations');
    expect(comment).toContain(`kept in the branch <code>${snapshot}</code>`);
    expect(comment).toMatch(
      /pg_dump -Fc "\$\(CONSORT_POSTGRES_URL=.* --namespace gh186853002 branch url pre-merge-pr-5-/,
    );
    expect(comment).toContain('pg_restore --clean --if-exists');
    expect(await flow.branches()).toContain(snapshot);
    // Each migration commits on its own: the ones before the broken one are on the parent now.
    expect(await parentMigrations()).toEqual(
      expect.arrayContaining(['1730000000000_create_customers', '1730000400000_add_customer_phone']),
    );
    expect(await parentMigrations()).not.toContain('1730000500000_broken');
  });

  it('migrations that apply: promoted to the parent, the snapshot deleted', async () => {
    const mergeSha = await commit(
      flow.repo.dir,
      {
        'migrations/1730000600000_add_order_note.sql':
          '-- Up Migration\nALTER TABLE orders ADD COLUMN note text;\n-- Down Migration\nALTER TABLE orders DROP COLUMN note;\n',
      },
      'merge note',
      flow.repo.headSha,
    );
    const comment = await merge(6, mergeSha);
    expect(comment).toContain('Consort promoted 1 migration to <code>main</code>');
    expect(comment).toContain('add\\_order\\_note');
    expect(await flow.branches()).not.toContain(snapshotName(6, mergeSha));
    expect(await flow.branches()).toContain(snapshotName(5, (await flow.runs(5)).at(-1)!.headSha)); // the failed one's is kept
    expect(await parentMigrations()).toContain('1730000600000_add_order_note');
  });

  it('a repository opts in with database.promote, without the App-wide setting', async () => {
    flow.settings.promote = false;
    try {
      const previous = (await flow.runs(6)).at(-1)!.headSha;
      const mergeSha = await commit(
        flow.repo.dir,
        {
          '.github/consort.yml': appConfig(SUITE).replace('database:\n', 'database:\n  promote: true\n'),
          'migrations/1730000700000_add_order_flag.sql':
            '-- Up Migration\nALTER TABLE orders ADD COLUMN flagged boolean;\n-- Down Migration\nALTER TABLE orders DROP COLUMN flagged;\n',
        },
        'merge flag',
        previous,
      );
      const comment = await merge(7, mergeSha);
      expect(comment).toContain('Consort promoted 1 migration to <code>main</code>');
      expect(await parentMigrations()).toContain('1730000700000_add_order_flag');
    } finally {
      flow.settings.promote = true;
    }
  });
});

describe('merge queue', () => {
  it('merge_group.checks_requested: the lane on exactly the group’s head, concluded, its branch removed', async () => {
    const head = await commit(flow.repo.dir, { 'notes/queue.txt': 'merged group' }, 'merge group', flow.repo.headSha);
    await flow.tarball(head);
    const bodies: Record<string, Body> = {};
    expectToken();
    // As recorded, the merge group belongs to octo-org/octo-repo.
    flow.expectCheck({ pr: null, head, checkRunId: 1100, bodies, owner: 'octo-org', repo: 'octo-repo' });
    const payload = mergeGroupPayload({ head, base: flow.repo.baseSha, repositoryId: 186853002 });
    await flow.probot.receive(delivery('merge_group', 'mg-1', payload));
    expect(await flow.runtime.intake.mergeGroup({ id: 'mg-1', name: 'merge_group', payload })).toEqual({
      kind: 'duplicate',
    });
    await eventually(async () => bodies.completed, 'the merge group check');
    expect(bodies.created).toMatchObject({ name: CHECK_NAME, head_sha: head });
    expect(bodies.completed).toMatchObject({ conclusion: 'success' });
    await eventually(
      async () => !(await flow.branches()).includes(`check-${head.slice(0, 7)}`),
      'the group branch to be removed',
    );
  });
});
