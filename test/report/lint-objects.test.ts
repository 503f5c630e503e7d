/**
 * A lint finding that squawk reported once per column, merged by the lint stage into one finding
 * naming the columns: the JSON keeps `objects` (an optional field), and the PR comment, the terminal
 * and the annotations each say the advice once, with the columns it is about.
 */
import { checkAnnotations } from '../../src/report/annotations.js';
import { CheckReport } from '../../src/report/check-report.js';
import { renderCheckMarkdown } from '../../src/report/markdown.js';
import { renderCheckTerminal } from '../../src/report/terminal.js';
import { makeReport, passingStages } from '../fixtures/reports/build.js';

const FILE = 'migrations/20250501120000000_create_orders.js';
const MESSAGE = 'Using 32-bit integer fields can result in hitting the max `int` limit. (columns `a`, `b`)';

function report() {
  const lint = passingStages().lint;
  return makeReport({
    stages: {
      lint: {
        ...lint,
        findings: [
          {
            rule: 'prefer-bigint-over-int',
            level: 'warning',
            message: MESSAGE,
            help: 'Use 64-bit integer values instead to prevent hitting this limit.',
            file: FILE,
            line: 2,
            blocking: false,
            objects: [
              { kind: 'column', name: 'a' },
              { kind: 'column', name: 'b' },
            ],
          },
        ],
      },
    },
  });
}

describe('a finding about several columns', () => {
  it('keeps its objects through the report schema, and a report without them still parses', () => {
    const r = report();
    expect(CheckReport.parse(JSON.parse(JSON.stringify(r))).stages.lint.findings[0]!.objects).toEqual([
      { kind: 'column', name: 'a' },
      { kind: 'column', name: 'b' },
    ]);
    expect(makeReport().stages.lint.findings[0]!.objects).toBeUndefined();
  });

  it('names the columns once in the PR comment, the terminal and the annotations', () => {
    const r = report();
    const md = renderCheckMarkdown(r);
    expect(md.match(/prefer-bigint-over-int/g)).toHaveLength(1);
    expect(md).toContain('limit. (columns \\`a\\`, \\`b\\`)');
    const term = renderCheckTerminal(r);
    expect(term.match(/prefer-bigint-over-int/g)).toHaveLength(1);
    expect(term.replace(/\s+/g, ' ')).toContain('(columns `a`, `b`)');
    const notes = checkAnnotations(r).filter((a) => a.file === FILE);
    expect(notes).toEqual([expect.objectContaining({ line: 2, message: expect.stringContaining(MESSAGE) })]);
  });
});
