import { buildContextPack, type ContextInput } from '../../src/conductor/context-pack.js';
import { FDIR, FEATURE, policy } from './fixtures.js';

const INPUT: ContextInput = {
  feature: FEATURE,
  featureDir: FDIR,
  plan: {
    id: 'turn-0007',
    role: 'driver',
    step: 'green',
    item: { id: 'T1', ac: 'AC1', kind: 'behavior', title: 'stores a phone', status: 'red' },
    attempt: 1,
    note: 'the suite is red',
    failure: {
      purpose: 'red',
      summary: '1 failing',
      tests: [{ id: 'phones::T1', state: 'failed', message: 'expected x' }],
      output: 'FAIL test/phones.test.js',
    },
    branch: 'f001-t1',
    forkAhead: null,
    experiment: null,
    frozen: ['test/phones.test.js'],
    writes: policy().writes.driver,
  },
  instructions: '# Driver\nMake it pass.',
  reads: ['**', '!.consort/**', `${FDIR}/feature-spec.json`],
  files: ['src/customers.js', 'test/phones.test.js', `${FDIR}/state.json`, `${FDIR}/gates.json`],
  contents: {
    [`${FDIR}/feature-spec.json`]: '{"spec":1}',
    [`${FDIR}/db-design.json`]: '{"db":1}',
    'test/phones.test.js': 'test("T1")',
  },
  acceptanceCriteria: [
    { id: 'AC1', given: 'a customer', when: 'a phone is set', then: 'it is stored', layer: 'API' },
    { id: 'AC2', given: 'x', when: 'y', then: 'z', layer: 'API' },
  ],
  schema: {
    tables: [
      {
        name: 'customers',
        columns: [{ name: 'id', type: 'bigint', notNull: true, default: null }],
        constraints: ['customers_pkey: PRIMARY KEY (id)'],
      },
    ],
    enums: [],
  },
  layout: { tests: ['test/**'], migrations: 'migrations', suite: 'npm test' },
};

describe('context packs', () => {
  it('holds only what the role may read', () => {
    const { pack } = buildContextPack(INPUT);
    expect(pack.artifacts.map((a) => a.path)).toEqual([`${FDIR}/feature-spec.json`, 'test/phones.test.js']);
    expect(pack.layout.files).toEqual(['src/customers.js', 'test/phones.test.js']);
    expect(pack.acceptanceCriteria.map((a) => a.id)).toEqual(['AC1']);
    expect(pack.failure?.output).toContain('FAIL');
  });

  it('leaves the acceptance criteria out when the spec is not readable', () => {
    expect(buildContextPack({ ...INPUT, reads: ['src/**'] }).pack.acceptanceCriteria).toEqual([]);
  });

  it('is deterministic: same inputs, same bytes and hash', () => {
    const a = buildContextPack(INPUT);
    const b = buildContextPack({
      ...INPUT,
      files: [...INPUT.files].reverse(),
      contents: Object.fromEntries(Object.entries(INPUT.contents).reverse()),
    });
    expect(b.json).toBe(a.json);
    expect(b.sha256).toBe(a.sha256);
    expect(a.bytes).toBe(Buffer.byteLength(a.json));
    expect(buildContextPack({ ...INPUT, instructions: 'other' }).sha256).not.toBe(a.sha256);
  });

  it('renders the same content as markdown', () => {
    const { markdown } = buildContextPack(INPUT);
    expect(markdown.startsWith(`# driver: green T1 — feature ${FEATURE}`)).toBe(true);
    for (const text of [
      '## Why you are asked again',
      'the suite is red',
      '**T1** (behavior, AC1)',
      'AC1',
      'FAIL test/phones.test.js',
      '**customers**: id bigint not null',
      '`!test/**`',
    ]) {
      expect(markdown).toContain(text);
    }
  });

  it("tells the agent when its branch's migrations did not all apply (past migrations.timeout), and says nothing otherwise", () => {
    const note =
      'The migrations did not all apply to this branch: migrations/1_slow.sql failed: still running after migrations.timeout (2s); its statement was cancelled.';
    const { pack, markdown } = buildContextPack({ ...INPUT, schema: null, database: note });
    expect(pack.database).toBe(note);
    expect(markdown).toContain(`## Your database branch\n\n${note}\n`);
    const plain = buildContextPack(INPUT);
    expect('database' in plain.pack).toBe(false);
    expect(plain.markdown).not.toContain('## Your database branch');
  });
});
