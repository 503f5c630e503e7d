/**
 * Which runtime runs the suite, and bun's configuration, in any folder: version managers' shims
 * (nvm, fnm, volta, asdf) read `.nvmrc`, `.node-version` and `.tool-versions` upward from where the
 * command runs, and `bun test` reads `bunfig.toml` (`[test] preload = ["./cheat.ts"]`) where it
 * runs — a monorepo's `suite.command: cd web && bun test` reads `web/bunfig.toml`. Until 2026-12-04
 * only the root's were harness (`.python-version` was already harness in any folder).
 */
import { rm } from 'node:fs/promises';
import { loadConfig } from '../../src/config/load.js';
import type { Policy } from '../../src/conductor/state.js';
import { type GitWorkspace } from '../../src/git/workspace.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';
import { committedWorkspace, HARNESS_REFUSAL, scopedTurn } from '../helpers/scoped-turn.js';

let dir: string;
let ws: GitWorkspace;
let policy: Policy;

beforeEach(async () => {
  ({ dir, ws } = await committedWorkspace('consort-version-files-', {
    'web/package.json': `${JSON.stringify({ name: 'web', private: true, scripts: { test: 'bun test' } })}\n`,
    'web/src/sum.ts': 'export const sum = (a: number, b: number) => a - b;\n',
    'web/test/sum.test.ts': "import { sum } from '../src/sum';\ntest('adds', () => expect(sum(1, 2)).toBe(3));\n",
    'migrations/.keep': '',
    '.github/consort.yml':
      'suite:\n  command: cd web && bun test\n  reports: junit.xml\nmigrations:\n  dir: migrations\n',
  }));
  policy = buildPolicy((await loadConfig(dir)).config, '001-sum');
});

afterEach(() => rm(dir, { recursive: true, force: true }));

it.each([
  ['web/bunfig.toml', `printf '[test]\\npreload = ["./src/cheat.ts"]\\n' > web/bunfig.toml`],
  ['web/.nvmrc', `printf '18\\n' > web/.nvmrc`],
  ['web/.node-version', `printf '18.0.0\\n' > web/.node-version`],
  ['web/.tool-versions', `printf 'nodejs 18.0.0\\n' > web/.tool-versions`],
])(
  'the driver cannot write %s',
  async (file, script) => {
    expect(
      await scopedTurn({ dir, ws, policy, feature: '001-sum', role: 'driver', step: 'green', script, frozen: [] }),
    ).toEqual([`${file}: ${HARNESS_REFUSAL}`]);
  },
  30_000,
);
