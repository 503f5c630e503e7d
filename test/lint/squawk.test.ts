import { createRequire } from 'node:module';
import { isConsortError } from '../../src/core/errors.js';
import { lintMigrations, resolveSquawkBinary, type LintFinding } from '../../src/lint/squawk.js';

const installedVersion = (createRequire(import.meta.url)('squawk-cli/package.json') as { version: string }).version;

/** Setting both timeouts first keeps the lock/statement-timeout rules out of focused assertions. */
const TIMEOUTS = "SET lock_timeout = '1s';\nSET statement_timeout = '5s';\n";

const brief = (f: LintFinding): string => `${f.file}:${f.line}:${f.column ?? '-'} ${f.rule}`;
const rules = (findings: LintFinding[]): string[] => findings.map((f) => f.rule);

async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

describe('lintMigrations (real squawk binary)', () => {
  it('resolves the platform binary from node_modules', async () => {
    expect(await resolveSquawkBinary()).toMatch(/node_modules[\\/]@squawk-cli[\\/][^\\/]+[\\/]bin[\\/]squawk(\.exe)?$/);
  });

  it('reports nothing for a clean migration, with the installed squawk version', async () => {
    const sql = `CREATE TABLE IF NOT EXISTS accounts (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  email text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
`;
    const result = await lintMigrations([{ file: 'migrations/001_accounts.sql', sql }], {});
    expect(result).toEqual({ findings: [], squawkVersion: installedVersion });
  });

  it('returns no findings and still the version when given no inputs', async () => {
    expect(await lintMigrations([], {})).toEqual({ findings: [], squawkVersion: installedVersion });
  });

  it('flags adding a required field, located in the file', async () => {
    const sql = `${TIMEOUTS}ALTER TABLE t ADD COLUMN c int NOT NULL;\n`;
    const { findings } = await lintMigrations([{ file: 'migrations/002_c.sql', sql }], {});
    expect(findings).toContainEqual({
      rule: 'adding-required-field',
      level: 'warning',
      message: expect.stringContaining('NOT NULL') as string,
      help: 'Make the field nullable or add a non-VOLATILE DEFAULT',
      file: 'migrations/002_c.sql',
      line: 3,
      column: 15,
      sqlSpan: { start: sql.indexOf('ADD COLUMN'), end: sql.indexOf(';\n', sql.indexOf('ADD COLUMN')) },
    });
  });

  it('gives the span squawk reports as offsets into the SQL, across CRLF and multi-byte text', async () => {
    const sql = `${TIMEOUTS.replace(/\n/g, '\r\n')}CREATE TABLE "é" ("ü" int,\r\n  b\tsmallint);\r\n`;
    const { findings } = await lintMigrations([{ file: 'migrations/003_d.sql', sql }], {});
    const spanned = (rule: string) =>
      findings.filter((f) => f.rule === rule).map((f) => sql.slice(f.sqlSpan!.start, f.sqlSpan!.end));
    expect(spanned('prefer-bigint-over-int')).toEqual(['int']);
    expect(spanned('prefer-bigint-over-smallint')).toEqual(['smallint']);
  });

  it('flags CREATE INDEX without CONCURRENTLY and accepts it with CONCURRENTLY', async () => {
    const plain = `${TIMEOUTS}CREATE INDEX IF NOT EXISTS t_c_idx ON t (c);\n`;
    const concurrent = `${TIMEOUTS}CREATE INDEX CONCURRENTLY IF NOT EXISTS t_c_idx ON t (c);\n`;
    const { findings } = await lintMigrations(
      [
        { file: 'plain.sql', sql: plain },
        { file: 'concurrent.sql', sql: concurrent },
      ],
      {},
    );
    expect(findings.map(brief)).toEqual(['plain.sql:3:1 require-concurrent-index-creation']);
  });

  const multi = [
    '-- a comment line',
    '',
    'CREATE TABLE IF NOT EXISTS t (id bigint PRIMARY KEY);',
    "SET lock_timeout = '1s'; SET statement_timeout = '5s';",
    '',
    "COMMENT ON TABLE t IS 'héllo wörld'; CREATE INDEX IF NOT EXISTS i1 ON t (id);",
    '  CREATE INDEX',
    '    IF NOT EXISTS i2 ON t (id);',
    '',
  ].join('\n');

  it('reports 1-based lines and character columns in a multi-statement file', async () => {
    const { findings } = await lintMigrations([{ file: 'multi.sql', sql: multi }], {});
    // CREATE starts at character 38 but byte 40 (two 2-byte characters precede it); squawk says 39, 0-based.
    expect(findings.map(brief)).toEqual([
      'multi.sql:6:38 require-concurrent-index-creation',
      'multi.sql:7:3 require-concurrent-index-creation',
    ]);
  });

  it('shifts lines by lineOffset and keeps columns', async () => {
    const { findings } = await lintMigrations([{ file: 'multi.sql', sql: multi, lineOffset: 10 }], {});
    expect(findings.map(brief)).toEqual([
      'multi.sql:16:38 require-concurrent-index-creation',
      'multi.sql:17:3 require-concurrent-index-creation',
    ]);
  });

  it('counts CRLF and bare CR line endings as editors do (normalized before squawk sees them)', async () => {
    const body = [
      "SET lock_timeout = '1s';",
      "SET statement_timeout = '5s';",
      'CREATE INDEX IF NOT EXISTS i ON t (c);',
    ];
    const { findings } = await lintMigrations(
      [
        { file: 'crlf.sql', sql: body.join('\r\n') },
        { file: 'cr.sql', sql: body.join('\r'), lineOffset: 2 },
      ],
      {},
    );
    expect(findings.map(brief)).toEqual([
      'crlf.sql:3:1 require-concurrent-index-creation',
      'cr.sql:5:1 require-concurrent-index-creation',
    ]);
  });

  it('honours -- squawk-ignore for the next statement and -- squawk-ignore-file for the file', async () => {
    const index = (name: string): string => `CREATE INDEX IF NOT EXISTS ${name} ON t (c);\n`;
    const { findings } = await lintMigrations(
      [
        {
          file: 'ignore.sql',
          sql: `${TIMEOUTS}-- squawk-ignore require-concurrent-index-creation\n${index('a')}${index('b')}`,
        },
        {
          file: 'ignore-file.sql',
          sql: `-- squawk-ignore-file\n${index('c')}ALTER TABLE t ADD COLUMN d int NOT NULL;\n`,
        },
      ],
      {},
    );
    expect(findings.map(brief)).toEqual(['ignore.sql:5:1 require-concurrent-index-creation']);
  });

  it('leaves out excluded rules and adds included opt-in rules', async () => {
    const sql = 'CREATE INDEX i ON t (c);\nCREATE TABLE IF NOT EXISTS u (id bigint PRIMARY KEY);\n';
    const all = await lintMigrations([{ file: 'x.sql', sql }], {});
    expect(new Set(rules(all.findings))).toEqual(
      new Set([
        'prefer-robust-stmts',
        'require-concurrent-index-creation',
        'require-lock-timeout',
        'require-statement-timeout',
      ]),
    );
    const some = await lintMigrations([{ file: 'x.sql', sql }], {
      exclude: ['require-lock-timeout', 'require-statement-timeout', 'prefer-robust-stmts'],
      include: ['require-table-schema'],
    });
    expect(some.findings.map(brief)).toEqual([
      'x.sql:1:1 require-concurrent-index-creation',
      'x.sql:2:28 require-table-schema',
    ]);
  });

  it("says what prefer-robust-stmts' fix does on a named index, where squawk's help says to name it", async () => {
    const sql = `${TIMEOUTS}CREATE INDEX CONCURRENTLY "members_email_idx" ON "members" ("email");\n`;
    const { findings } = await lintMigrations([{ file: 'i.sql', sql }], {});
    expect(findings.filter((f) => f.rule === 'prefer-robust-stmts').map((f) => f.help)).toEqual([
      "Add `IF NOT EXISTS` to the `CREATE INDEX` (node-pg-migrate's createIndex: `ifNotExists: true`).",
    ]);
  });

  it('passes the Postgres version and transaction assumption through', async () => {
    const sql = `${TIMEOUTS}ALTER TABLE t ADD COLUMN c bigint DEFAULT 1;\n`;
    const pg10 = await lintMigrations([{ file: 'd.sql', sql }], { pgVersion: '10' });
    const pg16 = await lintMigrations([{ file: 'd.sql', sql }], { pgVersion: '16' });
    expect(rules(pg10.findings)).toContain('adding-field-with-default');
    expect(rules(pg16.findings)).not.toContain('adding-field-with-default');
    expect(rules(pg16.findings)).toContain('prefer-robust-stmts');
    const inTx = await lintMigrations([{ file: 'd.sql', sql }], { pgVersion: '16', assumeInTransaction: true });
    expect(rules(inTx.findings)).not.toContain('prefer-robust-stmts');
  });

  it('reports unparsable SQL as syntax-error findings instead of throwing', async () => {
    const { findings } = await lintMigrations(
      [{ file: 'bad.sql', sql: 'SELECT 1;\nCREATE TABLE x (;\n', lineOffset: 4 }],
      {},
    );
    expect(findings.length).toBeGreaterThan(0);
    expect(findings.every((f) => f.rule === 'syntax-error' && f.level === 'error')).toBe(true);
    expect(findings[0]).toMatchObject({ file: 'bad.sql', line: 6 });
  });

  it('maps findings back to inputs whose names collide or contain glob characters', async () => {
    const sql = 'CREATE INDEX CONCURRENTLY IF NOT EXISTS i ON t (c);\nALTER TABLE t ADD COLUMN c int NOT NULL;\n';
    const files = ['a/001 [init].sql', 'b/001 [init].sql', 'migrations/1700000000000_add-c.js', '*.sql'];
    const { findings } = await lintMigrations(
      files.map((file) => ({ file, sql })),
      {
        exclude: ['require-lock-timeout', 'require-statement-timeout', 'prefer-robust-stmts', 'prefer-bigint-over-int'],
      },
    );
    expect(findings.map(brief)).toEqual(files.map((file) => `${file}:2:15 adding-required-field`));
  });

  it('rejects an unknown rule name as a config error', async () => {
    const e = await caught(lintMigrations([{ file: 'a.sql', sql: 'SELECT 1;' }], { exclude: ['no-such-rule'] }));
    expect(isConsortError(e, 'config')).toBe(true);
    expect((e as Error).message).toContain('no-such-rule');
  });

  it('rejects a negative lineOffset as invalid input', async () => {
    const e = await caught(lintMigrations([{ file: 'a.sql', sql: 'SELECT 1;', lineOffset: -1 }], {}));
    expect(isConsortError(e, 'invalid-input')).toBe(true);
  });

  it('turns a squawk run that exceeds its timeout into an internal error with a hint', async () => {
    const sql = 'ALTER TABLE t ADD COLUMN c int NOT NULL;\n'.repeat(5_000);
    const e = await caught(lintMigrations([{ file: 'big.sql', sql }], { timeoutMs: 1 }));
    expect(isConsortError(e, 'internal')).toBe(true);
    expect((e as Error).message).toContain('timed out');
  });
});
