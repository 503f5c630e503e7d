/**
 * The PR lane on realistic histories of our own (test/fixtures/histories), each made a real git
 * repository: base holds the older migrations, the pull request adds the newer ones. The verdicts
 * asserted here were worked out by hand from the migrations themselves (see each test).
 *
 * billing-ts-7x deploys with node-pg-migrate 7.9.1 and tsx (`node-pg-migrate --tsx`): TypeScript
 * migrations that import the project's own code (a TS enum, a const array), `citext`, an enum
 * type, an expression index written for 7.x (`'LOWER(name) text_pattern_ops'`, which 9 renders
 * into invalid SQL), a PL/pgSQL trigger function, a rename, a backfill sized by `pgm.db.query`,
 * and a newest `noTransaction` migration adding an enum label and a concurrent index, declared
 * irreversible. The same history deployed with ts-node (`node-pg-migrate --tsconfig`) instead
 * must load and give the same verdicts. The project's packages are links into Consort's
 * node_modules (7.9.1 is a devDependency there under the alias node-pg-migrate-7, ts-node one of
 * its own): nothing is downloaded.
 *
 * forum-cjs has the shape of hand-made CommonJS histories: migrations numbered 0001, 0002…, shorthands
 * declared once (`exports.shorthands`, PgLiteral) and used by later files, `pgm.sql` placeholders,
 * `exports.down = false`, `pgm.noTransaction()`, a down left to node-pg-migrate; on 7.9.1 and 9, with
 * the slips such histories carry (a number followed by `-`, an empty down, noTransaction in up only),
 * an extension the server lacks, and a deploy with its own migrations table.
 *
 * tenants-esm is an ESM package (`"type": "module"`) of .js migrations (`export async function up`,
 * `export const up`) in a schema of their own, whose row-level security and audit columns come from
 * helpers the migrations import from the project's lib/; later .mjs/.cjs files named in UTC format,
 * and a helper module kept in the migrations folder itself.
 */
import { checkAgainstMain, isolatedGit } from '../helpers/check-repo.js';
import { history, MODULES, type History } from '../helpers/history-repo.js';
import { testPorts } from '../helpers/check-ports.js';
import { localGitRepo } from '../../src/git/repo.js';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { resolveSides } from '../../src/cli/commands/check.js';
import { check as checkLane } from '../../src/lanes/check/run.js';
import { applyMigrations } from '../../src/migrations/runner.js';
import { CheckReport } from '../../src/report/check-report.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';

const git = isolatedGit;
const TYPESCRIPT_VERSION = (
  JSON.parse(await readFile(path.join(MODULES, 'typescript/package.json'), 'utf8')) as { version: string }
).version;

/**
 * ts-node loads the TypeScript compiler in every process a check applies migrations in (baseline,
 * PR branch, each reversibility step): seconds each, more on a loaded machine.
 */
const TS_NODE_TIMEOUT = 180_000;

let t: TestProvider;
beforeAll(async () => {
  t = await localTestProvider();
});
afterAll(async () => t?.cleanup());

const check = (dir: string, pr: number) => checkAgainstMain(dir, pr, t.provider);

describe('billing-ts-7x: TypeScript on node-pg-migrate 7.9.1 with the loader the project deploys with', () => {
  // The lane as every shell runs it: the migrations (the project's code, and tsx's hooks on Node's
  // module loader) run in the check's own node-pg-migrate child process, never in this one. Exit
  // codes, `--json -` and `--cleanup` of the CLI itself: test/cli/check-cli.test.ts.
  it("applies with the project's node-pg-migrate and tsx, and every stage says what it found", async () => {
    const h = await history('billing-ts-7x', 2, { 'node-pg-migrate': 'node-pg-migrate-7', tsx: 'tsx' });
    try {
      const report = await check(h.dir, 301);
      expect(report.error).toBeUndefined();
      expect(report.stages.baseline).toMatchObject({
        status: 'passed',
        applied: ['1700000000000_accounts', '1700000000001_invoices'],
      });
      expect(report.stages.migrations).toMatchObject({
        status: 'passed',
        applied: [
          { name: '1700000000002_invoice-currency', file: 'migrations/1700000000002_invoice-currency.ts' },
          { name: '1700000000003_enterprise-plan' },
        ],
        nodePgMigrate: {
          version: '7.9.1',
          source: 'project',
          typescript: { name: 'tsx', version: '4.23.15', source: 'project' },
        },
      });
      expect(report.stages.migrations.summary).toBe(
        "2 migrations applied to pr-301 with node-pg-migrate 7.9.1 (the project's), TypeScript through the project's tsx 4.23.15",
      );

      // Lint, by hand. Blocking: renaming a column breaks the running code that still reads
      // amount_cents, and char(3) is squawk's ban-char-field; both at their pgm.* call, after a
      // pgm.db.query that ran first. The rest are warnings where they belong: timeouts, the label
      // appended at the end of the enum, the concurrent index that cannot be re-run. Not reported:
      // a concurrent index "in a transaction" (the migration opted out of one).
      const findings = report.stages.lint.findings.map((f) => [
        f.file.replace('migrations/170000000000', ''),
        f.line,
        f.rule,
        f.blocking,
      ]);
      expect(findings).toEqual([
        ['2_invoice-currency.ts', 7, 'require-lock-timeout', false],
        ['2_invoice-currency.ts', 7, 'require-statement-timeout', false],
        ['2_invoice-currency.ts', 7, 'renaming-column', true],
        ['2_invoice-currency.ts', 8, 'ban-char-field', true],
        ['3_enterprise-plan.ts', 9, 'require-lock-timeout', false],
        ['3_enterprise-plan.ts', 9, 'require-statement-timeout', false],
        ['3_enterprise-plan.ts', 9, 'require-enum-value-ordering', false],
        ['3_enterprise-plan.ts', 10, 'prefer-robust-stmts', false],
      ]);
      expect(report.stages.lint.status).toBe('failed');
      expect(report.conclusion).toBe('failure');

      // Reversibility, by hand: the rename and backfill reverse; the enum label cannot, and the
      // migration says so (down = false), so it is reported as declared and does not fail the stage.
      expect(report.stages.reversibility.migrations.map((m) => [m.name, m.verdict])).toEqual([
        ['1700000000002_invoice-currency', 'reversible'],
        ['1700000000003_enterprise-plan', 'irreversible'],
      ]);
      expect(report.stages.reversibility.status).toBe('passed');

      // The schema diff shows all of it.
      const diff = report.stages.schemaDiff.text;
      for (const line of ['invoices.total_cents', 'invoices.currency', 'invoices_account_status_idx', 'enterprise'])
        expect(diff).toContain(line);
      // pgm.renameColumn: one renamed column, not a drop and an add.
      expect(diff).toContain('~ column public.invoices.total_cents: renamed from amount_cents');
      expect(diff).not.toContain('- column public.invoices.amount_cents');
      expect(report.branch).toBeNull();
    } finally {
      await h.dispose();
    }
  });

  it(
    "a project that deploys with ts-node (`--tsconfig`), and has no tsx: loads them through the project's ts-node",
    async () => {
      // The same history as deployed by a team on ts-node: node-pg-migrate 7's `--tsconfig`
      // registers ts-node's CommonJS hook with the project's tsconfig.json; no tsx anywhere.
      const h = await history(
        'billing-ts-7x',
        2,
        { 'node-pg-migrate': 'node-pg-migrate-7', 'ts-node': 'ts-node', typescript: 'typescript' },
        {
          'package.json': `${JSON.stringify(
            {
              name: 'billing-fixture',
              private: true,
              type: 'commonjs',
              scripts: { migrate: 'node-pg-migrate --tsconfig tsconfig.json --migration-file-language ts' },
              devDependencies: { 'node-pg-migrate': '7.9.1', 'ts-node': '10.9.2', typescript: '5.9.3' },
            },
            null,
            2,
          )}\n`,
        },
      );
      try {
        const report = await check(h.dir, 308);
        expect(report.error).toBeUndefined();
        // The baseline may be one an earlier test built from the same base (the loader is not part of
        // its name: it changes how files load, not what they do); the PR's migrations below ran with it.
        expect(report.stages.baseline.status).toBe('passed');
        expect(report.stages.migrations).toMatchObject({
          status: 'passed',
          applied: [{ name: '1700000000002_invoice-currency' }, { name: '1700000000003_enterprise-plan' }],
          nodePgMigrate: {
            version: '7.9.1',
            source: 'project',
            typescript: { name: 'ts-node', version: '10.9.2', source: 'project' },
          },
        });
        expect(report.stages.migrations.summary).toBe(
          "2 migrations applied to pr-308 with node-pg-migrate 7.9.1 (the project's), TypeScript through the project's ts-node 10.9.2",
        );
        // The same verdicts as with tsx: the loader changes how the files load, not what they do.
        expect(report.stages.reversibility.migrations.map((m) => [m.name, m.verdict])).toEqual([
          ['1700000000002_invoice-currency', 'reversible'],
          ['1700000000003_enterprise-plan', 'irreversible'],
        ]);
        expect(report.stages.lint.findings.filter((f) => f.blocking).map((f) => f.rule)).toEqual([
          'renaming-column',
          'ban-char-field',
        ]);
        expect(report.stages.schemaDiff.text).toContain('invoices.currency');
      } finally {
        await h.dispose();
      }
    },
    TS_NODE_TIMEOUT,
  );

  it('without a TypeScript loader, refuses before touching a database and names the fix', async () => {
    const h = await history('billing-ts-7x', 2, { 'node-pg-migrate': 'node-pg-migrate-7' });
    try {
      const before = (await t.provider.list()).map((b) => b.name);
      const report = await check(h.dir, 302);
      expect(report.conclusion).toBe('error');
      expect(report.error).toEqual({
        message:
          'migrations/1700000000000_accounts.ts is TypeScript, and node-pg-migrate 7.9.1 loads TypeScript only through a loader the project neither has installed nor pins in its lockfile (tsx or ts-node).',
        hint: 'Install the loader your deploy runs node-pg-migrate with (npm i -D tsx, or ts-node), or upgrade node-pg-migrate to 9, which loads TypeScript itself.',
      });
      expect((await t.provider.list()).map((b) => b.name)).toEqual(before);
    } finally {
      await h.dispose();
    }
  });

  it.each([
    ['tsx', '4.23.15', 306],
    ['ts-node', '10.9.2', 307],
  ])(
    "with no loader installed (the App's checkout), installs the %s its lockfile pins once into the cache and loads them with it",
    async (loader, version, pr) => {
      const h = await history('billing-ts-7x', 2, { 'node-pg-migrate': 'node-pg-migrate-7' });
      // The cache under Consort's node_modules, so the loader's own imports (esbuild, typescript…) resolve
      // as in a real install's prefix; npm is a stand-in first on PATH that records its arguments and
      // lays out Consort's copy of the loader under the prefix: nothing is downloaded.
      const scratch = path.join(MODULES, '.cache', `consort-${loader}-pin-${randomBytes(4).toString('hex')}`);
      const npmLog = path.join(scratch, 'npm.log');
      try {
        await writeFile(
          path.join(h.dir, 'package-lock.json'),
          JSON.stringify({
            lockfileVersion: 3,
            // ts-node's TypeScript pinned too: it is installed beside it (Consort's own copy here).
            packages: {
              '': { name: 'billing' },
              [`node_modules/${loader}`]: { version },
              ...(loader === 'ts-node' ? { 'node_modules/typescript': { version: TYPESCRIPT_VERSION } } : {}),
            },
          }),
        );
        await git(h.dir, 'add', '-A');
        await git(h.dir, 'commit', '-qm', 'lockfile');
        await mkdir(path.join(scratch, 'bin'), { recursive: true });
        await writeFile(
          path.join(scratch, 'bin/npm'),
          `#!${process.execPath}
const fs = require('fs'), path = require('path');
const args = process.argv.slice(2);
fs.appendFileSync(${JSON.stringify(npmLog)}, JSON.stringify(args) + '\\n');
const at = args.indexOf('--prefix');
for (const spec of args.slice(at + 2)) {
  const name = spec.replace(/@[^@]*$/, '');
  fs.cpSync(path.join(${JSON.stringify(MODULES)}, name), path.join(args[at + 1], 'node_modules', name), { recursive: true });
}
`,
        );
        await chmod(path.join(scratch, 'bin/npm'), 0o755);
        const env = {
          ...process.env,
          PATH: `${path.join(scratch, 'bin')}${path.delimiter}${process.env.PATH ?? ''}`,
          CONSORT_TOOLS_DIR: path.join(scratch, 'tools'),
        };
        const { config, source } = await loadConfig(h.dir);
        const { base, head } = await resolveSides(localGitRepo, h.dir, config, { base: 'main' }, () => undefined);
        const report = CheckReport.parse(
          await checkLane({
            ...testPorts,
            workspace: h.dir,
            config,
            configSource: source,
            base,
            head,
            pr,
            provider: t.provider,
            env,
            toolVersion: 'test',
            cleanup: true,
            keepBranches: false,
          }),
        );
        expect(report.error).toBeUndefined();
        // The baseline may be one an earlier test built from the same base (the loader is not part of
        // its name: it changes how files load, not what they do); the PR's migrations below ran with it.
        expect(report.stages.baseline.status).toBe('passed');
        expect(report.stages.migrations).toMatchObject({
          status: 'passed',
          nodePgMigrate: {
            version: '7.9.1',
            source: 'project',
            typescript: { name: loader, version, source: 'lockfile' },
          },
        });
        expect(report.stages.migrations.summary).toContain(
          `TypeScript through ${loader} ${version} (the version the project's lockfile pins)`,
        );
        // Installed once, for the whole check (baseline, PR branch, reversibility).
        expect(
          (await readFile(npmLog, 'utf8'))
            .trim()
            .split('\n')
            .map((l) => (JSON.parse(l) as string[]).filter((a) => /^(?:tsx|ts-node|typescript)@/.test(a))),
        ).toEqual([[`${loader}@${version}`, ...(loader === 'ts-node' ? [`typescript@${TYPESCRIPT_VERSION}`] : [])]]);
      } finally {
        await rm(scratch, { recursive: true, force: true });
        await h.dispose();
      }
    },
    TS_NODE_TIMEOUT,
  );

  it("with Consort's bundled node-pg-migrate 9 instead, base's 7.x index expression fails: why the project's own must run", async () => {
    const h = await history('billing-ts-7x', 2, { tsx: 'tsx' });
    try {
      const report = await check(h.dir, 303);
      expect(report.stages.baseline).toMatchObject({
        status: 'failed',
        summary: expect.stringContaining('syntax error at or near "text_pattern_ops"'),
      });
    } finally {
      await h.dispose();
    }
  });
});

describe("billing-ts-7x as one package of a monorepo: the package's own node-pg-migrate", () => {
  // The root has no node-pg-migrate at all (from there, Consort's bundled 9 would run, and base's
  // 7.x index expression fails on it: see above); packages/billing depends on 7.9.1 and has it
  // installed in its own node_modules; tsx is hoisted to the root's, as npm workspaces install it.
  const files = {
    'package.json': JSON.stringify({ name: 'mono', private: true, workspaces: ['packages/*'] }),
    '.github/consort.yml': 'migrations:\n  dir: packages/billing/migrations\nsuite:\n  command: "true"\n',
  };

  it("applies with the package's 7.9.1 and the hoisted tsx, and says so", async () => {
    const h = await history('billing-ts-7x', 2, { 'node-pg-migrate': 'node-pg-migrate-7' }, files, {
      under: 'packages/billing',
      rootLinks: { tsx: 'tsx' },
    });
    try {
      const report = await check(h.dir, 312);
      expect(report.error).toBeUndefined();
      // Base's 7.x index expression applied (Consort's bundled 9 fails on it): built here, or the same
      // baseline an earlier test built with the same 7.9.1 (the engine is part of its name).
      expect(report.stages.baseline.status).toBe('passed');
      expect(report.stages.migrations).toMatchObject({
        status: 'passed',
        applied: [
          {
            name: '1700000000002_invoice-currency',
            file: 'packages/billing/migrations/1700000000002_invoice-currency.ts',
          },
          { name: '1700000000003_enterprise-plan' },
        ],
        nodePgMigrate: {
          version: '7.9.1',
          source: 'project',
          typescript: { name: 'tsx', version: '4.23.15', source: 'project' },
        },
      });
      expect(report.stages.migrations.summary).toBe(
        "2 migrations applied to pr-312 with node-pg-migrate 7.9.1 (the project's), TypeScript through the project's tsx 4.23.15",
      );
      expect(report.stages.reversibility.migrations.map((m) => [m.name, m.verdict])).toEqual([
        ['1700000000002_invoice-currency', 'reversible'],
        ['1700000000003_enterprise-plan', 'irreversible'],
      ]);
    } finally {
      await h.dispose();
    }
  });
});

describe('saas-ts-7x: a SaaS history two years long, TypeScript on node-pg-migrate 7.9.1 with tsx', () => {
  // 31 migrations as a product grows: accounts, users, memberships, subscriptions, invoices, events;
  // enums (one gains a label, declared irreversible, in the middle of base), concurrent indexes
  // (noTransaction, both ways), renames of a column and a table, a text column turned into an enum,
  // backfills, a view replaced later, a trigger function. Base holds 28; the pull request adds a
  // feature: two tables, a column and a concurrent partial index. The same history bench:check times.
  it('applies base and the pull request, every stage runs, and the three new migrations reverse', async () => {
    const h = await history('saas-ts-7x', 28, { 'node-pg-migrate': 'node-pg-migrate-7', tsx: 'tsx' });
    try {
      const all = (await readdir(path.join(h.dir, 'migrations'))).sort().map((f) => f.replace(/\.ts$/, ''));
      expect(all).toHaveLength(31);
      const report = await check(h.dir, 311);
      expect(report.error).toBeUndefined();
      expect(report.stages.plan).toMatchObject({ status: 'passed', newMigrations: all.slice(28), problems: [] });
      // Base's 28, the declared irreversible one (1665662400000_subscription-paused) among them: base
      // is applied up, never reversed, so its `down = false` does not matter here.
      expect(report.stages.baseline).toMatchObject({ status: 'passed', applied: all.slice(0, 28) });
      expect(report.stages.migrations).toMatchObject({
        status: 'passed',
        applied: [
          { name: '1701388800000_feature-flags', file: 'migrations/1701388800000_feature-flags.ts' },
          { name: '1701475200000_accounts-flags-synced-at' },
          { name: '1701561600000_feature-flags-enabled-index' },
        ],
        nodePgMigrate: {
          version: '7.9.1',
          source: 'project',
          typescript: { name: 'tsx', version: '4.23.15', source: 'project' },
        },
      });
      // Every stage ran and passed, the project's no-op suite included.
      expect(
        Object.fromEntries(
          (['plan', 'baseline', 'lint', 'reversibility', 'schemaDiff', 'suite'] as const).map((n) => [
            n,
            report.stages[n].status,
          ]),
        ),
      ).toEqual({
        plan: 'passed',
        baseline: 'passed',
        lint: 'passed',
        reversibility: 'passed',
        schemaDiff: 'passed',
        suite: 'passed',
      });
      // Reversibility, by hand: each of the three has a down that undoes exactly its up (the index is
      // dropped concurrently, outside a transaction, as it was built).
      expect(report.stages.reversibility.migrations.map((m) => [m.name, m.verdict])).toEqual([
        ['1701388800000_feature-flags', 'reversible'],
        ['1701475200000_accounts-flags-synced-at', 'reversible'],
        ['1701561600000_feature-flags-enabled-index', 'reversible'],
      ]);
      expect(report.stages.reversibility.status).toBe('passed');
      const diff = report.stages.schemaDiff.text;
      for (const line of [
        'feature_flags',
        'account_feature_flags',
        'accounts.flags_synced_at',
        'account_feature_flags_enabled_idx',
      ])
        expect(diff).toContain(line);
      // Lint, by hand: nothing blocking. Timeouts are asked for where a statement waits for a lock:
      // account_feature_flags' foreign key locks accounts, live on base (line 13; the new feature_flags
      // above it locks nothing), the column added to accounts, and the concurrent index (it still
      // waits for a lock and for older transactions), which without IF NOT EXISTS also cannot be
      // re-run after a failure. All warnings, so the check passes.
      expect(
        report.stages.lint.findings.map((f) => [f.file.replace('migrations/170', ''), f.line, f.rule, f.blocking]),
      ).toEqual([
        ['1388800000_feature-flags.ts', 13, 'require-lock-timeout', false],
        ['1388800000_feature-flags.ts', 13, 'require-statement-timeout', false],
        ['1475200000_accounts-flags-synced-at.ts', 7, 'require-lock-timeout', false],
        ['1475200000_accounts-flags-synced-at.ts', 7, 'require-statement-timeout', false],
        ['1561600000_feature-flags-enabled-index.ts', 8, 'prefer-robust-stmts', false],
        ['1561600000_feature-flags-enabled-index.ts', 8, 'require-lock-timeout', false],
        ['1561600000_feature-flags-enabled-index.ts', 8, 'require-statement-timeout', false],
      ]);
      expect(report.conclusion).toBe('success');
      expect(report.branch).toBeNull();
    } finally {
      await h.dispose();
    }
  });
});

describe('catalog-esm-ts: ESM TypeScript on the bundled node-pg-migrate 9', () => {
  it("loads through node-pg-migrate's own jiti with project imports, and tells a new view's index from a live table's", async () => {
    const h = await history('catalog-esm-ts', 1, { 'node-pg-migrate': 'node-pg-migrate' });
    try {
      const report = await check(h.dir, 304);
      expect(report.error).toBeUndefined();
      expect(report.stages.migrations).toMatchObject({
        status: 'passed',
        applied: [{ name: '1710000000001_product search', file: 'migrations/1710000000001_product search.ts' }],
        nodePgMigrate: { version: '9.0.0', source: 'bundled', typescript: { name: 'jiti', source: 'engine' } },
      });
      expect(report.stages.migrations.summary).toMatch(
        // Inside Consort's repository the fixture resolves Consort's own copy: one install for both.
        /^1 migration applied to pr-304 with node-pg-migrate 9\.0\.0 \(the project's, the same copy Consort uses\), TypeScript through its own jiti \d/,
      );
      // By hand: the indexes on the view this PR creates cannot lock anyone (notes); the one on
      // products, live on base, blocks writes while it builds (blocking).
      const concurrent = report.stages.lint.findings.filter((f) => f.rule === 'require-concurrent-index-creation');
      expect(concurrent.map((f) => [f.line, f.blocking, f.note === undefined])).toEqual([
        [10, false, false],
        [11, false, false],
        [13, true, true],
      ]);
      expect(report.stages.lint.status).toBe('failed');
      expect(report.stages.reversibility).toMatchObject({ status: 'passed', migrations: [{ verdict: 'reversible' }] });
      expect(report.stages.schemaDiff.text).toContain('product_search');
    } finally {
      await h.dispose();
    }
  });
});

describe('forum-cjs: CommonJS migrations numbered by index, with shorthands from the first one', () => {
  // The shape of CommonJS histories made by hand rather than by `node-pg-migrate create`: files
  // numbered 0001, 0002…; `exports.shorthands` (uuid ids and timestamps built with PgLiteral) declared
  // once in the first migration and used by every later one (node-pg-migrate hands a migration the
  // shorthands of all before it); `pgm.sql` with template placeholders; a backfill declared
  // irreversible (`exports.down = false`); a concurrent index under `pgm.noTransaction()`; a table
  // with no down (node-pg-migrate infers it). Base holds 4; the pull request adds the last 2.
  it.each([
    // 9 is Consort's own copy too (one install for both): reported as bundled.
    ['7.9.1', 'node-pg-migrate-7', 'project'],
    ['9.0.0', 'node-pg-migrate', 'bundled'],
  ])('on node-pg-migrate %s: applies, lints and reverses the two new migrations', async (version, pkg, source) => {
    const h = await history('forum-cjs', 4, { 'node-pg-migrate': pkg });
    try {
      const report = await check(h.dir, 313);
      expect(report.error).toBeUndefined();
      expect(report.stages.plan).toMatchObject({
        status: 'passed',
        newMigrations: ['0005_posts-created-at-index', '0006_reactions'],
        problems: [],
      });
      expect(report.stages.migrations).toMatchObject({
        status: 'passed',
        applied: [{ name: '0005_posts-created-at-index' }, { name: '0006_reactions' }],
        nodePgMigrate: { version, source },
      });
      // By hand: the concurrent index reverses with its down; the table has none, and node-pg-migrate
      // infers its drop (the shorthand `id` from 0001 expands the same way in both directions).
      expect(report.stages.reversibility.migrations.map((m) => [m.name, m.verdict])).toEqual([
        ['0005_posts-created-at-index', 'reversible'],
        ['0006_reactions', 'reversible'],
      ]);
      // 0006's ids are 0001's shorthand: uuid with gen_random_uuid().
      expect(report.stages.schemaDiff.text).toContain('id uuid NOT NULL DEFAULT gen_random_uuid()');
      expect(report.stages.lint.findings.filter((f) => f.blocking)).toEqual([]);
      expect(report.conclusion).toBe('success');
    } finally {
      await h.dispose();
    }
  });

  // A hand-named migration whose number is followed by `-` rather than `_`. node-pg-migrate 6–8 read
  // the order number from the text before the first `_` (`0007-post-pins.js` has none: 0, after an
  // error line), so they order it before every migration on base and refuse to run it
  // ("Not run migration 0007-post-pins is preceding already run migration 0001_…"); 9 reads the
  // leading digits and runs it last.
  const PINS =
    "exports.up = (pgm) => {\n  pgm.addColumn('posts', { pinned: { type: 'boolean', notNull: true, default: false } });\n};\n\nexports.down = (pgm) => {\n  pgm.dropColumn('posts', 'pinned');\n};\n";
  it('on node-pg-migrate 7.9.1, a number followed by `-` is an order conflict in the plan, with the rename that fixes it', async () => {
    const h = await history(
      'forum-cjs',
      6,
      { 'node-pg-migrate': 'node-pg-migrate-7' },
      {
        'migrations/0007-post-pins.js': PINS,
      },
    );
    try {
      const report = await check(h.dir, 314);
      expect(report.stages.plan).toMatchObject({
        status: 'failed',
        newMigrations: ['0007-post-pins'],
        problems: [
          {
            kind: 'order-conflict',
            file: 'migrations/0007-post-pins.js',
            newestOnBase: '0006_reactions',
            suggestedName: '0007_post-pins.js',
            suggestedFile: 'migrations/0007_post-pins.js',
          },
        ],
      });
      expect(report.stages.migrations.applied).toEqual([]);
      expect(report.conclusion).toBe('failure');
    } finally {
      await h.dispose();
    }
  });

  // A base whose first migration creates PostGIS, checked where the server has no PostGIS (the local
  // provider's embedded PostgreSQL has none): base cannot apply there, and it is the server, not the
  // migration, that needs fixing.
  it('a base creating an extension the server lacks: the baseline says so, and does not ask to fix the migration', async () => {
    const h = await history(
      'forum-cjs',
      5,
      { 'node-pg-migrate': 'node-pg-migrate' },
      {
        'migrations/0000_postgis.js':
          "exports.up = (pgm) => {\n  pgm.createExtension('postgis', { ifNotExists: true });\n};\n\nexports.down = (pgm) => {\n  pgm.dropExtension('postgis');\n};\n",
      },
    );
    try {
      const report = await check(h.dir, 316);
      expect(report.stages.baseline).toMatchObject({
        status: 'failed',
        failure: { file: 'migrations/0000_postgis.js', code: '0A000' },
      });
      const summary = report.stages.baseline.summary;
      expect(summary).toContain('extension "postgis" is not available');
      expect(summary).toContain('the postgis extension is not installed on the server the parent branch "main" is on');
      expect(summary).toContain("the local provider's embedded PostgreSQL has no PostGIS");
      expect(summary).not.toContain('Fix migrations/0000_postgis.js');
    } finally {
      await h.dispose();
    }
  });

  it('a pull request creating an extension the server lacks: the migrations stage says what is missing where', async () => {
    const h = await history(
      'forum-cjs',
      6,
      { 'node-pg-migrate': 'node-pg-migrate' },
      {
        'migrations/0007_post-locations.js':
          "exports.up = (pgm) => {\n  pgm.createExtension('postgis', { ifNotExists: true });\n  pgm.addColumn('posts', { location: { type: 'geography(Point, 4326)' } });\n};\n\nexports.down = (pgm) => {\n  pgm.dropColumn('posts', 'location');\n  pgm.dropExtension('postgis');\n};\n",
      },
    );
    try {
      const report = await check(h.dir, 317);
      expect(report.stages.migrations).toMatchObject({
        status: 'failed',
        failure: { file: 'migrations/0007_post-locations.js', code: '0A000' },
      });
      expect(report.stages.migrations.summary).toContain(
        'the postgis extension is not installed on the server the branches are on',
      );
    } finally {
      await h.dispose();
    }
  });

  it("an empty down, as node-pg-migrate's template leaves it: not restored, and said why", async () => {
    const h = await history(
      'forum-cjs',
      6,
      { 'node-pg-migrate': 'node-pg-migrate' },
      {
        'migrations/0007_user-bios.js':
          "exports.shorthands = undefined;\n\nexports.up = (pgm) => {\n  pgm.addColumn('users', { bio: { type: 'text' } });\n};\n\nexports.down = (pgm) => {};\n",
      },
    );
    try {
      const report = await check(h.dir, 320);
      expect(report.stages.reversibility).toMatchObject({
        status: 'failed',
        migrations: [{ name: '0007_user-bios', verdict: 'not-restored' }],
      });
      const detail = report.stages.reversibility.migrations[0]!.detail ?? '';
      expect(detail).toContain('+ column public.users.bio text');
      expect(detail).toContain(
        'its down ran no statement: write what undoes its up, or declare it irreversible (down = false) if nothing can',
      );
    } finally {
      await h.dispose();
    }
  });

  it('pgm.noTransaction() in up only, a concurrent drop in down: down-failed, and told that down needs its own', async () => {
    const h = await history(
      'forum-cjs',
      6,
      { 'node-pg-migrate': 'node-pg-migrate' },
      {
        'migrations/0007_users-handle-index.js':
          "exports.up = (pgm) => {\n  pgm.noTransaction();\n  pgm.createIndex('users', 'handle', { concurrently: true });\n};\n\nexports.down = (pgm) => {\n  pgm.dropIndex('users', 'handle', { concurrently: true });\n};\n",
      },
    );
    try {
      const report = await check(h.dir, 321);
      expect(report.stages.migrations.status).toBe('passed');
      expect(report.stages.reversibility).toMatchObject({
        status: 'failed',
        migrations: [{ name: '0007_users-handle-index', verdict: 'down-failed' }],
      });
      expect(report.stages.reversibility.migrations[0]!.detail).toBe(
        'DROP INDEX CONCURRENTLY cannot run inside a transaction block (node-pg-migrate runs down inside a transaction unless down itself calls pgm.noTransaction(): a call in up does not carry over)',
      );
    } finally {
      await h.dispose();
    }
  });

  it('on node-pg-migrate 9, the same file orders by its leading digits and applies', async () => {
    const h = await history(
      'forum-cjs',
      6,
      { 'node-pg-migrate': 'node-pg-migrate' },
      {
        'migrations/0007-post-pins.js': PINS,
      },
    );
    try {
      const report = await check(h.dir, 315);
      expect(report.stages.plan).toMatchObject({ status: 'passed', problems: [] });
      expect(report.stages.migrations).toMatchObject({ status: 'passed', applied: [{ name: '0007-post-pins' }] });
      expect(report.conclusion).toBe('success');
    } finally {
      await h.dispose();
    }
  });
});

describe('forum-cjs deployed with a migrations table of its own', () => {
  // node-pg-migrate's `--migrations-table` (a script's flag, `migrations-table` in its config file, the
  // runner's `migrationsTable`): per-service tables such as `pgmigrations_auth` in a database several
  // services share, or `_pgmigrations` from an `.pgmrc.js`. The parent holds base as that deploy left
  // it; Consort's configuration still names the default table.
  it('a parent whose record of base is in another table: the baseline names it and the setting, and applies nothing', async () => {
    const own = await localTestProvider();
    const h = await history('forum-cjs', 4, { 'node-pg-migrate': 'node-pg-migrate' });
    const deployed = await mkdtemp(path.join(tmpdir(), 'consort-forum-deployed-'));
    try {
      await git(h.dir, 'worktree', 'add', '-q', path.join(deployed, 'tree'), 'main');
      await symlink(path.join(h.dir, 'node_modules'), path.join(deployed, 'tree', 'node_modules'), 'dir');
      const parent = await own.provider.connectionUri('main');
      const up = await applyMigrations({
        databaseUrl: parent,
        dir: path.join(deployed, 'tree', 'migrations'),
        relativeTo: path.join(deployed, 'tree'),
        direction: 'up',
        migrationsTable: '_pgmigrations',
      });
      expect(up.ok ? [] : [up.failed]).toEqual([]);
      const report = await checkAgainstMain(h.dir, 318, own.provider);
      expect(report.stages.baseline.status).toBe('failed');
      expect(report.stages.baseline.summary).toContain(
        'The parent branch "main" records 4 of base\'s migrations in public._pgmigrations, not in public.pgmigrations (migrations.table)',
      );
      expect(report.stages.baseline.summary).toContain('set migrations.table: _pgmigrations');
      expect(report.stages.migrations.applied).toEqual([]);

      // With the deploy's table configured on base, the baseline starts from the parent as deployed:
      // base's 4 are recorded there already, so none is applied again; the PR's 2 are.
      const configured = await history(
        'forum-cjs',
        4,
        { 'node-pg-migrate': 'node-pg-migrate' },
        {
          '.github/consort.yml': 'suite:\n  command: "true"\nmigrations:\n  table: _pgmigrations\n',
        },
      );
      try {
        const fixed = await checkAgainstMain(configured.dir, 319, own.provider);
        expect(fixed.stages.baseline).toMatchObject({ status: 'passed', applied: [] });
        expect(fixed.stages.migrations).toMatchObject({
          status: 'passed',
          applied: [{ name: '0005_posts-created-at-index' }, { name: '0006_reactions' }],
        });
        expect(fixed.conclusion).toBe('success');
      } finally {
        await configured.dispose();
      }
    } finally {
      await h.dispose();
      await rm(deployed, { recursive: true, force: true });
      await own.cleanup();
    }
  });
});

describe('shop-cjs: a project that deploys with --no-check-order', () => {
  // A hotfix branch cut long ago lands now: its migration's timestamp sorts before base's newest
  // (1700000000002), as 36 of 226 do in one of the histories this issue came from. The project
  // runs `node-pg-migrate up --no-check-order`, so Consort must too: migrations.checkOrder false.
  const HOTFIX = 'migrations/1699999999999_orders-note.sql';
  async function outOfOrder(config: string | undefined): Promise<History> {
    const h = await history(
      'shop-cjs',
      3,
      { 'node-pg-migrate': 'node-pg-migrate' },
      config === undefined ? {} : { '.github/consort.yml': config },
    );
    await writeFile(
      path.join(h.dir, HOTFIX),
      '-- Up Migration\nALTER TABLE orders ADD COLUMN note text;\n\n-- Down Migration\nALTER TABLE orders DROP COLUMN note;\n',
    );
    await git(h.dir, 'add', '-A');
    await git(h.dir, 'commit', '-qm', 'the late hotfix');
    return h;
  }

  it('with migrations.checkOrder false, the out-of-order migration is a warning, applied after base and checked', async () => {
    const h = await outOfOrder('suite:\n  command: "true"\nmigrations:\n  checkOrder: false\n');
    try {
      const report = await check(h.dir, 309);
      expect(report.error).toBeUndefined();
      expect(report.stages.plan).toMatchObject({
        status: 'passed',
        newMigrations: ['1699999999999_orders-note'],
        problems: [],
        warnings: [expect.objectContaining({ kind: 'order-conflict', file: HOTFIX })],
      });
      expect(report.stages.plan.summary).toContain('1 out of order (allowed: migrations.checkOrder is false)');
      // node-pg-migrate ran it after base's three, as the deploy's --no-check-order does.
      expect(report.stages.migrations).toMatchObject({
        status: 'passed',
        applied: [{ name: '1699999999999_orders-note', file: HOTFIX }],
      });
      expect(report.stages.reversibility.migrations.map((m) => [m.name, m.verdict])).toEqual([
        ['1699999999999_orders-note', 'reversible'],
      ]);
      expect(report.stages.schemaDiff.text).toContain('orders.note');
      expect(report.conclusion).toBe('success');
    } finally {
      await h.dispose();
    }
  });

  it('a new migration sharing the newest prefix on base, named after it, is a warning: node-pg-migrate orders it by name', async () => {
    const h = await history(
      'shop-cjs',
      3,
      { 'node-pg-migrate': 'node-pg-migrate' },
      {
        '.github/consort.yml': 'suite:\n  command: "true"\n',
      },
    );
    const twin = 'migrations/1700000000002_orders-note.sql';
    try {
      await writeFile(
        path.join(h.dir, twin),
        '-- Up Migration\nALTER TABLE orders ADD COLUMN note text;\n\n-- Down Migration\nALTER TABLE orders DROP COLUMN note;\n',
      );
      await git(h.dir, 'add', '-A');
      await git(h.dir, 'commit', '-qm', 'same millisecond');
      const report = await check(h.dir, 311);
      expect(report.error).toBeUndefined();
      expect(report.stages.plan).toMatchObject({
        status: 'passed',
        problems: [],
        warnings: [
          expect.objectContaining({
            kind: 'duplicate-prefix',
            file: twin,
            conflictsWith: '1700000000002_backfill lowercase emails',
          }),
        ],
      });
      expect(report.stages.plan.summary).toContain('1 duplicate prefix (node-pg-migrate orders them by name)');
      expect(report.stages.migrations).toMatchObject({ status: 'passed', applied: [{ file: twin }] });
      expect(report.conclusion).toBe('success');
    } finally {
      await h.dispose();
    }
  });

  it('by default the same history fails the plan with an order conflict, and no migration is applied', async () => {
    const h = await outOfOrder(undefined);
    try {
      const report = await check(h.dir, 310);
      expect(report.conclusion).toBe('failure');
      expect(report.stages.plan).toMatchObject({
        status: 'failed',
        problems: [expect.objectContaining({ kind: 'order-conflict', file: HOTFIX })],
      });
      expect(report.stages.migrations.applied).toEqual([]);
    } finally {
      await h.dispose();
    }
  });
});

describe('tenants-esm: ESM JavaScript ("type": "module") importing the project\'s own helpers', () => {
  // The shape of ESM projects' .js migrations: `export async function up(pgm)` and `export const up`,
  // tables in a schema of their own (`{ schema: 'app', name }`), row-level security applied by a
  // helper the migrations import from the project (lib/rls.js: alterTable levelSecurity +
  // createPolicy), a trigger with its plpgsql function, a foreign key added with addConstraint, and
  // an audit column and index added by another helper (lib/audit.js). node-pg-migrate 7.9.1 loads
  // them with require() (Node's require of ES modules), 9 with import(). Base holds 2, the PR adds 3.
  it.each([
    ['7.9.1', 'node-pg-migrate-7'],
    ['9.0.0', 'node-pg-migrate'],
  ])(
    'on node-pg-migrate %s: applies, lints at the lines that sent each statement, and reverses',
    async (version, pkg) => {
      const h = await history('tenants-esm', 2, { 'node-pg-migrate': pkg });
      try {
        const report = await check(h.dir, 330);
        expect(report.error).toBeUndefined();
        expect(report.stages.migrations).toMatchObject({
          status: 'passed',
          applied: [
            { name: '1712000000002_tasks' },
            { name: '1712000000003_projects-archived' },
            { name: '1712000000004_projects-audit', file: 'migrations/1712000000004_projects-audit.js' },
          ],
          nodePgMigrate: { version },
        });
        // By hand. tasks' foreign key locks projects, live on base (line 13); its RLS (from lib/rls.js)
        // is on the new table: nothing. The rename and the unique constraint on projects block. The audit
        // helper's column and index on projects are sent from lib/audit.js: they land on the call that
        // handed it pgm (line 6, quoted), the index there blocking writes to a live table.
        expect(
          report.stages.lint.findings.map((f) => [
            f.file.replace('migrations/171200000000', ''),
            f.line,
            f.rule,
            f.blocking,
            f.message.includes(' (in `'),
          ]),
        ).toEqual([
          ['2_tasks.js', 13, 'require-lock-timeout', false, false],
          ['2_tasks.js', 13, 'require-statement-timeout', false, false],
          ['3_projects-archived.js', 4, 'require-lock-timeout', false, false],
          ['3_projects-archived.js', 4, 'require-statement-timeout', false, false],
          ['3_projects-archived.js', 5, 'renaming-column', true, false],
          ['3_projects-archived.js', 6, 'constraint-missing-not-valid', false, false],
          ['3_projects-archived.js', 6, 'disallowed-unique-constraint', true, false],
          ['4_projects-audit.js', 6, 'require-lock-timeout', false, true],
          ['4_projects-audit.js', 6, 'require-statement-timeout', false, true],
          ['4_projects-audit.js', 6, 'require-concurrent-index-creation', true, true],
        ]);
        // Each down undoes its up, the policy and trigger included, through the helpers too.
        expect(report.stages.reversibility.migrations.map((m) => [m.name, m.verdict])).toEqual([
          ['1712000000002_tasks', 'reversible'],
          ['1712000000003_projects-archived', 'reversible'],
          ['1712000000004_projects-audit', 'reversible'],
        ]);
        for (const line of ['+ table app.tasks', 'app.projects.title', 'tenant_isolation', 'tasks_touch_updated_at'])
          expect(report.stages.schemaDiff.text).toContain(line);
        expect(report.conclusion).toBe('failure');
      } finally {
        await h.dispose();
      }
    },
  );

  it('on 7.9.1, later migrations as .mjs and .cjs (a callback-style up), named in UTC format: ordered, applied, reversed', async () => {
    // node-pg-migrate's `--migration-filename-format utc` names (17 digits) after base's
    // millisecond timestamps; .cjs keeps CommonJS in an ESM package; `(pgm, run)` is the old callback API.
    const h = await history(
      'tenants-esm',
      5,
      { 'node-pg-migrate': 'node-pg-migrate-7' },
      {
        'migrations/20240406000000000_tenant-plan.mjs':
          "export const up = (pgm) => {\n  pgm.addColumn({ schema: 'app', name: 'tenants' }, { plan: { type: 'text', notNull: true, default: 'free' } });\n};\n\nexport const down = false;\n",
        'migrations/20240407000000000_tenant-note.cjs':
          "exports.up = (pgm, run) => {\n  pgm.addColumn({ schema: 'app', name: 'tenants' }, { note: { type: 'text' } });\n  run();\n};\n",
      },
    );
    try {
      const report = await check(h.dir, 333);
      expect(report.stages.plan).toMatchObject({
        status: 'passed',
        newMigrations: ['20240406000000000_tenant-plan', '20240407000000000_tenant-note'],
      });
      expect(report.stages.migrations).toMatchObject({
        status: 'passed',
        applied: [
          { file: 'migrations/20240406000000000_tenant-plan.mjs' },
          { file: 'migrations/20240407000000000_tenant-note.cjs' },
        ],
      });
      expect(report.stages.reversibility.migrations.map((m) => [m.name, m.verdict])).toEqual([
        ['20240406000000000_tenant-plan', 'irreversible'],
        ['20240407000000000_tenant-note', 'reversible'],
      ]);
      expect(report.stages.lint.findings.map((f) => [f.file.slice(-10), f.line, f.rule])).toEqual([
        ['t-plan.mjs', 2, 'require-lock-timeout'],
        ['t-plan.mjs', 2, 'require-statement-timeout'],
        ['t-note.cjs', 2, 'require-lock-timeout'],
        ['t-note.cjs', 2, 'require-statement-timeout'],
      ]);
      expect(report.conclusion).toBe('success');
    } finally {
      await h.dispose();
    }
  });

  it('a migration granting to a role named by the environment: unset where the check runs, the failure names the variable', async () => {
    const h = await history(
      'tenants-esm',
      5,
      { 'node-pg-migrate': 'node-pg-migrate' },
      {
        'migrations/1712000000006_reader-grants.js':
          'const reader = process.env.APP_READER_ROLE;\n\nexport const up = (pgm) => {\n  pgm.sql(`GRANT USAGE ON SCHEMA app TO ${reader}`);\n  pgm.sql(`GRANT SELECT ON app.projects TO ${reader}`);\n};\n\nexport const down = (pgm) => {\n  pgm.sql(`REVOKE SELECT ON app.projects FROM ${reader}`);\n  pgm.sql(`REVOKE USAGE ON SCHEMA app FROM ${reader}`);\n};\n',
      },
    );
    const saved = process.env.APP_READER_ROLE;
    try {
      delete process.env.APP_READER_ROLE;
      const report = await check(h.dir, 336);
      expect(report.stages.migrations).toMatchObject({
        status: 'failed',
        failure: { statement: 'GRANT USAGE ON SCHEMA app TO undefined;', code: '42704' },
      });
      expect(report.stages.migrations.summary).toContain(
        'role "undefined" does not exist (the statement holds undefined where the migration put a value it did not have: it reads APP_READER_ROLE (not set where the check runs: export it there — in the Action, the workflow step\'s env:))',
      );
    } finally {
      if (saved === undefined) delete process.env.APP_READER_ROLE;
      else process.env.APP_READER_ROLE = saved;
      await h.dispose();
    }
  });

  it('a helper module kept in the migrations folder: the plan names the ignorePattern to set, and with it the check passes', async () => {
    const files = {
      'migrations/columns.js':
        "export const timestamp = (pgm) => ({ type: 'timestamptz', notNull: true, default: pgm.func('now()') });\n",
      'migrations/1712000000005_tenants-seen-at.js':
        "import { timestamp } from './columns.js';\n\nexport const up = (pgm) => {\n  pgm.addColumn({ schema: 'app', name: 'tenants' }, { seen_at: timestamp(pgm) });\n};\n\nexport const down = (pgm) => {\n  pgm.dropColumn({ schema: 'app', name: 'tenants' }, 'seen_at');\n};\n",
    };
    const h = await history('tenants-esm', 5, { 'node-pg-migrate': 'node-pg-migrate' }, files);
    try {
      const report = await check(h.dir, 334);
      expect(report.stages.plan).toMatchObject({
        status: 'failed',
        problems: [{ kind: 'invalid-name', file: 'migrations/columns.js' }],
      });
      const reason = (report.stages.plan.problems[0] as { reason: string }).reason;
      const value = /set migrations\.ignorePattern: '([^']+)'/.exec(reason)?.[1];
      expect(value).toBe('\\..*|columns\\.js');
      // The value, as the reason gives it, in the base's configuration.
      const fixed = await history(
        'tenants-esm',
        5,
        { 'node-pg-migrate': 'node-pg-migrate' },
        {
          ...files,
          '.github/consort.yml': `suite:\n  command: "true"\nmigrations:\n  ignorePattern: '${value}'\n`,
        },
      );
      try {
        const ok = await check(fixed.dir, 335);
        expect(ok.stages.plan).toMatchObject({ status: 'passed', newMigrations: ['1712000000005_tenants-seen-at'] });
        expect(ok.stages.migrations).toMatchObject({
          status: 'passed',
          applied: [{ name: '1712000000005_tenants-seen-at' }],
        });
        expect(ok.stages.reversibility.migrations.map((m) => m.verdict)).toEqual(['reversible']);
      } finally {
        await fixed.dispose();
      }
    } finally {
      await h.dispose();
    }
  });
});
