/** The dashboard's pure parts, table-driven: gate status, pages, filters, excerpts, view models, escaping. */
import { ConductorState, initialState, type TurnRecord } from '../../src/conductor/state.js';
import { escapeHtml, href, html } from '../../src/dashboard/html.js';
import type { FeatureSummary } from '../../src/dashboard/port.js';
import type { LogEvent } from '../../src/conductor/events.js';
import { gatesPage } from '../../src/dashboard/pages.js';
import {
  checkRunOf,
  filterFeatures,
  gateStatus,
  gateViews,
  paginate,
  summarize,
  transcriptExcerpt,
} from '../../src/dashboard/records.js';
import { branchTree, costByRole, timelineBars, turnsPerItem } from '../../src/dashboard/views.js';
import { checkReport, T0, turn } from './fixture.js';

/** Validated: a state the conductor could be at. */
const state = (over: Record<string, unknown>): ConductorState =>
  ConductorState.parse({ ...initialState('001-x'), ...over });

describe('gateStatus', () => {
  it.each([
    ['approved and unchanged', { approvalHash: 'h1', currentHash: 'h1' }, {}, 'approved'],
    ['approved, artifacts changed since', { approvalHash: 'h1', currentHash: 'h2' }, {}, 'stale'],
    [
      'waiting at it',
      { approvalHash: null, currentHash: 'h2' },
      { step: 'awaiting-approval' as const, gate: 'spec' as const },
      'pending',
    ],
    [
      'being checked',
      { approvalHash: null, currentHash: 'h2' },
      { step: 'gate' as const, gate: 'spec' as const },
      'pending',
    ],
    [
      'waiting at another gate',
      { approvalHash: null, currentHash: 'h2' },
      { step: 'awaiting-approval' as const, gate: 'plan' as const },
      'not-reached',
    ],
    ['not reached', { approvalHash: null, currentHash: null }, {}, 'not-reached'],
  ])('%s', (_name, hashes, over, expected) => {
    expect(gateStatus({ gate: 'spec', state: state(over), ...hashes })).toBe(expected);
  });
});

describe('paginate', () => {
  const all = Array.from({ length: 25 }, (_, i) => i);
  it.each([
    [1, 10, [0, 9], 1],
    [3, 10, [20, 24], 3],
    [9, 10, [20, 24], 3],
    [0, 10, [0, 9], 1],
    [Number.NaN, 10, [0, 9], 1],
    [1, 100_000, [0, 24], 1],
  ])('page %p of size %p', (page, size, [first, last], expectedPage) => {
    const p = paginate(all, page, size);
    expect([p.items[0], p.items[p.items.length - 1], p.page, p.total]).toEqual([first, last, expectedPage, 25]);
  });
});

describe('filterFeatures', () => {
  const row = (feature: string, over: Partial<FeatureSummary>): FeatureSummary => ({
    feature,
    phase: 'build',
    step: 'green',
    where: '',
    item: null,
    openGate: null,
    items: [],
    turns: 0,
    inputTokens: 0,
    outputTokens: 0,
    costUsd: 0,
    agentMs: 0,
    escalation: null,
    updatedAt: null,
    pr: null,
    ...over,
  });
  const rows = [
    row('001-a', { openGate: 'spec', step: 'awaiting-approval', pr: 7 }),
    row('002-b', { step: 'done', phase: 'done' }),
    row('003-c', { step: 'escalated' }),
    row('004-d', {}),
  ];
  it.each([
    [{}, ['001-a', '002-b', '003-c', '004-d']],
    [{ state: 'open' }, ['001-a', '003-c', '004-d']],
    [{ state: 'waiting' }, ['001-a', '003-c']],
    [{ state: 'done' }, ['002-b']],
    [{ state: 'green' }, ['004-d']],
    [{ q: 'B' }, ['002-b']],
    [{ pr: 7 }, ['001-a']],
  ])('%p', (filter, expected) => {
    expect(filterFeatures(rows, filter).map((r) => r.feature)).toEqual(expected);
  });
});

describe('summarize', () => {
  it('adds up turns and says where the feature waits', () => {
    const turns: TurnRecord[] = [
      turn({ id: 'turn-0000', role: 'spec-author', step: 'spec' }, '001-x', T0),
      turn(
        { id: 'turn-0001', role: 'dba', step: 'db-design', usage: { inputTokens: 5, outputTokens: 6 } },
        '001-x',
        T0 + 1000,
      ),
    ];
    const s = summarize({
      state: state({ step: 'awaiting-approval', gate: 'spec' }),
      turns,
      events: [],
      gates: { version: 1, feature: '001-x', gates: {} },
    });
    expect(s).toMatchObject({
      turns: 2,
      inputTokens: 1205,
      outputTokens: 306,
      costUsd: 0.12,
      openGate: 'spec',
      where: 'waiting for approval of the spec gate',
      updatedAt: new Date(T0 + 61_000).toISOString(),
    });
  });
});

describe('transcriptExcerpt', () => {
  it.each([
    ['short', 'a\nb\n', 10, 100, { text: 'a\nb', clipped: false, lines: 2 }],
    ['too many lines', '1\n2\n3\n4\n', 2, 100, { text: '3\n4', clipped: true, lines: 4 }],
    ['too many characters', 'aaaa\nbbbb\ncccc', 10, 9, { text: 'bbbb\ncccc', clipped: true, lines: 3 }],
  ])('%s', (_n, text, lines, chars, expected) => {
    expect(transcriptExcerpt(text, lines, chars)).toEqual(expected);
  });
});

describe('checkRunOf', () => {
  it('reads a CheckReport into a history row and refuses anything else', () => {
    const row = checkRunOf('1', checkReport(4, T0));
    expect(row).toMatchObject({ id: '1', conclusion: 'failure', pr: 10 });
    expect(row?.stages.map((s) => s.name)).toEqual([
      'plan',
      'baseline',
      'migrations',
      'lint',
      'reversibility',
      'schemaDiff',
      'suite',
    ]);
    expect(checkRunOf('2', { schemaVersion: 2 })).toBeUndefined();
  });
});

describe('view models', () => {
  const turns = [
    turn({ id: 't0', role: 'driver', step: 'green', item: 'T2', verdict: 'refused', reason: 'x'.repeat(500) }, 'f', T0),
    turn({ id: 't1', role: 'driver', step: 'green', item: 'T2' }, 'f', T0 + 1),
    turn(
      { id: 't2', role: 'navigator', step: 'red', item: 'T10', usage: { inputTokens: 1, outputTokens: 1, costUsd: 2 } },
      'f',
      T0 + 2,
    ),
    turn({ id: 't3', role: 'spec-author', step: 'spec' }, 'f', T0 + 3),
  ];
  it('gives every bar a symbol and a bounded label', () => {
    const bars = timelineBars(turns);
    expect(bars.map((b) => b.symbol)).toEqual(['✗', '✓', '✓', '✓']);
    expect(bars[0]!.label.length).toBeLessThan(220);
  });
  it('adds cost by role and turns per item in test-list order', () => {
    expect(costByRole(turns).map((s) => [s.key, s.costUsd, s.turns])).toEqual([
      ['navigator', 2, 1],
      ['driver', 0.24, 2],
      ['spec-author', 0.12, 1],
    ]);
    expect(turnsPerItem(turns)).toEqual([
      { item: 'T2', verdict: 'accepted', turns: 1 },
      { item: 'T2', verdict: 'refused', turns: 1 },
      { item: 'T10', verdict: 'accepted', turns: 1 },
    ]);
  });
  it('orders the branch tree parent first, orphans as roots', () => {
    const tree = branchTree([
      { name: 'c', parent: 'b' },
      { name: 'b', parent: 'main' },
      { name: 'main', parent: null },
      { name: 'lost', parent: 'gone' },
    ]);
    expect(tree.map((t) => `${t.depth}${t.branch.name}`)).toEqual(['0lost', '0main', '1b', '2c']);
  });
});

describe('html', () => {
  it.each([
    ['<script>alert(1)</script>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    ['"onmouseover="x', '&quot;onmouseover=&quot;x'],
    ["'`&", '&#39;&#96;&amp;'],
  ])('escapes %p', (input, expected) => {
    expect(escapeHtml(input)).toBe(expected);
    expect(html`<p title="${input}">${input}</p>`.text).toBe(`<p title="${expected}">${expected}</p>`);
  });
  it('encodes path segments so an id cannot become a scheme or climb out', () => {
    expect(href('/d', 'features', 'javascript:alert(1)', '../x')).toBe('/d/features/javascript%3Aalert(1)/..%2Fx');
  });
});

describe('a flagged merge gate', () => {
  it('shows the lines the run flagged for these artifacts, and still offers the approval', async () => {
    const flag = 'src/total.js:2 looks for a test environment: if (process.env.JEST_WORKER_ID) return 42;';
    const at = (n: number) => new Date(T0 + n).toISOString();
    const surfaced = (id: string, hash: string, flags?: string[]): LogEvent => ({
      id,
      at: at(Number(id.slice(-1))),
      feature: '001-x',
      type: 'gate.surfaced',
      gate: 'merge',
      hash,
      problems: [],
      ...(flags ? { flags } : {}),
    });
    const views = await gateViews(
      state({ phase: 'merge', step: 'awaiting-approval', gate: 'merge' }),
      { version: 1, feature: '001-x', gates: {} },
      [],
      () => ({ hash: 'sha256:now', valid: true, problems: [] }),
      // An older surfacing of other artifacts does not count: the flags are those of what is approved.
      [surfaced('log-1', 'sha256:before', ['src/old.js:1 gone']), surfaced('log-2', 'sha256:now', [flag])],
    );
    const merge = views.find((v) => v.gate === 'merge')!;
    expect(merge).toMatchObject({ status: 'pending', valid: true, problems: [], flags: [flag] });
    const page = String(
      gatesPage(
        '/',
        { summary: { feature: '001-x' } as FeatureSummary, cycles: [], gates: [merge], events: [] },
        { csrf: 'c', approver: 'Ada', canApprove: true, editableApprover: false },
      ),
    );
    expect(page).toContain('read first: flagged lines the feature added');
    expect(page).toContain(escapeHtml(flag));
    expect(page).not.toContain('cannot be approved');
    expect(page).toContain('Approve the merge gate');
  });
});
