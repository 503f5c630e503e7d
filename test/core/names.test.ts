import {
  assertBranchName,
  branchNameProblem,
  featureSlugFromBranch,
  isFeatureSlug,
  pullNumberOf,
  sanitizeBranchName,
} from '../../src/core/names.js';
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

describe('the PR lane and feature names', () => {
  it('tells which pull request a branch belongs to', () => {
    expect(pullNumberOf('pr-12')).toBe(12);
    expect(pullNumberOf('pr-12-rev')).toBe(12);
    expect(pullNumberOf('pr-12-suite')).toBe(12);
    expect(pullNumberOf('pr-x')).toBeNull();
    expect(pullNumberOf('check-abc1234')).toBeNull();
    expect(pullNumberOf('gh1-pr-12')).toBeNull();
  });

  it('makes a feature slug from a git branch and checks one', () => {
    expect(featureSlugFromBranch('feat/Customer_Phones')).toBe('customer-phones');
    expect(featureSlugFromBranch('12-fix')).toBe('fix');
    expect(isFeatureSlug('customer-phones')).toBe(true);
    expect(isFeatureSlug('a'.repeat(41))).toBe(false);
    expect(isFeatureSlug('Customer')).toBe(false);
    expect(isFeatureSlug('a--b')).toBe(false);
  });
});
