/**
 * Runner configuration a test runner finds by itself, with no glob in the harness to name it. A
 * scripted `command` agent's GREEN turn plays each, and the scope check (with what the driver finds
 * by content, src/lanes/tdd/harness.ts) must refuse it:
 *
 * - `"babel"` in package.json: babel-jest (jest's default transform) compiles every test with it,
 *   so a plugin in `src/` (the driver's to write) can turn each `expect(…)` into a no-op. Played
 *   with the real jest: the failing test passes, exit 0. package.json's other runner keys were
 *   test-owned; this one was not. `"jest-junit"` (where the report goes, how tests are named) with it;
 * - pytest's `pytest.toml`, `.pytest.toml` and `.pytest.ini`, which outrank `pytest.ini` even when
 *   empty (`addopts = -p src.plugin` loads a plugin that rewrites every outcome);
 * - Yarn's committed installs: `.yarn/releases/yarn-*.cjs` (the program `yarnPath` runs for `yarn
 *   test`), `.yarn/cache/*.zip` and `.pnp.cjs` (what Plug'n'Play loads instead of a `node_modules`,
 *   which the proof takes from the pristine install);
 * - the expected values of an older test (one from before the feature, which must keep passing), kept
 *   in a data file it names: only the frozen tests' data files were test-owned;
 * - coverage gates' own files (`.c8rc.json`, `.nycrc`, `nyc.config.js`), whose `check-coverage`
 *   decides the suite's exit code as the `c8`/`nyc` keys of package.json, already test-owned, do.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import type { Role } from '../../src/conductor/roles.js';
import type { Policy, TurnStep } from '../../src/conductor/state.js';
import { type GitWorkspace } from '../../src/git/workspace.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';
import { execFileAsync } from '../helpers/exec-file.js';
import { committedWorkspace, HARNESS_REFUSAL, runJest, scopedTurn } from '../helpers/scoped-turn.js';

const exec = execFileAsync;
const git = (cwd: string, ...args: string[]) =>
  exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd });
const FROZEN = 'test/sum.test.js';

/** A babel plugin that turns every `expect(…)` into an object whose every matcher does nothing. */
const NO_OP_EXPECT = `module.exports = ({ types: t }) => ({ visitor: { CallExpression(p) {
  if (!t.isIdentifier(p.node.callee, { name: 'expect' })) return;
  const noop = t.arrowFunctionExpression([], t.arrowFunctionExpression([], t.identifier('undefined')));
  p.replaceWith(t.newExpression(t.identifier('Proxy'), [t.objectExpression([]), t.objectExpression([t.objectProperty(t.identifier('get'), noop)])]));
} } });
`;

let dir: string;
let ws: GitWorkspace;
let policy: Policy;

beforeEach(async () => {
  const files: Record<string, string> = {
    'package.json': `${JSON.stringify({ name: 'app', private: true, scripts: { test: 'jest --ci' } }, null, 2)}\n`,
    'src/sum.js': 'module.exports = (a, b) => a - b;\n',
    [FROZEN]: "const sum = require('../src/sum.js');\ntest('adds', () => { expect(sum(1, 2)).toBe(3); });\n",
    'migrations/.keep': '',
    '.github/consort.yml': 'suite:\n  command: npm test\n  reports: junit.xml\nmigrations:\n  dir: migrations\n',
  };
  ({ dir, ws } = await committedWorkspace('consort-implicit-config-', files));
  policy = buildPolicy((await loadConfig(dir)).config, '001-sum');
});

afterEach(() => rm(dir, { recursive: true, force: true }));

/** The real jest on the work tree: how many tests failed, and its exit code. */
const jest = () => runJest(dir);

/** A scripted command agent's turn, then the scope check as the conductor runs it (turn.ts). */
const turn = (role: Role, step: TurnStep, script: string): Promise<string[]> =>
  scopedTurn({ dir, ws, policy, feature: '001-sum', role, step, script, frozen: [FROZEN] });

const HARNESS = HARNESS_REFUSAL;

it('the driver cannot compile the tests with its own babel plugin through package.json', async () => {
  expect(await jest()).toEqual({ failed: 1, code: 1 });
  const refused = await turn(
    'driver',
    'green',
    `cat > src/no-op-expect.cjs <<'EOF'\n${NO_OP_EXPECT}EOF\n` +
      `node -e "const f='package.json',p=JSON.parse(require('fs').readFileSync(f));p.babel={plugins:['./src/no-op-expect.cjs']};require('fs').writeFileSync(f,JSON.stringify(p,null,2))"`,
  );
  // The cheat is real: the same failing test now passes, and jest exits 0.
  expect(JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8'))).toHaveProperty('babel');
  expect(await jest()).toEqual({ failed: 0, code: 0 });
  expect(refused).toEqual([`package.json: ${HARNESS}`]);
}, 120_000);

it("the driver cannot remap a colocated test's import with a new package.json next to it", async () => {
  // The base: a test beside the code, importing it through the root package.json's `imports`.
  const pkg = { name: 'app', private: true, imports: { '#sum': './src/sum.js' }, scripts: { test: 'jest --ci' } };
  await writeFile(path.join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  await writeFile(
    path.join(dir, 'src/sum.test.js'),
    "const sum = require('#sum');\ntest('adds near', () => { expect(sum(1, 2)).toBe(3); });\n",
  );
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'colocated test');
  expect((await jest()).failed).toBe(2);
  const refused = await turn(
    'driver',
    'green',
    `printf 'module.exports = () => 3;\\n' > src/double.js && printf '{ "imports": { "#sum": "./double.js" } }\\n' > src/package.json`,
  );
  // The cheat is real: the nearest package.json decides what `#sum` is for src/sum.test.js.
  expect((await jest()).failed).toBe(1);
  expect(refused).toEqual([`src/package.json: ${HARNESS}`]);
  // A new package.json that changes no runner key (a package's name and dependencies) is the driver's.
  await rm(path.join(dir, 'src/package.json'));
  expect(await turn('driver', 'green', `printf '{ "name": "lib", "dependencies": {} }\\n' > src/package.json`)).toEqual(
    [],
  );
}, 120_000);

it.each([
  [
    "jest-junit's report settings in package.json",
    'package.json',
    `sed -i 's/"private"/"jest-junit": { "outputName": "other.xml" }, "private"/' package.json`,
  ],
  [
    'pytest.toml (outranks pytest.ini)',
    'pytest.toml',
    `printf '[pytest]\\naddopts = ["-p", "src.plugin"]\\n' > pytest.toml`,
  ],
  ['.pytest.toml', '.pytest.toml', `printf '[pytest]\\naddopts = ["-p", "src.plugin"]\\n' > .pytest.toml`],
  ['.pytest.ini', '.pytest.ini', `printf '[pytest]\\naddopts = -p src.plugin\\n' > .pytest.ini`],
  [
    "yarn's own program, which `yarnPath` in .yarnrc.yml runs for `yarn test`",
    '.yarn/releases/yarn-4.5.0.cjs',
    `mkdir -p .yarn/releases && printf 'process.exit(0)\\n' > .yarn/releases/yarn-4.5.0.cjs`,
  ],
  [
    "a package of a zero-install cache, which Plug'n'Play loads in place of node_modules",
    '.yarn/cache/jest-npm-29.7.0-0123456789-abcdef.zip',
    `mkdir -p .yarn/cache && printf 'PK' > .yarn/cache/jest-npm-29.7.0-0123456789-abcdef.zip`,
  ],
  ["Plug'n'Play's resolution map", '.pnp.cjs', `printf 'module.exports = {};\\n' > .pnp.cjs`],
  ["c8's coverage gate", '.c8rc.json', `printf '{ "check-coverage": false }\\n' > .c8rc.json`],
  ["nyc's coverage gate", '.nycrc', `printf '{ "check-coverage": false }\\n' > .nycrc`],
  ["nyc's coverage gate as code", 'nyc.config.js', `printf 'module.exports = { lines: 0 };\\n' > nyc.config.js`],
])(
  'the driver cannot change %s',
  async (_what, file, script) => {
    expect(await turn('driver', 'green', script)).toEqual([`${file}: ${HARNESS}`]);
  },
  30_000,
);

it('a package.json saved with a byte order mark (npm reads it) is judged by its keys too', async () => {
  const pkg = { name: 'app', private: true, scripts: { test: 'jest --ci' } };
  await writeFile(path.join(dir, 'package.json'), `\uFEFF${JSON.stringify(pkg, null, 2)}\n`);
  await git(dir, 'commit', '-qam', 'saved on Windows');
  expect(await turn('driver', 'green', `sed -i 's/"jest --ci"/"exit 0"/' package.json`)).toEqual([
    `package.json: ${HARNESS}`,
  ]);
}, 30_000);

it('the driver cannot rewrite the expected values of an older test it broke', async () => {
  // A test from before the feature, not frozen by this one's RED: it must keep passing on the code.
  await mkdir(path.join(dir, 'data'));
  await writeFile(path.join(dir, 'data/totals.json'), '{ "total": 3 }\n');
  await writeFile(path.join(dir, 'data/unread.json'), '{}\n');
  await writeFile(
    path.join(dir, 'test/total.test.js'),
    "const sum = require('../src/sum.js');\nconst { total } = require('../data/totals.json');\ntest('total', () => { expect(sum(1, 2)).toBe(total); });\n",
  );
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'an older test');
  expect(
    await turn(
      'driver',
      'green',
      `printf 'module.exports = (a, b) => a * b;\\n' > src/sum.js && printf '{ "total": 2 }\\n' > data/totals.json && printf '{ "x": 1 }\\n' > data/unread.json`,
    ),
  ).toEqual([`data/totals.json: ${HARNESS}`]);
}, 30_000);

it('the navigator may change them in RED, with its tests', async () => {
  expect(
    await turn(
      'navigator',
      'red',
      `printf '[pytest]\\n' > .pytest.ini && printf '{}\\n' > .c8rc.json && echo '// t' >> test/other.test.js`,
    ),
  ).toEqual([]);
}, 30_000);

it("an honest GREEN in src/ is still the driver's", async () => {
  expect(await turn('driver', 'green', `printf 'module.exports = (a, b) => a + b;\\n' > src/sum.js`)).toEqual([]);
  expect(await jest()).toEqual({ failed: 0, code: 0 });
}, 120_000);
