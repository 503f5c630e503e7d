/**
 * A TypeScript migration's loader keeps what it compiled on disk, in a folder every process of the
 * user shares — tsx in `<tmp>/tsx-<uid>` for a week, under a hash of the source, its path and the
 * options; node-pg-migrate 9's jiti in the `node_modules/.cache/jiti` of the folder the migration
 * process started in (Consort's: the pull request's checkout, the TDD work tree), else
 * `<tmp>/jiti`, under a hash of the path — and reads an entry back without checking the code in
 * it. Whoever knows a migration's text and where it will be loaded from can compile it there once
 * and put code of its own under that key. A TDD agent knows both for RED's proof: the tree is made
 * during the turn at a path the turn sees (under bubblewrap an empty folder covers it, its name in
 * plain sight), and the migrations are the commit's. Until 2026-12-05 the migration process read
 * those caches: the proof applied the planted code, not the committed migration (here a table of
 * the planter's naming instead of the migration's). The migration process now compiles in memory
 * only.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { quoteIdent, withClient, withDatabase } from '../../src/db/sql.js';
import type { MigrationEngine } from '../../src/migrations/engine.js';
import { applyMigrations } from '../../src/migrations/runner.js';
import { execFileAsync } from '../helpers/exec-file.js';
import { tsxEngine7 } from '../helpers/engines.js';
import { SYSTEM_PG_URL } from '../helpers/servers.js';

const requireHere = createRequire(import.meta.url);
const engine7 = tsxEngine7;

const uid = process.geteuid?.() ?? os.userInfo().username;

/** The planters: each loader set up as the migration process sets it up, the migration loaded once. */
const TSX = `const api = require(${JSON.stringify(requireHere.resolve('tsx/cjs/api'))});
api.register();
require(process.argv[1]);
`;
/** node-pg-migrate 9's own: one jiti made from the folder the process started in, `import()` of each file. */
const JITI = `const { createJiti } = require(${JSON.stringify(requireHere.resolve('jiti'))});
createJiti(process.cwd()).import(process.argv[1]).then(() => undefined);
`;

/** Where jiti keeps its cache for a process started in `cwd`: that folder's node_modules/.cache/jiti, else the temp folder's. */
function jitiCache(cwd: string): string {
  return existsSync(path.join(cwd, 'node_modules'))
    ? path.join(cwd, 'node_modules', '.cache', 'jiti')
    : path.join(os.tmpdir(), 'jiti');
}

const loaders = [
  {
    name: 'tsx (node-pg-migrate 7)',
    engine: engine7 as MigrationEngine | undefined,
    planter: TSX,
    cache: () => path.join(os.tmpdir(), `tsx-${uid}`),
  },
  {
    name: "jiti (node-pg-migrate 9, Consort's own)",
    engine: undefined,
    planter: JITI,
    cache: () => jitiCache(process.cwd()),
  },
];

let work: string;
beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'consort-compile-cache-'));
});
afterAll(async () => rm(work, { recursive: true, force: true }));

describe("a TypeScript loader's disk cache", () => {
  it.each(loaders)(
    "does not decide what a tree's migration runs: $name",
    async ({ engine, planter, cache }) => {
      const honest = `honest_${randomBytes(4).toString('hex')}`;
      const tree = path.join(work, honest);
      const file = path.join(tree, 'migrations', '1700000000000_make.ts');
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(path.join(tree, 'tsconfig.json'), '{ "compilerOptions": { "strict": true } }\n');
      await writeFile(
        file,
        `export const up = (pgm: any) => { pgm.createTable('${honest}', { id: 'id' }); };\nexport const down = false;\n`,
      );

      // Compiled once at the path the migration will be loaded from, with the same tsx and tsconfig.
      await execFileAsync(process.execPath, ['-e', planter, file], {
        cwd: process.cwd(),
        env: { PATH: process.env.PATH ?? '', TMPDIR: os.tmpdir(), TSX_TSCONFIG_PATH: path.join(tree, 'tsconfig.json') },
      });
      // The entry holding it, rewritten: another table.
      const planted: string[] = [];
      for (const name of await readdir(cache())) {
        const entry = path.join(cache(), name);
        const text = await readFile(entry, 'utf8').catch(() => '');
        if (!text.includes(honest)) continue;
        await writeFile(entry, text.replaceAll(honest, `planted_${honest}`));
        planted.push(entry);
      }
      expect(planted.length).toBeGreaterThan(0);

      const db = `tsxcache_${randomBytes(6).toString('hex')}`;
      await withClient(SYSTEM_PG_URL, (a) => a.query(`CREATE DATABASE ${quoteIdent(db)} TEMPLATE template0`));
      try {
        const url = withDatabase(SYSTEM_PG_URL, db);
        const r = await applyMigrations({
          databaseUrl: url,
          dir: path.dirname(file),
          relativeTo: tree,
          direction: 'up',
          migrationsTable: 'pgmigrations',
          ...(engine ? { engine } : {}),
        });
        expect(r.ok).toBe(true);
        const tables = await withClient(url, async (c) =>
          (
            await c.query<{ t: string }>(
              "SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'pgmigrations'",
            )
          ).rows.map((x) => x.t),
        );
        expect(tables).toEqual([honest]);
      } finally {
        await withClient(SYSTEM_PG_URL, (a) => a.query(`DROP DATABASE IF EXISTS ${quoteIdent(db)} WITH (FORCE)`));
        await Promise.all(planted.map((p) => rm(p, { force: true })));
      }
    },
    60_000,
  );
});
