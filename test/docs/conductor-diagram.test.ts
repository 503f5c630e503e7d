/** docs/tdd-lane.md's conductor state diagram is generated from the step table and must be current. */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DIAGRAM_END, DIAGRAM_START, renderStepDiagram, updateDiagram } from '../../src/conductor/diagram.js';
import { STEPS } from '../../src/conductor/state.js';
import { STEP_TABLE } from '../../src/conductor/steps.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const doc = () => readFile(path.join(ROOT, 'docs', 'tdd-lane.md'), 'utf8');

it('docs/tdd-lane.md holds the diagram as the step table renders it (npm run build && node scripts/gen-conductor-diagram.mjs)', async () => {
  const text = await doc();
  expect(text).toContain(DIAGRAM_START);
  expect(updateDiagram(text, renderStepDiagram())).toBe(text);
  // Every move the table lists is an edge of the diagram.
  for (const step of STEPS) {
    for (const to of Object.keys(STEP_TABLE[step].next))
      expect(text).toMatch(new RegExp(`^  ${step.replace(/-/g, '_')} --> ${to.replace(/-/g, '_')} : `, 'm'));
  }
});

it('a changed table makes the document stale', async () => {
  const text = await doc();
  const changed = {
    ...STEP_TABLE,
    review: { ...STEP_TABLE.review, next: { ...STEP_TABLE.review.next, done: 'a shortcut' } },
  };
  expect(updateDiagram(text, renderStepDiagram(changed))).not.toBe(text);
  const said = { ...STEP_TABLE, red: { ...STEP_TABLE.red, says: 'something else' } };
  expect(updateDiagram(text, renderStepDiagram(said))).not.toBe(text);
  expect(() => updateDiagram(text.replace(DIAGRAM_END, ''), renderStepDiagram())).toThrow(/lacks the markers/);
});
