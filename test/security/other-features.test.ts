/**
 * A feature's records (state.json, gates.json, turns, events, cycles) are the conductor's, and a
 * workspace holds every feature's: the scope check guarded only the records of the feature that
 * runs. A project that widens a role's writes (`roles.driver.writes: ['**']`, or a navigator's
 * `build.tests` that reaches `.consort/`) let that role's turn write another feature's gates.json —
 * an approval of its merge gate that the other feature's next run reads as given (src/lanes/tdd/
 * store.ts reads it as written). Played by a scripted `command` agent's GREEN turn; the scope check
 * must refuse any feature's records, and the feature's own artifacts stay writable as configured.
 */
import { rm } from 'node:fs/promises';
import { commandBackend } from '../../src/agents/command.js';
import { loadConfig } from '../../src/config/load.js';
import { checkScope } from '../../src/conductor/scope.js';
import { changesSince, workspaceHead, type GitWorkspace } from '../../src/git/workspace.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';
import { committedWorkspace } from '../helpers/scoped-turn.js';

let dir: string;
let ws: GitWorkspace;

beforeEach(async () => {
  const files: Record<string, string> = {
    'src/sum.js': 'export const sum = (a, b) => a - b;\n',
    'test/sum.test.js': '// the frozen test\n',
    'migrations/.keep': '',
    '.consort/features/002-other/gates.json': '{ "gates": {} }\n',
    '.github/consort.yml':
      "suite:\n  command: npm test\n  reports: junit.xml\nmigrations:\n  dir: migrations\nroles:\n  driver:\n    writes: ['**', '!{tests}']\n",
  };
  ({ dir, ws } = await committedWorkspace('consort-other-features-', files));
});

afterEach(() => rm(dir, { recursive: true, force: true }));

async function refusedAfter(script: string): Promise<string[]> {
  const base = await workspaceHead(ws);
  const result = await commandBackend({ command: script }).runTurn({
    role: 'driver',
    step: 'green',
    feature: '001-sum',
    item: 'T1',
    instructions: '',
    workspace: dir,
    writes: [],
    contextPack: { pack: {} as never, json: '{}', markdown: '# driver: green' },
    branchUrl: 'postgresql://agent:pw@127.0.0.1:1/none',
    model: null,
    budget: { timeoutMs: 30_000 },
  });
  expect(result.exit).toEqual({ kind: 'done' });
  const changes = await changesSince(ws, base);
  const policy = buildPolicy((await loadConfig(dir)).config, '001-sum');
  return checkScope({ policy, role: 'driver', step: 'green', item: 'T1', changes, frozen: {}, hashes: {} }).map(
    (r) => `${r.path}: ${r.why}`,
  );
}

it("a widened role cannot write another feature's gates or state", async () => {
  const approve = `{ "gates": { "merge": { "approvedBy": "Grace Hopper", "mode": "human" } } }`;
  expect(
    await refusedAfter(
      `printf '%s\\n' '${approve}' > .consort/features/002-other/gates.json && printf '{}\\n' > .consort/features/002-other/state.json && mkdir -p .consort/features/003-new/cycles && printf '{}\\n' > .consort/features/003-new/cycles/1.json`,
    ),
  ).toEqual([
    ".consort/features/002-other/gates.json: the conductor's own record",
    ".consort/features/002-other/state.json: the conductor's own record",
    ".consort/features/003-new/cycles/1.json: the conductor's own record",
  ]);
}, 30_000);

it('what the configuration gives the role outside the records is still its own', async () => {
  expect(
    await refusedAfter(`printf 'x\\n' > .consort/features/002-other/notes.md && printf 'fix\\n' >> src/sum.js`),
  ).toEqual([]);
}, 30_000);
