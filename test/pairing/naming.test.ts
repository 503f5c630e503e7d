/** Which database branch a git branch pairs with (pure rules). */
import { branchNameProblem } from '../../src/core/names.js';
import { pairParent, pairTarget } from '../../src/pairing/naming.js';

const rules = { root: 'main', rootGitBranches: ['main', 'master'] };

describe('pairTarget', () => {
  it.each([
    ['main', [], { kind: 'root', name: 'main' }],
    ['master', [], { kind: 'root', name: 'main' }],
    ['feature/Login', [], { kind: 'new', name: 'feature-login' }],
    ['feature/Login', [{ name: 'login-db', gitBranch: 'feature/Login' }], { kind: 'existing', name: 'login-db' }],
  ] as const)('%s with %j', (git, branches, expected) => {
    expect(pairTarget(git, branches, rules)).toEqual(expected);
  });

  it('never takes over a name another git branch (or no pairing) already uses', () => {
    const taken = [
      { name: 'feat-a', gitBranch: 'feat/A' },
      { name: 'pr-12', gitBranch: null },
    ];
    const a = pairTarget('feat-a', taken, rules);
    const b = pairTarget('pr/12', taken, rules);
    expect(a).toEqual({ kind: 'new', name: expect.stringMatching(/^feat-a-[0-9a-f]{6}$/) });
    expect(b).toEqual({ kind: 'new', name: expect.stringMatching(/^pr-12-[0-9a-f]{6}$/) });
    expect(pairTarget('postgres', [], rules).name).toMatch(/^postgres-[0-9a-f]{6}$/);
    expect(pairTarget('trunk', [], { root: 'trunk', rootGitBranches: [] }).name).toMatch(/^trunk-[0-9a-f]{6}$/);
  });

  it('gives a valid branch name for any git branch', () => {
    const long = `feature/${'x'.repeat(80)}`;
    for (const git of ['123-fix', 'ÜBER/ä', '-', long, 'a--b__c']) {
      const { name } = pairTarget(git, [{ name: pairTarget(git, [], rules).name, gitBranch: 'other' }], rules);
      expect(branchNameProblem(name)).toBeUndefined();
    }
  });
});

it("a PR lane's branch that checked a git branch (`consort check --pr 42` on it) is not its pairing", () => {
  // The check records the git branch it checked, but its branch holds the run's state (the
  // working tree's uncommitted migrations among it): neither reused nor forked from.
  const branches = [
    { name: 'pr-42', gitBranch: 'feature/one' },
    { name: 'pr-42-suite', gitBranch: 'feature/one' },
    { name: 'check-worktree', gitBranch: 'feature/one' },
  ];
  expect(pairTarget('feature/one', branches, rules)).toEqual({ kind: 'new', name: 'feature-one' });
  expect(pairParent('feature/one', branches, rules)).toBe('main');
  const paired = [...branches, { name: 'feature-one', gitBranch: 'feature/one' }];
  expect(pairTarget('feature/one', paired, rules)).toEqual({ kind: 'existing', name: 'feature-one' });
  expect(pairParent('feature/one', paired, rules)).toBe('feature-one');
  // A branch a person named so by hand (`branch create pr-7b --git-branch …`) is still a pairing.
  expect(pairTarget('x', [{ name: 'pr-7b', gitBranch: 'x' }], rules)).toEqual({ kind: 'existing', name: 'pr-7b' });
});

describe('pairParent', () => {
  const branches = [{ name: 'feature-a', gitBranch: 'feature/a' }];
  it.each([
    [undefined, 'main'],
    ['main', 'main'],
    ['feature/a', 'feature-a'],
    ['never-paired', 'main'],
  ])('created from %s forks %s', (from, parent) => {
    expect(pairParent(from, branches, rules)).toBe(parent);
  });
});
