import { crossCheck, parseArtifact, type FeatureSpec, type TestList } from '../../src/conductor/artifacts.js';

const SPEC: FeatureSpec = {
  version: 1,
  title: 'Phones',
  summary: 'Phone numbers.',
  userFacing: false,
  stories: [
    { id: 'S1', title: 'Phones', acceptanceCriteria: [{ id: 'AC1', given: 'a', when: 'b', then: 'c', layer: 'API' }] },
  ],
};
const LIST: TestList = {
  version: 1,
  items: [{ id: 'T1', ac: 'AC1', kind: 'behavior', title: 'stores', status: 'pending' }],
};

describe('artifacts', () => {
  it('accepts valid artifacts', () => {
    expect(parseArtifact('feature-spec.json', JSON.stringify(SPEC))).toEqual({ ok: true, value: SPEC });
    expect(parseArtifact('test-list.json', JSON.stringify(LIST)).ok).toBe(true);
    expect(
      parseArtifact('reviews/T1.json', JSON.stringify({ version: 1, item: 'T1', verdict: 'approve', notes: '' })).ok,
    ).toBe(true);
    expect(parseArtifact('feature-request.md', 'We need phones.')).toEqual({ ok: true, value: 'We need phones.' });
  });

  it.each([
    ['missing', 'feature-spec.json', null, /feature-spec.json is missing/],
    ['not JSON', 'feature-spec.json', '{', /not valid JSON/],
    ['an unknown version', 'feature-spec.json', JSON.stringify({ ...SPEC, version: 2 }), /version/],
    [
      'a bad criterion id',
      'feature-spec.json',
      JSON.stringify({
        ...SPEC,
        stories: [
          { id: 'S1', title: 't', acceptanceCriteria: [{ id: 'A1', given: 'a', when: 'b', then: 'c', layer: 'API' }] },
        ],
      }),
      /must look like AC1/,
    ],
    ['an empty test list', 'test-list.json', JSON.stringify({ version: 1, items: [] }), /at least one item/],
    [
      'an unknown status',
      'test-list.json',
      JSON.stringify({ version: 1, items: [{ ...LIST.items[0], status: 'done' }] }),
      /status/,
    ],
    ['an empty request', 'feature-request.md', '  \n', /is empty/],
    ['an unknown file', 'notes.json', '{}', /not a known artifact/],
  ])('refuses %s', (_label, file, content, problem) => {
    const r = parseArtifact(file, content);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems.join('\n')).toMatch(problem);
  });

  it('checks that items name criteria of the spec and ids do not repeat', () => {
    expect(crossCheck(SPEC, LIST)).toEqual([]);
    expect(crossCheck(SPEC, { version: 1, items: [...LIST.items, { ...LIST.items[0]!, ac: 'AC9' }] })).toEqual([
      'test-list.json: item ids repeat: T1',
      'test-list.json: T1 names AC9, which is not an acceptance criterion of the spec',
    ]);
  });
});
