/** `consort check` as users and scripts call it: exit codes, --json -, --markdown, --dry-run. */
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EmbeddedServer } from '../../src/branches/local/server.js';
import { scenarioRepo, type ScenarioRepo } from '../../src/demo/scenarios.js';
import { CheckReport } from '../../src/report/check-report.js';
import { ownDataDir } from '../helpers/servers.js';
import { captureCli } from '../helpers/cli.js';

let dataDir: string;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  dataDir = await ownDataDir();
  env = { ...process.env, CONSORT_DATA_DIR: dataDir, NO_COLOR: '1' };
});
afterAll(async () => {
  await new EmbeddedServer(dataDir).stop();
  await rm(dataDir, { recursive: true, force: true });
});

const cli = (args: string[]) => captureCli(args, env);

async function inRepo(scenario: string, fn: (repo: ScenarioRepo) => Promise<void>): Promise<void> {
  const repo = await scenarioRepo(scenario);
  try {
    await fn(repo);
  } finally {
    await repo.dispose();
  }
}

it('passes a clean change: exit 0, JSON on stdout, markdown written, progress on stderr', () =>
  inRepo('clean', async (repo) => {
    // The plan --dry-run prints is the one the run executes: the same baseline and branch.
    const dry = await cli(['-C', repo.dir, 'check', '--base', 'main', '--pr', '7', '--dry-run', '--json', '-']);
    expect(dry.code).toBe(0);
    const plan = JSON.parse(dry.stdout) as { baseline: string; branch: string; engine: { source: string } };
    expect(plan).toMatchObject({ branch: 'pr-7', baseline: expect.stringMatching(/^baseline-/), blocked: null });
    // Into a folder that does not exist yet: it is made, not an ENOENT after the whole run.
    const md = path.join(repo.dir, 'reports', 'pr-7', 'comment.md');
    const r = await cli([
      '-C',
      repo.dir,
      'check',
      '--base',
      'main',
      '--pr',
      '7',
      '--json',
      '-',
      '--markdown',
      md,
      '--cleanup',
    ]);
    expect(r.code).toBe(0);
    const report = CheckReport.parse(JSON.parse(r.stdout));
    expect(report).toMatchObject({ conclusion: 'success', pr: 7, branch: null });
    expect(report.stages.baseline.name).toBe(plan.baseline);
    expect(report.stages.migrations.nodePgMigrate?.source).toBe(plan.engine.source);
    expect(r.stderr).toContain('▸ suite');
    expect(await readFile(md, 'utf8')).toContain('Consort: database checks passed');
  }));

it('fails a broken change with exit 1 and a readable terminal report', () =>
  inRepo('not-null', async (repo) => {
    // The dashboard's check history (docs/dashboard.md), whose folder a first check makes.
    const file = path.join(repo.dir, '.consort', 'checks', '1.json');
    const r = await cli(['-C', repo.dir, 'check', '--base', 'main', '--cleanup', '--json', file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('contains null values');
    expect(r.stdout).toContain('adding-required-field');
    expect(CheckReport.parse(JSON.parse(await readFile(file, 'utf8'))).conclusion).toBe('failure');
  }));

it('--markdown - prints the markdown on stdout, as --json - prints the JSON, and leaves no file named "-"', () =>
  inRepo('not-null', async (repo) => {
    const stray = path.join(process.cwd(), '-');
    await rm(stray, { force: true });
    const both = await cli(['-C', repo.dir, 'check', '--base', 'main', '--json', '-', '--markdown', '-']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--json and --markdown cannot both print on stdout');
    const r = await cli(['-C', repo.dir, 'check', '--base', 'main', '--cleanup', '--markdown', '-']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^## ❌ Consort: database checks failed/);
    expect(r.stdout).not.toContain('✗ Database checks failed'); // the terminal report's last line
    await expect(readFile(stray, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(readFile(path.join(repo.dir, '-'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  }));

it('--dry-run prints the plan and exits by its verdict', () =>
  inRepo('out-of-order', async (repo) => {
    const r = await cli(['-C', repo.dir, 'check', '--base', 'main', '--dry-run']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('rename to migrations/1730000300001_add_product_discontinued_at.sql');
    const plan = await cli(['-C', repo.dir, 'check', '--base', 'main', '--dry-run', '--json', '-']);
    const json = JSON.parse(plan.stdout);
    // `--json` alone is `--json -`, as on every other command.
    const bare = await cli(['-C', repo.dir, 'check', '--dry-run', '--json', '--base', 'main']);
    expect(JSON.parse(bare.stdout)).toEqual(json);
    expect(json).toMatchObject({ ok: false, branch: expect.stringMatching(/^check-/) });
    // The text names what is compared, as the JSON does.
    expect(r.stdout).toContain(
      `  head: ${json.head.ref} (${json.head.sha.slice(0, 12)}) → base: main (${json.base.sha.slice(0, 12)})`,
    );
  }));

it("--dry-run warns of the deploy's node-pg-migrate settings the check does not apply with, and passes", () =>
  inRepo('clean', async (repo) => {
    const file = path.join(repo.dir, 'package.json');
    const manifest = JSON.parse(await readFile(file, 'utf8'));
    manifest.scripts = { ...manifest.scripts, migrate: 'node-pg-migrate up -t schema_versions' };
    await writeFile(file, JSON.stringify(manifest, null, 2));
    const r = await cli(['-C', repo.dir, 'check', '--base', 'main', '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      "  ! deploy-setting: package.json's script migrate runs node-pg-migrate with -t schema_versions, but the check applies the migrations with migrations.table: pgmigrations. Set migrations.table: schema_versions in .github/consort.yml",
    );
    const json = JSON.parse(
      (await cli(['-C', repo.dir, 'check', '--base', 'main', '--dry-run', '--json', '-'])).stdout,
    );
    expect(json.warnings).toEqual([
      expect.objectContaining({
        kind: 'deploy-setting',
        setting: 'migrations.table',
        deploy: 'schema_versions',
        configFile: '.github/consort.yml',
      }),
    ]);
    // A project configured in consort.config.json is told to set it there.
    await rm(path.join(repo.dir, '.github', 'consort.yml'));
    await writeFile(
      path.join(repo.dir, 'consort.config.json'),
      JSON.stringify({ database: { seed: { file: 'seed.sql' } }, migrations: { dir: 'migrations' } }),
    );
    const named = await cli(['-C', repo.dir, 'check', '--base', 'main', '--dry-run']);
    expect(named.stdout).toContain('Set migrations.table: schema_versions in consort.config.json so');
  }));

it("--dry-run names a node-pg-migrate shared with the project as the run's report does: the project's", async () => {
  // `npm i -D consort-db node-pg-migrate`: npm keeps one copy for both. The run's report calls it
  // the project's; the plan said "(bundled)", the same engine under another name.
  const dir = await mkdtemp(path.join(tmpdir(), 'consort-dry-shared-'));
  try {
    await mkdir(path.join(dir, 'migrations'));
    await mkdir(path.join(dir, 'node_modules'));
    await symlink(
      path.join(process.cwd(), 'node_modules/node-pg-migrate'),
      path.join(dir, 'node_modules/node-pg-migrate'),
    );
    await writeFile(
      path.join(dir, 'package.json'),
      JSON.stringify({ name: 'app', devDependencies: { 'node-pg-migrate': '9.0.0' } }),
    );
    await writeFile(path.join(dir, 'migrations/1700000000001_users.sql'), 'CREATE TABLE users (id int);\n');
    const r = await cli(['-C', dir, 'check', '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("  engine: node-pg-migrate 9.0.0 (the project's, the same copy Consort uses)\n");
    const json = JSON.parse((await cli(['-C', dir, 'check', '--dry-run', '--json', '-'])).stdout);
    expect(json.engine).toEqual({ version: '9.0.0', source: 'bundled' }); // the JSON is unchanged
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
