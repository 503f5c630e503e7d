/** The TDD lane from the command line: feature new, run (dry and for real), status, approve, log; exit codes. */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EmbeddedServer } from '../../src/branches/local/server.js';
import { ownDataDir } from '../helpers/servers.js';
import { execFileAsync } from '../helpers/exec-file.js';
import { captureCli } from '../helpers/cli.js';

const exec = execFileAsync;
const AGENT = fileURLToPath(new URL('../fixtures/agents/shop-agent.mjs', import.meta.url));

const cli = captureCli;

describe('consort feature / run / status / approve / log', () => {
  let repo: string;
  let dataDir: string;
  let agentState: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    repo = await mkdtemp(path.join(os.tmpdir(), 'consort-lane-cli-'));
    dataDir = await ownDataDir();
    agentState = await mkdtemp(path.join(os.tmpdir(), 'consort-lane-cli-agent-'));
    env = { ...process.env, CONSORT_DATA_DIR: dataDir, CONSORT_PROVIDER: undefined };
    const config = {
      suite: { command: 'true', reports: 'junit.xml' },
      agents: { default: { backend: 'command', command: `node ${AGENT} ${agentState}` } },
    };
    await writeFile(path.join(repo, 'consort.config.json'), JSON.stringify(config, null, 2));
    await exec('git', ['init', '-q'], { cwd: repo });
    await exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'init'], {
      cwd: repo,
    });
    await exec('git', ['add', '-A'], { cwd: repo });
    await exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'config'], { cwd: repo });
  });
  afterAll(async () => {
    await new EmbeddedServer(dataDir).stop();
    await Promise.all([repo, dataDir, agentState].map((d) => rm(d, { recursive: true, force: true })));
  });

  it('starts a feature with its request', async () => {
    const r = await cli(
      ['-C', repo, 'feature', 'new', 'phones', '--request', 'Customers want phone numbers.', '--json'],
      env,
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      feature: '001-phones',
      dir: expect.stringMatching(/\.consort\/features\/001-phones$/),
      baseCommit: expect.stringMatching(/^[0-9a-f]{40}$/),
    });
    expect(await readFile(path.join(repo, '.consort/features/001-phones/feature-request.md'), 'utf8')).toBe(
      'Customers want phone numbers.\n',
    );
    const again = await cli(['-C', repo, 'feature', 'new', 'phones'], env);
    expect(again).toMatchObject({ code: 1, stderr: expect.stringContaining('already exists') });
    expect((await cli(['-C', repo, 'feature', 'new', 'Bad_Slug'], env)).code).toBe(1);
  });

  it('prints the next effects with --dry-run and touches nothing', async () => {
    const r = await cli(['-C', repo, 'run', 'phones', '--dry-run'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Next for 001-phones (dry run, nothing done):');
    expect(r.stdout).toContain('run a spec-author turn (spec) on branch f001-design');
    const json = JSON.parse((await cli(['-C', repo, 'run', '--dry-run', '--json'], env)).stdout) as {
      effects: { type: string }[];
    };
    expect(json.effects.map((e) => e.type)).toEqual(['log', 'log', 'run-turn']);
    expect(JSON.parse((await cli(['-C', repo, 'status', '001', '--json'], env)).stdout)).toMatchObject({
      step: 'design',
      turns: { count: 0 },
    });
  });

  it('runs one turn with --max-turns 1 and reports where it stopped', async () => {
    const r = await cli(['-C', repo, 'run', '1', '--max-turns', '1', '--json'], env);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ feature: '001-phones', stop: 'max-turns', step: 'design', turns: 1 });
    expect(r.stderr).toContain('turn-0001 spec-author spec');
    const status = await cli(['-C', repo, 'status', 'phones'], env);
    expect(status.stdout).toContain('001-phones — design: design');
    expect(status.stdout).toMatch(/turns: {2}1 \(1 accepted\); tokens in 100, out 40; cost \$0\.0010/);
    const log = await cli(['-C', repo, 'log', 'phones'], env);
    expect(log.stdout).toMatch(/turn\.usage\s+turn-0001 spec-author spec accepted/);
    expect(log.stdout).toMatch(
      /artifact\.written\s+\.consort\/features\/001-phones\/feature-spec\.json by spec-author/,
    );
    expect(JSON.parse((await cli(['-C', repo, 'log', 'phones', '--json'], env)).stdout)[0]).toMatchObject({
      type: 'phase.start',
      phase: 'design',
    });
  }, 120_000);

  it('refuses approvals that do not fit, with one-line errors and exit codes', async () => {
    const early = await cli(['-C', repo, 'approve', 'phones', 'spec', '--as', 'Ada'], env);
    expect(early).toMatchObject({ code: 1, stderr: expect.stringContaining('is not at the spec gate') });
    expect(await cli(['-C', repo, 'approve', 'phones', 'spec'], env)).toMatchObject({
      code: 2,
      stderr: `consort: Missing who approves (--as <name>).\nApprove as the person you are: consort -C ${repo} approve phones spec --as "<your name>".\n`,
    });
    // The feature left out is what is missing, not --as, and a lone gate is not taken for the feature.
    for (const args of [
      ['approve', 'spec'],
      ['approve', 'spec', '--as', 'Ada'],
    ])
      expect(await cli(['-C', repo, ...args], env)).toMatchObject({
        code: 2,
        stderr: `consort: Missing the feature whose spec gate to approve.\nName the feature first, then the gate: consort -C ${repo} approve <feature> spec --as <name> (the feature as NNN-slug, NNN or slug; \`consort -C ${repo} status\` lists them).\n`,
      });
    expect(await cli(['-C', repo, 'approve', '--as', 'Ada'], env)).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(
        /^consort: Missing the feature and the gate to approve\.\n.*consort -C \S+ approve <feature> <gate> --as <name>/,
      ),
    });
    expect(await cli(['-C', repo, 'approve', 'phones', '--as', 'Ada'], env)).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('Missing the gate of phones to approve.'),
    });
    expect(await cli(['-C', repo, 'approve', 'phones', 'launch', '--as', 'Ada'], env)).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('Unknown gate "launch"'),
    });
    expect((await cli(['-C', repo, 'run', 'phones', '--until', 'launch'], env)).code).toBe(2); // a usage error
  });

  it('lists every feature without an argument', async () => {
    const r = await cli(['-C', repo, 'status'], env);
    expect(r.stdout).toMatch(/FEATURE\s+PHASE\s+WHERE\s+TURNS\n001-phones\s+design\s+design\s+1/);
  });

  it('Ctrl-C stops `consort run` as interrupted (exit 1): the turn is stopped, its worktrees and temp files go', async () => {
    // An agent that says it started (in the workspace: the one place its sandbox may write), then
    // works until it is stopped.
    const started = path.join(repo, 'slow-started');
    const slow = path.join(agentState, 'slow.config.json'); // outside the repository: the tree stays clean
    await writeFile(
      slow,
      JSON.stringify({
        suite: { command: 'true', reports: 'junit.xml' },
        agents: {
          default: {
            backend: 'command',
            // It writes where its turn folder is (its context file's folder): the one to be gone after.
            command: `node -e "require('fs').writeFileSync('slow-started', process.env.CONSORT_CONTEXT); setTimeout(() => {}, 60000)"`,
          },
        },
      }),
    );
    const running = cli(['-C', repo, 'run', 'phones', '--config', slow], env);
    const deadline = Date.now() + 60_000;
    while (!existsSync(started) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(started)).toBe(true);
    process.emit('SIGINT', 'SIGINT'); // what Ctrl-C delivers (to the handlers, not to jest's worker)
    const r = await running;
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('SIGINT: stopping 001-phones');
    expect(r.stdout).toContain('001-phones: interrupted');
    expect((await exec('git', ['worktree', 'list'], { cwd: repo })).stdout.trim().split('\n')).toHaveLength(1);
    // This turn's own folder, by the path its agent was given: the temporary directory is shared by
    // every file running beside this one, whose turns make folders of the same prefix there (and
    // setting TMPDIR in a test file does not move os.tmpdir(): jest gives the file a copy of the
    // environment, so a folder of the test's own saw nothing).
    const turnDir = path.dirname(await readFile(started, 'utf8'));
    expect(path.basename(turnDir)).toMatch(/^consort-turn-/);
    expect(existsSync(turnDir)).toBe(false);
    await rm(slow);
  }, 120_000);
});
