/**
 * The template that test leases fork from: the parent branch with the project's migrations applied
 * and its seed loaded, named by what it holds (`tests-<hash of migrations, seed, parent>`), so a run
 * reuses it until a migration or the seed changes, and then builds the next one once. Older test
 * templates go when a new one is made (unless a lease of theirs is still out).
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { migrationEnv } from '../core/child-env.js';
import { loadConfig } from '../config/load.js';
import type { ConsortConfig } from '../config/schema.js';
import { ConsortError } from '../core/errors.js';
import { readSeed, runSeed } from '../lanes/check/baseline.js';
import { resolveEngine } from '../migrations/engine.js';
import { prepareTypeScript } from '../migrations/ts-loader.js';
import { readMigrationSet } from '../migrations/files.js';
import { dotenvHash } from '../migrations/dotenv.js';
import { hasSchemaSettings, migrationPlacement } from '../migrations/placement.js';
import { applyMigrations } from '../migrations/runner.js';
import { localProcessRunner } from '../process/runner.js';
import type { BranchProvider, PoolStatus } from '../ports/branch-provider.js';
import { count } from '../core/plural.js';
import { importedFiles, treeReader } from '../migrations/imported-code.js';
import { migrationsPackage, workspacePackages } from '../migrations/project-packages.js';

const TEMPLATE = /^tests-[0-9a-f]{12}$/;

export interface TestTemplateOptions {
  /** The project root: where the configuration, migrations and seed are found. */
  root: string;
  /** Default: the project's configuration file (or the defaults). */
  config?: ConsortConfig;
  /** Ready copies to keep (0: no pool, every lease copies). */
  poolSize: number;
  /** For a seed command. */
  env: NodeJS.ProcessEnv;
  log?: (message: string) => void;
}

export interface TestTemplate {
  name: string;
  /** The template already existed (nothing was migrated or seeded). */
  reused: boolean;
  pool: PoolStatus | undefined;
  /** Older test templates dropped. */
  removed: string[];
  config: ConsortConfig;
}

async function seedIdentity(config: ConsortConfig, root: string): Promise<string> {
  const seed = config.database.seed;
  if (!seed) return 'none';
  if (seed.kind === 'command') return `command:${seed.command}`;
  const sql = await readSeed(root, seed.path);
  return `file:${createHash('sha256').update(sql).digest('hex')}`;
}

export async function prepareTestTemplate(
  provider: BranchProvider,
  options: TestTemplateOptions,
): Promise<TestTemplate> {
  const { root } = options;
  const config = options.config ?? (await loadConfig(root)).config;
  const dir = path.join(root, config.migrations.dir);
  const files = await readMigrationSet(dir, {
    relativeTo: root,
    missingOk: true,
    ignorePattern: config.migrations.ignorePattern,
  });
  const placement = migrationPlacement(config.migrations);
  // The project files JS/TS migrations import decide the schema too (an enum built from the app's list).
  const workspace = await workspacePackages(await migrationsPackage(root, config.migrations.dir)).catch(
    () => new Map<string, string>(),
  );
  const imports = await importedFiles(
    files,
    treeReader({ kind: 'dir', dir: root }, undefined)!,
    undefined,
    workspace,
  ).catch(() => []);
  // And what the .env the migrations load gives them (migrations/dotenv.ts): only a hash of it.
  const dotenv = await dotenvHash(root, config.migrations.dir).catch(() => undefined);
  const key = createHash('sha256')
    .update(
      JSON.stringify({
        parent: config.database.parent,
        table: config.migrations.table,
        // Only when set, so templates made before these settings existed keep their names.
        ...(hasSchemaSettings(placement) ? { placement } : {}),
        migrations: files.map((m) => [m.name, m.sha256]),
        seed: await seedIdentity(config, root),
        // Only when there are any, so templates of histories that import nothing keep their names.
        ...(imports.length > 0 ? { imports: imports.map((f) => [f.file, f.sha256]) } : {}),
        ...(dotenv ? { dotenv } : {}),
      }),
    )
    .digest('hex');
  const name = `tests-${key.slice(0, 12)}`;

  const existing = await provider.get(name);
  let reused = existing?.parent === config.database.parent;
  if (!reused) {
    options.log?.(
      `Preparing the test template ${name}: ${count(files.length, 'migration')}${config.database.seed ? ' and the seed' : ''} on ${config.database.parent}`,
    );
    // The project's node-pg-migrate and TypeScript loader (in a monorepo, those of the package owning migrations.dir).
    const migrationsDir = config.migrations.dir;
    const { engine } = await prepareTypeScript(
      await resolveEngine(root, { migrationsDir }),
      root,
      files.map((m) => m.file),
      { migrationsDir },
    );
    const { outcome } = await provider.ensure({
      name,
      parent: config.database.parent,
      prepare: async (url) => {
        const result = await applyMigrations({
          databaseUrl: url,
          dir,
          relativeTo: root,
          direction: 'up',
          ...placement,
          checkOrder: config.migrations.checkOrder,
          ignorePattern: config.migrations.ignorePattern,
          engine,
          // The test runner's own environment: the settings a migration's imports read.
          env: migrationEnv(process.env, [config.suite.env], config.suite.passEnv),
        });
        if (!result.ok) {
          const f = result.failed;
          throw new ConsortError(
            'config',
            `The migration ${f.name ?? f.file ?? ''} does not apply to "${config.database.parent}": ${f.error.message}`,
            {
              hint: 'Fix the migration; the test template is the parent branch with every migration applied.',
            },
          );
        }
        await runSeed(config, root, url, options.env, localProcessRunner);
      },
    });
    reused = outcome === 'reused';
  }

  const removed = await dropOldTemplates(provider, name);

  let pool: PoolStatus | undefined;
  if (provider.pool) pool = await provider.pool(name, options.poolSize);
  return { name, reused, pool, removed, config };
}

/**
 * Drop the test templates other than `current` (and their pools). Not recursive: a template with a
 * lease still out belongs to a run that is not over, and is dropped by a later sweep.
 */
export async function dropOldTemplates(provider: BranchProvider, current: string): Promise<string[]> {
  const removed: string[] = [];
  for (const b of await provider.list()) {
    if (b.name === current || !TEMPLATE.test(b.name)) continue;
    await provider.delete(b.name).then(
      () => removed.push(b.name),
      () => undefined,
    );
  }
  return removed;
}
