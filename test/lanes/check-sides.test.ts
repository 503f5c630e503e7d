/**
 * The baseline is seeded with base's seed file, not the working tree's: a PR that adds a table
 * and seeds it must not break its own baseline (base's schema has no such table).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ConsortConfigSchema } from '../../src/config/schema.js';
import { commitSide, EMPTY_SIDE } from '../../src/lanes/check/sides.js';

const run = promisify(execFile);
const GIT_ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com', HOME: tmpdir() };
const git = (cwd: string, ...args: string[]) => run('git', args, { cwd, env: GIT_ENV });

describe('commitSide: the seed as base has it', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'consort-sides-'));
    await git(root, 'init', '-q', '-b', 'main');
    await mkdir(path.join(root, 'db/migrations'), { recursive: true });
    await writeFile(path.join(root, 'db/migrations/1700000000000_orders.sql'), '-- Up Migration\nCREATE TABLE orders (id int);\n');
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });
  const config = ConsortConfigSchema.parse({ database: { seed: { file: 'db/seed.sql' } }, migrations: { dir: 'db/migrations' } });

  it('reads the seed file at the base commit, not the edited one in the working tree', async () => {
    await writeFile(path.join(root, 'db/seed.sql'), 'INSERT INTO orders VALUES (1);\n');
    await git(root, 'add', '.');
    await git(root, 'commit', '-qm', 'base');
    const { stdout } = await git(root, 'rev-parse', 'HEAD');
    // The PR adds a table and seeds it.
    await writeFile(path.join(root, 'db/migrations/1700000000001_refunds.sql'), '-- Up Migration\nCREATE TABLE refunds (id int);\n');
    await writeFile(path.join(root, 'db/seed.sql'), 'INSERT INTO orders VALUES (1);\nINSERT INTO refunds VALUES (1);\n');
    const side = await commitSide(root, 'main', stdout.trim(), config);
    expect(side.seed).toBe('INSERT INTO orders VALUES (1);\n');
    expect(side.migrations.map((m) => m.file)).toEqual(['db/migrations/1700000000000_orders.sql']);
  });

  it('is null when base has no seed file yet, and for an empty base', async () => {
    await git(root, 'add', '.');
    await git(root, 'commit', '-qm', 'base without seed');
    const { stdout } = await git(root, 'rev-parse', 'HEAD');
    await writeFile(path.join(root, 'db/seed.sql'), 'INSERT INTO orders VALUES (1);\n');
    expect((await commitSide(root, 'main', stdout.trim(), config)).seed).toBeNull();
    expect(EMPTY_SIDE.seed).toBeNull();
  });
});
