import { migrationSetFromEntries, type MigrationFile } from '../../src/migrations/files.js';
import { formatPrefix, planMigrations, type MigrationPlan, type Problem } from '../../src/migrations/plan.js';

/** A migration set from `name` or `name=content`; content defaults to something unique per name. */
function set(...specs: string[]): MigrationFile[] {
  return migrationSetFromEntries(
    specs.map((spec) => {
      const [file, content] = spec.includes('=')
        ? (spec.split('=') as [string, string])
        : [spec, `-- Up Migration\nSELECT '${spec}';\n`];
      return { file: `db/migrations/${file}`, content };
    }),
  );
}

function names(plan: MigrationPlan): string[] {
  return plan.newMigrations.map((m) => m.name);
}

describe('planMigrations: accepted plans', () => {
  const cases: { title: string; base: string[]; head: string[]; newNames: string[]; unchanged: number }[] = [
    { title: 'no migrations anywhere', base: [], head: [], newNames: [], unchanged: 0 },
    {
      title: 'nothing new',
      base: ['0001_a.sql', '0002_b.sql'],
      head: ['0001_a.sql', '0002_b.sql'],
      newNames: [],
      unchanged: 2,
    },
    {
      title: 'first migrations of a project',
      base: [],
      head: ['0001_a.sql', '0002_b.js'],
      newNames: ['0001_a', '0002_b'],
      unchanged: 0,
    },
    {
      title: 'one new after base',
      base: ['0001_a.sql'],
      head: ['0001_a.sql', '0002_b.sql'],
      newNames: ['0002_b'],
      unchanged: 1,
    },
    {
      title: 'several new, returned in node-pg-migrate order',
      base: ['0001_a.sql'],
      head: ['0001_a.sql', '0010_c.sql', '0002_b.sql'],
      newNames: ['0002_b', '0010_c'],
      unchanged: 1,
    },
    {
      title: 'timestamps',
      base: ['1700000000000_a.sql'],
      head: ['1700000000000_a.sql', '1700000000001_b.sql'],
      newNames: ['1700000000001_b'],
      unchanged: 1,
    },
    {
      title: 'a 17-digit UTC prefix after millisecond timestamps',
      base: ['1700000000000_a.sql'],
      head: ['1700000000000_a.sql', '20240101000000000_b.sql'],
      newNames: ['20240101000000000_b'],
      unchanged: 1,
    },
    {
      title: 'numbers compare by value, not text',
      base: ['9_a.sql'],
      head: ['9_a.sql', '10_b.sql'],
      newNames: ['10_b'],
      unchanged: 1,
    },
    {
      title: 'a later number with a shorter width',
      base: ['0009_a.sql'],
      head: ['0009_a.sql', '10_b.sql'],
      newNames: ['10_b'],
      unchanged: 1,
    },
    {
      title: 'mixed languages',
      base: ['1_a.sql', '2_b.js'],
      head: ['1_a.sql', '2_b.js', '3_c.ts', '4_d.mjs', '5_e.cjs'],
      newNames: ['3_c', '4_d', '5_e'],
      unchanged: 2,
    },
    {
      title: 'line endings differ only',
      base: ['1_a.sql=SELECT 1;\r\nSELECT 2;\r\n'],
      head: ['1_a.sql=SELECT 1;\nSELECT 2;\n'],
      newNames: [],
      unchanged: 1,
    },
    {
      title: "a base file without prefix is not the PR's problem",
      base: ['README.md', '1_a.sql'],
      head: ['README.md', '1_a.sql', '2_b.sql'],
      newNames: ['2_b'],
      unchanged: 2,
    },
  ];
  it.each(cases)('$title', ({ base, head, newNames, unchanged }) => {
    const plan = planMigrations(set(...base), set(...head));
    expect(plan).toMatchObject({ ok: true, unchanged });
    expect(names(plan)).toEqual(newNames);
  });
});

describe('planMigrations: problems', () => {
  const cases: { title: string; base: string[]; head: string[]; problems: Problem[] }[] = [
    {
      title: 'a new index migration sorting before the newest on base',
      base: ['0001_a.sql', '0005_e.sql'],
      head: ['0001_a.sql', '0005_e.sql', '0003_add_users.sql'],
      problems: [
        {
          kind: 'order-conflict',
          file: 'db/migrations/0003_add_users.sql',
          name: '0003_add_users',
          newestOnBase: '0005_e',
          suggestedName: '0006_add_users.sql',
          suggestedFile: 'db/migrations/0006_add_users.sql',
        },
      ],
    },
    {
      title: 'a stale timestamp from a long-lived branch',
      base: ['1700000000000_a.sql', '1700000500000_b.sql'],
      head: ['1700000000000_a.sql', '1700000500000_b.sql', '1700000100000_c.js'],
      problems: [
        {
          kind: 'order-conflict',
          file: 'db/migrations/1700000100000_c.js',
          name: '1700000100000_c',
          newestOnBase: '1700000500000_b',
          suggestedName: '1700000500001_c.js',
          suggestedFile: 'db/migrations/1700000500001_c.js',
        },
      ],
    },
    {
      title: 'a 17-digit UTC prefix is renamed to a UTC prefix one millisecond later',
      base: ['20240101120000000_a.sql'],
      head: ['20240101120000000_a.sql', '20231231235959999_b.sql'],
      problems: [
        {
          kind: 'order-conflict',
          file: 'db/migrations/20231231235959999_b.sql',
          name: '20231231235959999_b',
          newestOnBase: '20240101120000000_a',
          suggestedName: '20240101120000001_b.sql',
          suggestedFile: 'db/migrations/20240101120000001_b.sql',
        },
      ],
    },
    {
      title: 'two conflicting migrations keep their relative order and skip a value already used on head',
      base: ['0001_a.sql', '0005_e.sql'],
      head: ['0001_a.sql', '0005_e.sql', '0002_x.sql', '0003_y.sql', '0006_z.sql'],
      problems: [
        {
          kind: 'order-conflict',
          file: 'db/migrations/0002_x.sql',
          name: '0002_x',
          newestOnBase: '0005_e',
          suggestedName: '0007_x.sql',
          suggestedFile: 'db/migrations/0007_x.sql',
        },
        {
          kind: 'order-conflict',
          file: 'db/migrations/0003_y.sql',
          name: '0003_y',
          newestOnBase: '0005_e',
          suggestedName: '0008_y.sql',
          suggestedFile: 'db/migrations/0008_y.sql',
        },
      ],
    },
    {
      title: 'a new migration sharing the newest base prefix but sorting before it',
      base: ['0005_e.sql'],
      head: ['0005_e.sql', '0005_a_first.sql'],
      problems: [
        {
          kind: 'order-conflict',
          file: 'db/migrations/0005_a_first.sql',
          name: '0005_a_first',
          newestOnBase: '0005_e',
          suggestedName: '0006_a_first.sql',
          suggestedFile: 'db/migrations/0006_a_first.sql',
        },
      ],
    },
    {
      title: 'two new migrations node-pg-migrate cannot tell apart: the order would be the directory listing',
      base: ['0001_a.sql'],
      head: ['0001_a.sql', '0002_b.sql', '0002-b.sql'],
      problems: [
        {
          kind: 'duplicate-prefix',
          file: 'db/migrations/0002_b.sql',
          name: '0002_b',
          conflictsWith: '0002-b',
          suggestedName: '0003_b.sql',
          suggestedFile: 'db/migrations/0003_b.sql',
        },
      ],
    },
    {
      title: 'an applied migration edited on head',
      base: ['0001_a.sql=CREATE TABLE a (id int);'],
      head: ['0001_a.sql=CREATE TABLE a (id bigint);'],
      problems: [{ kind: 'history-rewritten', file: 'db/migrations/0001_a.sql', name: '0001_a', change: 'edited' }],
    },
    {
      title: 'an applied migration deleted on head',
      base: ['0001_a.sql', '0002_b.sql'],
      head: ['0001_a.sql'],
      problems: [{ kind: 'history-rewritten', file: 'db/migrations/0002_b.sql', name: '0002_b', change: 'deleted' }],
    },
    {
      title: 'changing the language of an applied migration is an edit',
      base: ['0001_a.sql'],
      head: ['0001_a.js=exports.up = () => {};'],
      problems: [{ kind: 'history-rewritten', file: 'db/migrations/0001_a.js', name: '0001_a', change: 'edited' }],
    },
    {
      title: 'renaming an applied migration deletes it and adds an out-of-order one',
      base: ['0001_a.sql=A', '0002_b.sql=B'],
      head: ['0001_renamed.sql=A', '0002_b.sql=B'],
      problems: [
        { kind: 'history-rewritten', file: 'db/migrations/0001_a.sql', name: '0001_a', change: 'deleted' },
        {
          kind: 'order-conflict',
          file: 'db/migrations/0001_renamed.sql',
          name: '0001_renamed',
          newestOnBase: '0002_b',
          suggestedName: '0003_renamed.sql',
          suggestedFile: 'db/migrations/0003_renamed.sql',
        },
      ],
    },
    {
      title: 'a new file without a numeric prefix',
      base: ['0001_a.sql'],
      head: ['0001_a.sql', 'add_users.sql'],
      problems: [
        {
          kind: 'invalid-name',
          file: 'db/migrations/add_users.sql',
          name: 'add_users',
          reason:
            "its name does not start with the number node-pg-migrate orders migrations by (if it is not a migration, set migrations.ignorePattern: '\\..*|add_users\\.sql' in the Consort configuration, or to the --ignore-pattern your deploy passes)",
        },
      ],
    },
    {
      title: 'a new file node-pg-migrate cannot load',
      base: [],
      head: ['0001_notes.md'],
      problems: [
        {
          kind: 'invalid-name',
          file: 'db/migrations/0001_notes.md',
          name: '0001_notes',
          reason: expect.stringContaining('not a migration file') as unknown as string,
        },
      ],
    },
    {
      title: 'a 17-digit prefix that is not a date',
      base: [],
      head: ['20241399000000000_a.sql'],
      problems: [
        {
          kind: 'invalid-name',
          file: 'db/migrations/20241399000000000_a.sql',
          name: '20241399000000000_a',
          reason: expect.stringContaining('not a valid UTC timestamp') as unknown as string,
        },
      ],
    },
    {
      title: 'a prefix too large to order exactly',
      base: [],
      head: ['123456789012345678901_a.sql'],
      problems: [
        {
          kind: 'invalid-name',
          file: 'db/migrations/123456789012345678901_a.sql',
          name: '123456789012345678901_a',
          reason: expect.stringContaining('too large') as unknown as string,
        },
      ],
    },
    {
      title: 'every problem is reported at once',
      base: ['0001_a.sql=A', '0004_d.sql=D'],
      head: ['0001_a.sql=changed', '0002_b.sql', 'x.sql'],
      problems: [
        { kind: 'history-rewritten', file: 'db/migrations/0001_a.sql', name: '0001_a', change: 'edited' },
        { kind: 'history-rewritten', file: 'db/migrations/0004_d.sql', name: '0004_d', change: 'deleted' },
        {
          kind: 'order-conflict',
          file: 'db/migrations/0002_b.sql',
          name: '0002_b',
          newestOnBase: '0004_d',
          suggestedName: '0005_b.sql',
          suggestedFile: 'db/migrations/0005_b.sql',
        },
        {
          kind: 'invalid-name',
          file: 'db/migrations/x.sql',
          name: 'x',
          reason: expect.any(String) as unknown as string,
        },
      ],
    },
  ];
  it.each(cases)('$title', ({ base, head, problems }) => {
    const plan = planMigrations(set(...base), set(...head));
    expect(plan.ok).toBe(false);
    if (plan.ok) return;
    const order = (p: Problem): number =>
      ['history-rewritten', 'order-conflict', 'duplicate-prefix', 'invalid-name'].indexOf(p.kind);
    expect([...plan.problems].sort((a, b) => order(a) - order(b))).toEqual(problems);
  });

  it('files that are no migrations (a README, a helper module) get one ignorePattern that skips them all, from the configured one', () => {
    const head = set('0001_a.sql', 'README.md', 'helpers.js', '0002_b.js');
    const reasons = (plan: ReturnType<typeof planMigrations>) =>
      plan.ok ? [] : plan.problems.map((p) => ('reason' in p ? p.reason : ''));
    expect(reasons(planMigrations(set('0001_a.sql'), head))).toHaveLength(2);
    for (const reason of reasons(planMigrations(set('0001_a.sql'), head)))
      expect(reason).toContain(
        "set migrations.ignorePattern: '\\..*|helpers\\.js|README\\.md' in the Consort configuration",
      );
    // A configured pattern (here: only .js and .sql files are migrations, as some deploys pass) is kept.
    for (const reason of reasons(planMigrations(set('0001_a.sql'), head, { ignorePattern: '.*\\.d\\.ts' })))
      expect(reason).toContain("set migrations.ignorePattern: '.*\\.d\\.ts|helpers\\.js|README\\.md'");
    // Applied, it is a valid configuration that skips both, so the plan passes.
    const ignorePattern = '\\..*|helpers\\.js|README\\.md';
    const entries = ['0001_a.sql', 'README.md', 'helpers.js', '0002_b.js'].map((f) => ({
      file: `db/migrations/${f}`,
      content: `-- Up Migration\nSELECT '${f}';\n`,
    }));
    expect(
      planMigrations(set('0001_a.sql'), migrationSetFromEntries(entries, ignorePattern), { ignorePattern }),
    ).toMatchObject({ ok: true });
  });

  it('still lists the new migrations when the plan fails', () => {
    const plan = planMigrations(set('0005_e.sql'), set('0005_e.sql', '0003_c.sql', '0006_f.sql'));
    expect(plan.ok).toBe(false);
    expect(names(plan)).toEqual(['0003_c', '0006_f']);
  });

  it('a suggested rename, applied, makes the plan pass', () => {
    const base = set('0001_a.sql', '0005_e.sql');
    const first = planMigrations(base, set('0001_a.sql', '0005_e.sql', '0002_x.sql', '0006_z.sql'));
    if (first.ok) throw new Error('expected a conflict');
    const renamed = first.problems.map((p) => ('suggestedName' in p ? p.suggestedName : ''));
    expect(planMigrations(base, set('0001_a.sql', '0005_e.sql', '0006_z.sql', ...renamed))).toMatchObject({ ok: true });
  });
});

describe('planMigrations: duplicate prefixes node-pg-migrate orders by name are warnings', () => {
  const cases: { title: string; base: string[]; head: string[]; warnings: Problem[] }[] = [
    {
      title: 'two new migrations sharing a prefix: the later one is named',
      base: ['0001_a.sql'],
      head: ['0001_a.sql', '0002_b.sql', '0002_c.sql'],
      warnings: [
        {
          kind: 'duplicate-prefix',
          file: 'db/migrations/0002_c.sql',
          name: '0002_c',
          conflictsWith: '0002_b',
          suggestedName: '0003_c.sql',
          suggestedFile: 'db/migrations/0003_c.sql',
        },
      ],
    },
    {
      title: 'different spellings of the same number',
      base: [],
      head: ['1_a.sql', '001_b.sql'],
      warnings: [
        {
          kind: 'duplicate-prefix',
          file: 'db/migrations/001_b.sql',
          name: '001_b',
          conflictsWith: '1_a',
          suggestedName: '002_b.sql',
          suggestedFile: 'db/migrations/002_b.sql',
        },
      ],
    },
    {
      title: 'sharing the newest base prefix and sorting after it',
      base: ['0005_e.sql'],
      head: ['0005_e.sql', '0005_f.sql'],
      warnings: [
        {
          kind: 'duplicate-prefix',
          file: 'db/migrations/0005_f.sql',
          name: '0005_f',
          conflictsWith: '0005_e',
          suggestedName: '0006_f.sql',
          suggestedFile: 'db/migrations/0006_f.sql',
        },
      ],
    },
  ];
  it.each(cases)('$title', ({ base, head, warnings }) => {
    const plan = planMigrations(set(...base), set(...head));
    expect(plan).toMatchObject({ ok: true, warnings });
  });

  it('with --no-check-order, sorting before the newest on base stays a warning too', () => {
    const plan = planMigrations(set('0005_e.sql'), set('0005_e.sql', '0005_a.sql'), { checkOrder: false });
    expect(plan).toMatchObject({ ok: true, warnings: [{ kind: 'order-conflict', name: '0005_a' }] });
  });
});

describe('formatPrefix', () => {
  it.each([
    [6, '0005', '0006'],
    [10000, '0005', '10000'],
    [12, '9', '12'],
    [1700000000001, '1700000000000', '1700000000001'],
    [Date.UTC(2024, 0, 1, 12, 0, 0, 1), '20240101120000000', '20240101120000001'],
  ])('%d like %s → %s', (value, like, expected) => {
    expect(formatPrefix(value, like)).toBe(expected);
  });
});
