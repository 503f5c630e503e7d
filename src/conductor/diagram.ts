/**
 * The conductor's state diagram, rendered from its step table (steps.ts): a Mermaid state diagram
 * and a table of the steps, written into docs/tdd-lane.md between markers by
 * scripts/gen-conductor-diagram.mjs. test/docs/conductor-diagram.test.ts fails when the committed
 * diagram no longer matches the table.
 */
import { STEPS, type Step } from './state.js';
import { ANY_STEP, STEP_TABLE, type StepSpec } from './steps.js';

export const DIAGRAM_START =
  '<!-- conductor-steps:start (generated from src/conductor/steps.ts by scripts/gen-conductor-diagram.mjs; do not edit) -->';
export const DIAGRAM_END = '<!-- conductor-steps:end -->';

type Table = { readonly [S in Step]: Pick<StepSpec<S>, 'says' | 'accepts' | 'next'> };

/** Mermaid ids cannot hold `-`. */
const id = (step: string) => step.replace(/-/g, '_');
/** Edge labels: one line, no characters Mermaid or a Markdown table reads as syntax. */
const label = (text: string) =>
  text
    .replace(/[:;|#]/g, ',')
    .replace(/\s+/g, ' ')
    .trim();

export function renderStepDiagram(table: Table = STEP_TABLE, anyStep: Record<string, string> = ANY_STEP): string {
  const lines = ['```mermaid', 'stateDiagram-v2'];
  for (const step of STEPS) if (step.includes('-')) lines.push(`  state "${step}" as ${id(step)}`);
  lines.push('  [*] --> design : run.started');
  for (const step of STEPS) {
    const spec = table[step];
    for (const [to, when] of Object.entries(spec.next)) lines.push(`  ${id(step)} --> ${id(to)} : ${label(when)}`);
  }
  lines.push('  awaiting_approval --> gate : run.started', '  done --> [*]', '```', '');
  lines.push('| step | accepts | what it is |', '| --- | --- | --- |');
  for (const step of STEPS) {
    const spec = table[step];
    const accepts = ['run.started', ...spec.accepts].map((e) => `\`${e}\``).join(', ');
    lines.push(`| \`${step}\` | ${accepts} | ${spec.says.replace(/\|/g, '\\|')} |`);
  }
  lines.push('', 'Besides its own events, at any step:', '');
  for (const text of Object.values(anyStep)) lines.push(`- ${text}`);
  return lines.join('\n');
}

/** The document with the generated block replaced. */
export function updateDiagram(doc: string, block: string): string {
  const from = doc.indexOf(DIAGRAM_START);
  const to = doc.indexOf(DIAGRAM_END);
  if (from < 0 || to < from) throw new Error(`the document lacks the markers ${DIAGRAM_START} … ${DIAGRAM_END}`);
  return `${doc.slice(0, from + DIAGRAM_START.length)}\n${block}\n${doc.slice(to)}`;
}
