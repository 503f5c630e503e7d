import { assertBranchName, branchNameProblem, sanitizeBranchName } from '../../src/core/branch-name.js';
import { isConsortError } from '../../src/core/errors.js';

describe('branch names', () => {
  it.each([
    ['main', undefined],
    ['pr-12', undefined],
    ['a'.repeat(63), undefined],
    ['a'.repeat(64), 'is longer than 63 characters'],
    ['', 'is empty'],
    ['1abc', 'must start with a lowercase letter'],
    ['Feature', 'must start with a lowercase letter'],
    ['feat/x', 'may contain only lowercase letters, digits and "-"'],
    ['feat_x', 'may contain only lowercase letters, digits and "-"'],
    ['feat-', 'must not end with "-"'],
  ])('%s -> %s', (name, problem) => {
    expect(branchNameProblem(name)).toBe(problem);
  });

  it.each([
    ['Feature/Login_Page', 'feature-login-page'],
    ['PR #12', 'pr-12'],
    ['123-fix', 'fix'],
    ['---', 'branch'],
    ['x'.repeat(80), 'x'.repeat(63)],
    [`a${'-'.repeat(70)}b`, 'a-b'],
  ])('sanitizes %s to %s', (input, expected) => {
    expect(sanitizeBranchName(input)).toBe(expected);
    expect(branchNameProblem(sanitizeBranchName(input))).toBeUndefined();
  });

  it('refuses an invalid name with the sanitized suggestion', () => {
    let caught: unknown;
    try {
      assertBranchName('Feat/One');
    } catch (e) {
      caught = e;
    }
    expect(isConsortError(caught, 'invalid-input')).toBe(true);
    expect((caught as Error).message).toContain('Feat/One');
    expect((caught as { hint: string }).hint).toContain('"feat-one"');
  });
});
