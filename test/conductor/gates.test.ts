import {
  approverProblem,
  gatedFiles,
  gatedText,
  gateHash,
  isApproved,
  normalizeText,
} from '../../src/conductor/gates.js';

describe('gate hashing', () => {
  it('normalizes line endings, trailing whitespace and runs of blank lines', () => {
    expect(normalizeText('a  \r\nb\t\r\n\r\n\r\n\r\nc\n\n\n')).toBe('a\nb\n\nc\n');
    expect(normalizeText('\n\n  \n')).toBe('');
  });

  it('does not count whitespace, CRLF or re-indented JSON as an edit', () => {
    const a = gateHash([
      { file: 'feature-request.md', content: 'Phones.\n\n\nCall them.\n' },
      { file: 'feature-spec.json', content: '{"b":1,"a":[1,2]}' },
    ]);
    const b = gateHash([
      { file: 'feature-spec.json', content: '{\r\n  "a": [1, 2],\r\n  "b": 1\r\n}\r\n' },
      { file: 'feature-request.md', content: 'Phones.   \r\n\r\nCall them.' },
    ]);
    expect(a).toBe(b);
    expect(a).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('counts any real change, and a missing file', () => {
    const base = [{ file: 'feature-request.md', content: 'Phones.' }];
    expect(gateHash([{ file: 'feature-request.md', content: 'Phones!' }])).not.toBe(gateHash(base));
    expect(gateHash([{ file: 'feature-request.md', content: null }])).not.toBe(gateHash(base));
    expect(gateHash([...base, { file: 'architecture.json', content: null }])).not.toBe(gateHash(base));
  });

  it("leaves the items' status out of test-list.json, which the conductor advances", () => {
    const list = (status: string, title = 'x') =>
      JSON.stringify({ version: 1, items: [{ id: 'T1', ac: 'AC1', kind: 'behavior', title, status }] });
    expect(gatedText('test-list.json', list('pending'))).toBe(gatedText('test-list.json', list('refactored')));
    expect(gatedText('test-list.json', list('pending'))).not.toBe(gatedText('test-list.json', list('pending', 'y')));
  });

  it('covers the design for spec, the code and cycles for merge', () => {
    expect(gatedFiles('spec', { userFacing: false, cycles: [] })).toEqual([
      'feature-request.md',
      'feature-spec.json',
      'architecture.json',
      'db-design.json',
      'test-list.json',
    ]);
    expect(gatedFiles('plan', { userFacing: true, cycles: [] })).toContain('ux-design.json');
    expect(gatedFiles('merge', { userFacing: false, cycles: ['cycles/cycle-001.json'] })).toEqual(
      expect.arrayContaining(['test-list.json', 'cycles/cycle-001.json', 'git:tree']),
    );
  });

  it('approves only a valid set whose hash is the approved one', () => {
    const approval = { approver: 'ada', at: 'now', hash: 'sha256:a', proxy: false };
    expect(isApproved({ valid: true, problems: [], hash: 'sha256:a', approval })).toBe(true);
    expect(isApproved({ valid: true, problems: [], hash: 'sha256:b', approval })).toBe(false);
    expect(isApproved({ valid: false, problems: ['x'], hash: 'sha256:a', approval })).toBe(false);
    expect(isApproved({ valid: true, problems: [], hash: 'sha256:a', approval: null })).toBe(false);
  });

  it('wants a named human', () => {
    expect(approverProblem('Ada Lovelace')).toBeUndefined();
    expect(approverProblem('  ')).toMatch(/required/);
    expect(approverProblem('Proxy')).toMatch(/reserved/);
    expect(approverProblem('a\nb')).toMatch(/printable/);
  });
});
