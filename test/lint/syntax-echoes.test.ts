/** One SQL typo is one finding: the parser's echoes at the statements after it are dropped. */
import { firstSyntaxErrors } from '../../src/lanes/check/lint-stage.js';

it('keeps the first syntax error of each file and every other finding', () => {
  const f = (rule: string, file: string, line: number) => ({ rule, file, line });
  const findings = [
    f('syntax-error', 'a.sql', 9),
    f('syntax-error', 'a.sql', 3),
    f('syntax-error', 'a.sql', 12),
    f('adding-required-field', 'a.sql', 20),
    f('syntax-error', 'b.sql', 5),
  ];
  expect(firstSyntaxErrors(findings)).toEqual([
    f('syntax-error', 'a.sql', 3),
    f('adding-required-field', 'a.sql', 20),
    f('syntax-error', 'b.sql', 5),
  ]);
});
