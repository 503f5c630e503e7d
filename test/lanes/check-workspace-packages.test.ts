/**
 * A monorepo's migration that imports a workspace package (`require('@acme/shared')`, linked by the
 * install as node_modules/@acme/shared → packages/shared) runs, for a commit's side, with that
 * commit's package, as it does with a relative import: the working tree's install would hand base's
 * migration the change's code.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { commitSide } from '../../src/lanes/check/sides.js';
import { createWorkdir } from '../../src/lanes/check/workdir.js';
import { ConsortConfigSchema } from '../../src/config/schema.js';
import { localGitRepo } from '../../src/git/repo.js';
import { migrationsPackage, workspacePackages } from '../../src/migrations/project-packages.js';
import { applyMigrations } from '../../src/migrations/runner.js';
import { quoteIdent, withClient, withDatabase } from '../../src/db/sql.js';
import { SYSTEM_PG_URL } from '../helpers/servers.js';
import { isolatedGit as git } from '../helpers/check-repo.js';

describe('a workspace package a migration imports, on a commit side', () => {
  let root: string;
  let sha: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'consort-workspace-pkg-'));
    await git(root, 'init', '-q', '-b', 'main');
    await writeFile(path.join(root, '.gitignore'), 'node_modules/\n');
    await writeFile(
      path.join(root, 'package.json'),
      '{ "name": "acme", "private": true, "workspaces": ["packages/*"] }\n',
    );
    await mkdir(path.join(root, 'packages/shared'), { recursive: true });
    await writeFile(
      path.join(root, 'packages/shared/package.json'),
      '{ "name": "@acme/shared", "version": "1.0.0", "main": "kinds.js" }\n',
    );
    await writeFile(path.join(root, 'packages/shared/kinds.js'), "exports.KINDS = ['card', 'invoice'];\n");
    await mkdir(path.join(root, 'packages/db/migrations'), { recursive: true });
    await writeFile(
      path.join(root, 'packages/db/package.json'),
      '{ "name": "@acme/db", "version": "1.0.0", "dependencies": { "@acme/shared": "*" } }\n',
    );
    await writeFile(
      path.join(root, 'packages/db/migrations/1700000000000_payment-kinds.js'),
      [
        "const { KINDS } = require('@acme/shared');",
        '',
        "exports.up = (pgm) => { pgm.createType('payment_kind', KINDS); };",
        "exports.down = (pgm) => { pgm.dropType('payment_kind'); };",
        '',
      ].join('\n'),
    );
    await git(root, 'add', '.');
    await git(root, 'commit', '-qm', 'base');
    sha = (await git(root, 'rev-parse', 'HEAD')).stdout.trim();
    // The install, as npm workspaces make it: links into the repository, at the root.
    await mkdir(path.join(root, 'node_modules/@acme'), { recursive: true });
    await symlink('../../packages/shared', path.join(root, 'node_modules/@acme/shared'), 'dir');
    await symlink('../../packages/db', path.join(root, 'node_modules/@acme/db'), 'dir');
    // The change, in the working tree: a new kind.
    await writeFile(path.join(root, 'packages/shared/kinds.js'), "exports.KINDS = ['card', 'invoice', 'refund'];\n");
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it("base's migration gets base's packages/shared, not the working tree's", async () => {
    const config = ConsortConfigSchema.parse({ migrations: { dir: 'packages/db/migrations' } });
    const side = await commitSide(localGitRepo, root, 'main', sha, config);
    const workdir = await createWorkdir(await migrationsPackage(root, config.migrations.dir), localGitRepo);
    const db = `wspkg_${randomBytes(6).toString('hex')}`;
    await withClient(SYSTEM_PG_URL, (a) => a.query(`CREATE DATABASE ${quoteIdent(db)} TEMPLATE template0`));
    try {
      const extracted = await workdir.extract('base', config.migrations.dir, root, sha, side.migrations);
      const url = withDatabase(SYSTEM_PG_URL, db);
      const r = await applyMigrations({
        databaseUrl: url,
        ...extracted,
        direction: 'up',
        migrationsTable: 'pgmigrations',
      });
      expect(r.ok).toBe(true);
      const labels = await withClient(url, async (c) =>
        (await c.query<{ l: string }>(`SELECT unnest(enum_range(NULL::payment_kind))::text AS l`)).rows.map((x) => x.l),
      );
      expect(labels).toEqual(['card', 'invoice']);
    } finally {
      await workdir.dispose();
      await withClient(SYSTEM_PG_URL, (a) => a.query(`DROP DATABASE IF EXISTS ${quoteIdent(db)} WITH (FORCE)`));
    }
  });

  it('the packages are read from the install: links into the repository, not installed packages', async () => {
    await mkdir(path.join(root, 'node_modules/pg'), { recursive: true });
    await symlink(tmpdir(), path.join(root, 'node_modules/outside'), 'dir');
    await mkdir(path.join(root, 'node_modules/.pnpm/zod@3/node_modules/zod'), { recursive: true });
    await symlink('.pnpm/zod@3/node_modules/zod', path.join(root, 'node_modules/zod'), 'dir');
    const found = await workspacePackages(await migrationsPackage(root, 'packages/db/migrations'));
    expect(Object.fromEntries(found)).toEqual({ '@acme/db': 'packages/db', '@acme/shared': 'packages/shared' });
  });
});
