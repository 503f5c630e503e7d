import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { getMigrationFilePaths } from 'node-pg-migrate/migration';
import { isConsortError } from '../../src/core/errors.js';
import {
  compareMigrationFileNames,
  MigrationSetCache,
  migrationSetFromEntries,
  orderKeyOf,
  parseMigration,
  readMigrationSet,
  runnerIgnorePattern,
  sha256Normalized,
  type DownStatus,
} from '../../src/migrations/files.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');
const parseDir = path.join(repoRoot, 'test/fixtures/migrations/parse');

describe('readMigrationSet on a fixture directory', () => {
  it('lists every migration file in node-pg-migrate order, skipping dotfiles and directories', async () => {
    const set = await readMigrationSet(parseDir, { relativeTo: repoRoot });
    expect(set.map((m) => m.file)).toEqual([
      'test/fixtures/migrations/parse/0009_small_index.sql',
      'test/fixtures/migrations/parse/1700000000000_create_users.sql',
      'test/fixtures/migrations/parse/1700000001000_seed_roles.sql',
      'test/fixtures/migrations/parse/1700000002000_template_empty_down.sql',
      'test/fixtures/migrations/parse/1700000003000_drop_legacy.sql',
      'test/fixtures/migrations/parse/1700000004000_add_email.js',
      'test/fixtures/migrations/parse/1700000005000_backfill_emails.js',
      'test/fixtures/migrations/parse/1700000006000_index_email.mjs',
      'test/fixtures/migrations/parse/1700000007000_audit.ts',
      'test/fixtures/migrations/parse/20240101120000000_utc_prefix.sql',
    ]);
  });

  it('matches the order node-pg-migrate itself reads the directory in', async () => {
    const ours = (await readMigrationSet(parseDir)).map((m) => path.resolve(m.file));
    expect(ours).toEqual(await getMigrationFilePaths(parseDir));
  });

  it.each<[string, DownStatus, string]>([
    ['1700000000000_create_users', true, 'sql'],
    ['1700000001000_seed_roles', false, 'sql'],
    ['1700000002000_template_empty_down', false, 'sql'],
    ['1700000003000_drop_legacy', 'irreversible', 'sql'],
    ['1700000004000_add_email', true, 'js'],
    ['1700000005000_backfill_emails', 'irreversible', 'js'],
    ['1700000006000_index_email', 'inferred', 'mjs'],
    ['1700000007000_audit', true, 'ts'],
  ])('%s: down %s, kind %s', async (name, hasDown, kind) => {
    const m = (await readMigrationSet(parseDir)).find((f) => f.name === name);
    expect(m).toMatchObject({ name, hasDown, kind });
  });

  it('records where the up and down sections start, as node-pg-migrate slices them', async () => {
    const set = await readMigrationSet(parseDir);
    const users = set.find((m) => m.name === '1700000000000_create_users');
    // The marker pattern's leading `\s*` spans line breaks, so the blank line before a marker starts the section.
    expect(users).toMatchObject({ upSqlLineOffset: 0, downSqlLineOffset: 5 });
    const legacy = set.find((m) => m.name === '1700000003000_drop_legacy');
    expect(legacy).toMatchObject({ upSqlLineOffset: 1 });
    expect(legacy?.downSqlLineOffset).toBeUndefined();
    expect(set.find((m) => m.name === '0009_small_index')).toMatchObject({ upSqlLineOffset: 0, downSqlLineOffset: 3 });
  });

  it('fails with a config error for a missing directory, or returns nothing when that is allowed', async () => {
    const missing = path.join(os.tmpdir(), 'consort-no-such-dir-for-migrations');
    const error = await readMigrationSet(missing).catch((e: unknown) => e);
    expect(isConsortError(error, 'config')).toBe(true);
    await expect(readMigrationSet(missing, { missingOk: true })).resolves.toEqual([]);
  });
});

describe('MigrationSetCache', () => {
  it('reads a directory once while it is unchanged, and again once a file is added or rewritten', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'consort-set-'));
    try {
      const sql = (up: string) => `-- Up Migration\n${up}\n-- Down Migration\nSELECT 1;\n`;
      await writeFile(path.join(dir, '1700000000000_a.sql'), sql('CREATE TABLE a (id int);'));
      const cache = new MigrationSetCache();
      const first = await cache.read(dir, { relativeTo: dir });
      expect(await cache.read(dir, { relativeTo: dir })).toBe(first);
      await writeFile(path.join(dir, '1700000001000_b.sql'), sql('CREATE TABLE b (id int);'));
      const added = await cache.read(dir, { relativeTo: dir });
      expect(added.map((m) => m.name)).toEqual(['1700000000000_a', '1700000001000_b']);
      expect(await cache.read(dir, { relativeTo: dir })).toBe(added);
      // Same size, other content: its times changed (set apart, as the file system's clock is coarse).
      await writeFile(path.join(dir, '1700000001000_b.sql'), sql('CREATE TABLE c (id int);'));
      const later = new Date(Date.now() + 5_000);
      await utimes(path.join(dir, '1700000001000_b.sql'), later, later);
      const rewritten = await cache.read(dir, { relativeTo: dir });
      expect(rewritten).not.toBe(added);
      expect(rewritten[1]!.content).toContain('TABLE c');
      // Another base for the files' paths is another set.
      expect((await cache.read(dir, { relativeTo: path.dirname(dir) }))[0]!.file).toBe(
        `${path.basename(dir)}/1700000000000_a.sql`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reports a missing directory as readMigrationSet does, every time', async () => {
    const cache = new MigrationSetCache();
    const missing = path.join(os.tmpdir(), 'consort-no-such-dir-for-the-cache');
    await expect(cache.read(missing)).rejects.toThrow(/No migrations directory/);
    await expect(cache.read(missing)).rejects.toThrow(/No migrations directory/);
    expect(await cache.read(missing, { missingOk: true })).toEqual([]);
  });
});

describe('sorting agrees with node-pg-migrate', () => {
  const names = [
    // No two names here collate equal: for those (`0009_a.js` and `0009-a.js`) node-pg-migrate keeps
    // readdir order, which no one can reproduce, and the planner reports them as duplicate prefixes.
    '1_a.sql',
    '001_b.sql',
    '2_a.sql',
    '10_a.sql',
    '0009_z.js',
    '0009_a.js',
    '0009_A.js',
    '1700000000000_x.sql',
    '20231114221320000_y.sql',
    '20231114221320001_a.sql',
    '1700000000001_b.ts',
    '99999999999999_big.sql',
    '0009_a10.sql',
    '0009_a9.sql',
    '3_é.sql',
    '3_e.sql',
  ];
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'consort-sort-'));
    for (const n of names) await writeFile(path.join(dir, n), '');
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('orders a tricky directory exactly as getMigrationFilePaths does', async () => {
    const expected = (await getMigrationFilePaths(dir)).map((p) => path.basename(p));
    expect([...names].sort(compareMigrationFileNames)).toEqual(expected);
    expect((await readMigrationSet(dir)).map((m) => path.basename(m.file))).toEqual(expected);
  });
});

describe('migrations.ignorePattern: the files Consort plans are the files node-pg-migrate loads', () => {
  const names = ['.gitkeep', '1_a.js', '2_b.sql', '3_c.js', '4_notes.md'];
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'consort-ignore-'));
    for (const n of names) await writeFile(path.join(dir, n), '');
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it.each([
    [undefined, ['1_a.js', '2_b.sql', '3_c.js', '4_notes.md']],
    ['(?!.*\\.js$).*', ['1_a.js', '3_c.js']],
    ['\\..*|.*\\.md', ['1_a.js', '2_b.sql', '3_c.js']],
  ])('%s', async (pattern, expected) => {
    const ours = (await readMigrationSet(dir, { ignorePattern: pattern })).map((m) => path.basename(m.file));
    expect(ours).toEqual(expected);
    const theirs = await getMigrationFilePaths(dir, { ignorePattern: runnerIgnorePattern(pattern) });
    expect(theirs.map((p) => path.basename(p))).toEqual(ours);
    // The same from a commit's listing (the App, a base side).
    const listed = migrationSetFromEntries(
      names.map((n) => ({ file: `db/${n}`, content: '' })),
      pattern,
    ).map((m) => path.basename(m.file));
    expect(listed).toEqual(ours);
  });
});

describe('orderKeyOf', () => {
  it.each<[string, string | null, number | null]>([
    ['0001_a.sql', '0001', 1],
    ['1700000000000_a.sql', '1700000000000', 1700000000000],
    ['20231114221320000_a.sql', '20231114221320000', Date.UTC(2023, 10, 14, 22, 13, 20, 0)],
    ['20231399000000000_a.sql', '20231399000000000', null],
    ['add_users.sql', null, null],
    ['v2_add.sql', null, null],
  ])('%s', (file, prefix, orderKey) => {
    expect(orderKeyOf(file)).toEqual({ prefix, orderKey });
  });
});

describe('parseMigration (pure, for files fetched through an API)', () => {
  const sql = (content: string): DownStatus => parseMigration({ file: 'm/1_x.sql', content }).hasDown;
  const js = (content: string, ext = 'js'): DownStatus => parseMigration({ file: `m/1_x.${ext}`, content }).hasDown;

  it.each<[string, string, DownStatus]>([
    ['up and down', '-- Up Migration\nCREATE TABLE t ();\n-- Down Migration\nDROP TABLE t;\n', true],
    ['down before up', '-- Down Migration\nDROP TABLE t;\n-- Up Migration\nCREATE TABLE t ();\n', true],
    [
      'markers in any case, dashes allowed',
      '---- up migration\nCREATE TABLE t ();\n--   DOWN   MIGRATION\nDROP TABLE t;\n',
      true,
    ],
    ['no markers at all', 'CREATE TABLE t ();\n', false],
    ['up only', '-- Up Migration\nCREATE TABLE t ();\n', false],
    ['empty down section', '-- Up Migration\nCREATE TABLE t ();\n-- Down Migration\n\n', false],
    [
      'down with comments only',
      '-- Up Migration\nSELECT 1;\n-- Down Migration\n-- nothing\n/* really\nnothing */\n',
      false,
    ],
    ['declared irreversible', '-- consort: irreversible\n-- Up Migration\nDROP TABLE t;\n', 'irreversible'],
    [
      'declared irreversible, loosely spaced',
      '-- Up Migration\nDROP TABLE t;\n  --   Consort:Irreversible\n',
      'irreversible',
    ],
    [
      'the declaration wins over an empty down',
      '-- Up Migration\nDROP TABLE t;\n-- Down Migration\n-- consort: irreversible\n',
      'irreversible',
    ],
  ])('SQL %s', (_title, content, expected) => {
    expect(sql(content)).toBe(expected);
  });

  it.each<[string, string, string, DownStatus]>([
    ['CJS exports', 'exports.up = (pgm) => {};\nexports.down = (pgm) => {};\n', 'js', true],
    ['CJS down = false', 'exports.up = (pgm) => {};\nexports.down = false;\n', 'js', 'irreversible'],
    [
      'module.exports.down = false',
      'module.exports.up = () => {};\nmodule.exports.down = false;',
      'cjs',
      'irreversible',
    ],
    ['CJS without down', 'exports.up = (pgm) => { pgm.createTable("t", {}); };\n', 'js', 'inferred'],
    ['ESM function down', 'export async function up(pgm) {}\nexport async function down(pgm) {}\n', 'mjs', true],
    ['ESM const down = false', 'export const up = () => {};\nexport const down = false;\n', 'mjs', 'irreversible'],
    [
      'TS typed down = false',
      'export const up: MigrationAction = () => {};\nexport const down: MigrationAction | false = false;\n',
      'ts',
      'irreversible',
    ],
    ['ESM without down', 'export const up = (pgm) => { pgm.createIndex("t", "c"); };\n', 'ts', 'inferred'],
    ['export list', 'const up = () => {};\nconst down = () => {};\nexport { up, down };\n', 'mjs', true],
    ['module.exports object with down', 'module.exports = {\n  up(pgm) {},\n  down(pgm) {},\n};\n', 'cjs', true],
    [
      'module.exports object with down: false',
      'module.exports = { up: () => {}, down: false };\n',
      'cjs',
      'irreversible',
    ],
    ['export default object without down', 'export default { up(pgm) { pgm.sql("SELECT 1"); } };\n', 'mjs', 'inferred'],
    [
      'commented-out down does not count',
      'exports.up = () => {};\n// exports.down = () => {};\n/* exports.down = false; */\n',
      'js',
      'inferred',
    ],
    [
      'the word down in SQL text does not count',
      'exports.up = (pgm) => { pgm.sql("-- slow down: false alarm"); };\n',
      'js',
      'inferred',
    ],
  ])('JS %s', (_title, content, ext, expected) => {
    expect(js(content, ext)).toBe(expected);
  });

  it('names a migration by its file name without the extension, as node-pg-migrate records it', () => {
    expect(parseMigration({ file: 'db\\migrations\\1700000000000_add.users.sql', content: '' })).toMatchObject({
      name: '1700000000000_add.users',
      file: 'db/migrations/1700000000000_add.users.sql',
      kind: 'sql',
    });
    expect(parseMigration({ file: '2_notes.MD', content: '' })).toMatchObject({
      name: '2_notes',
      kind: 'other',
      hasDown: false,
    });
  });

  it('hashes content with CRLF normalized, and nothing else', () => {
    expect(sha256Normalized('a\r\nb\r\n')).toBe(sha256Normalized('a\nb\n'));
    expect(sha256Normalized('a\nb\n')).not.toBe(sha256Normalized('a\nb \n'));
    expect(sha256Normalized('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('breaks ties node-pg-migrate leaves to readdir order deterministically', () => {
    const a = migrationSetFromEntries([
      { file: '0009-a.js', content: '' },
      { file: '0009_a.js', content: '' },
    ]);
    const b = migrationSetFromEntries([
      { file: '0009_a.js', content: '' },
      { file: '0009-a.js', content: '' },
    ]);
    expect(a.map((m) => m.file)).toEqual(b.map((m) => m.file));
  });

  it('builds a sorted set from API entries, ignoring dotfiles', () => {
    const set = migrationSetFromEntries([
      { file: 'db/10_c.sql', content: '' },
      { file: 'db/.gitkeep', content: '' },
      { file: 'db/9_b.js', content: 'exports.up = () => {};' },
      { file: 'db/1_a.sql', content: '' },
    ]);
    expect(set.map((m) => m.name)).toEqual(['1_a', '9_b', '10_c']);
  });
});
