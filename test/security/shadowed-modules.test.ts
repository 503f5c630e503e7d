/**
 * Code the proof runs in place of the committed source, without touching a harness file:
 *
 * - a module beside another of the same name. Jest resolves `import '../src/sum'` by trying `.js`
 *   before `.ts` (and ESM TypeScript projects' `moduleNameMapper` strips `.js` to the same effect),
 *   while `tsc` compiles `src/sum.ts` and ignores `src/sum.js`: a driver's `src/sum.js` stub made the
 *   failing test pass (played with the real jest and ts-jest), the bug still in `src/sum.ts`;
 * - compiled Python. A `.pyc` written with unchecked-hash invalidation (PEP 552) is imported in place
 *   of its source whatever the source says: a driver that stopped ignoring `__pycache__` and
 *   committed one made the failing test pass (played with the real pytest), `src/calc.py` unchanged;
 *   so did a package `src/calc/__init__.py` beside it, and an extension module `src/calc.*.so`
 *   (a binary nobody reads in the diff) is imported before the source too.
 *
 * Until 2026-12-04 both were the driver's to write in GREEN. Each is refused in every step now.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import type { Role } from '../../src/conductor/roles.js';
import type { Policy, TurnStep } from '../../src/conductor/state.js';
import { type GitWorkspace } from '../../src/git/workspace.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';
import { execFileAsync, type ExecError } from '../helpers/exec-file.js';
import { committedWorkspace, runJest, scopedTurn } from '../helpers/scoped-turn.js';

const SHADOW = 'a module beside another of the same name (a runner can load one where the diff shows the other)';
const COMPILED = "compiled Python, never an agent's to commit (python can import a .pyc in place of its source)";

let dir: string;
let ws: GitWorkspace;
let policy: Policy;

afterEach(() => rm(dir, { recursive: true, force: true }));

async function open(prefix: string, files: Record<string, string>): Promise<void> {
  ({ dir, ws } = await committedWorkspace(prefix, files));
  policy = buildPolicy((await loadConfig(dir)).config, '001-sum');
}

const turn = (role: Role, step: TurnStep, script: string, frozen: string[]): Promise<string[]> =>
  scopedTurn({ dir, ws, policy, feature: '001-sum', role, step, script, frozen });

describe('a module beside another of the same name', () => {
  const FROZEN = 'test/sum.test.ts';
  beforeEach(() =>
    open('consort-shadow-ts-', {
      'package.json': `${JSON.stringify({ name: 'app', private: true, scripts: { test: 'jest --ci' } }, null, 2)}\n`,
      // Consort's own ts-jest (the repository has no install), transpiling only.
      'jest.config.js': `module.exports = { transform: { '^.+\\\\.ts$': [${JSON.stringify(path.resolve('node_modules/ts-jest'))}, { isolatedModules: true, diagnostics: false }] } };\n`,
      'tsconfig.json':
        '{ "compilerOptions": { "module": "commonjs", "strict": true, "outDir": "dist" }, "include": ["src"] }\n',
      '.gitignore': 'dist/\nsrc/**/*.js\n!src/keep/*.js\n',
      'src/sum.ts': 'export const sum = (a: number, b: number): number => a - b;\n',
      'src/keep/both.ts': 'export const both = 1;\n',
      'src/keep/both.js': 'exports.both = 1;\n',
      [FROZEN]: "import { sum } from '../src/sum';\ntest('adds', () => { expect(sum(1, 2)).toBe(3); });\n",
      'migrations/.keep': '',
      '.github/consort.yml': 'suite:\n  command: npm test\n  reports: junit.xml\nmigrations:\n  dir: migrations\n',
    }),
  );

  it('the driver cannot add src/sum.js beside src/sum.ts (jest loads the stub, tsc builds the bug)', async () => {
    expect(await runJest(dir)).toEqual({ failed: 1, code: 1 });
    const refused = await turn(
      'driver',
      'green',
      `printf 'src/sum.js\\n' >> .gitignore && printf '!src/sum.js\\n' >> .gitignore && printf 'exports.sum = () => 3;\\n' > src/sum.js`,
      [FROZEN],
    );
    // The cheat is real: the failing test passes on the stub, src/sum.ts still subtracts.
    expect(await runJest(dir)).toEqual({ failed: 0, code: 0 });
    expect(refused).toEqual([`src/sum.js: ${SHADOW}`]);
  }, 120_000);

  it.each([
    ['src/sum.mjs', "printf 'export const sum = () => 3;\\n' > src/sum.mjs"],
    ['src/sum.tsx', "printf 'export const sum = () => 3;\\n' > src/sum.tsx"],
    ['src/keep/both/index.ts', "mkdir -p src/keep/both && printf 'export const both = 2;\\n' > src/keep/both/index.ts"],
  ])(
    'nor %s',
    async (file, script) => {
      expect(await turn('driver', 'green', script, [FROZEN])).toEqual([`${file}: ${SHADOW}`]);
    },
    30_000,
  );

  it('nor the navigator, in RED', async () => {
    expect(
      await turn(
        'navigator',
        'red',
        `printf '!src/sum.js\\n' >> .gitignore && printf 'exports.sum = () => 3;\\n' > src/sum.js && echo '// t' >> ${FROZEN}`,
        [],
      ),
    ).toContain(`src/sum.js: ${SHADOW}`);
  }, 30_000);

  it("an honest GREEN is the driver's: its .ts fixed (an ignored build output beside it is in no commit), a pair the base had", async () => {
    expect(
      await turn(
        'driver',
        'green',
        "printf 'export const sum = (a: number, b: number): number => a + b;\\n' > src/sum.ts && printf 'exports.sum = 0;\\n' > src/sum.js && printf 'export const both = 2;\\n' > src/keep/both.ts && printf 'exports.both = 2;\\n' > src/keep/both.js && printf 'export const d: number;\\n' > src/sum.d.ts",
        [FROZEN],
      ),
    ).toEqual([]);
  }, 30_000);
});

describe('compiled Python', () => {
  const FROZEN = 'tests/test_calc.py';
  beforeEach(() =>
    open('consort-pyc-', {
      '.gitignore': '__pycache__/\n*.pyc\njunit.xml\n',
      'pytest.ini': '[pytest]\npythonpath = src\n',
      'src/calc.py': 'def add(a, b):\n    return a - b\n',
      [FROZEN]: 'from calc import add\n\n\ndef test_adds():\n    assert add(1, 2) == 3\n',
      'migrations/.keep': '',
      '.github/consort.yml':
        'suite:\n  command: python3 -m pytest -q -p no:cacheprovider --junitxml=junit.xml tests\n  reports: junit.xml\nmigrations:\n  dir: migrations\n',
    }),
  );

  /** The real pytest on the work tree: its exit code. */
  async function pytest(): Promise<number> {
    // No bytecode of its own: what the turn commits is all there is.
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? dir,
      PYTHONDONTWRITEBYTECODE: '1',
    };
    try {
      await execFileAsync('python3', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], { cwd: dir, env });
      return 0;
    } catch (e) {
      return Number((e as ExecError).code);
    }
  }

  // The stub compiled outside the repository, written where python looks for calc.py's bytecode.
  const COMPILE = `d=$(mktemp -d) && printf 'def add(a, b):\\n    return 3\\n' > "$d/calc.py" && python3 -c "import py_compile, sys; py_compile.compile(sys.argv[1], cfile='src/__pycache__/calc.%s.pyc' % sys.implementation.cache_tag, dfile='src/calc.py', invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)" "$d/calc.py"`;

  it('the driver cannot commit an unchecked-hash .pyc that python imports in place of src/calc.py', async () => {
    expect(await pytest()).toBe(1);
    const refused = await turn('driver', 'green', `printf 'junit.xml\\n' > .gitignore && ${COMPILE}`, [FROZEN]);
    // The cheat is real: src/calc.py still subtracts, and the failing test passes.
    expect(await pytest()).toBe(0);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatch(/^src\/__pycache__\/calc\.[\w-]+\.pyc: /);
    expect(refused[0]).toContain(COMPILED);
  }, 120_000);

  it('nor a package src/calc/ beside src/calc.py, which python imports first', async () => {
    expect(await pytest()).toBe(1);
    const refused = await turn(
      'driver',
      'green',
      "mkdir -p src/calc && printf 'def add(a, b):\\n    return 3\\n' > src/calc/__init__.py",
      [FROZEN],
    );
    // The cheat is real: src/calc.py still subtracts, and the failing test passes.
    expect(await pytest()).toBe(0);
    expect(refused).toEqual([`src/calc/__init__.py: ${SHADOW}`]);
  }, 120_000);

  it('nor an extension module beside src/calc.py (imported before the source)', async () => {
    expect(
      await turn(
        'driver',
        'green',
        "printf 'ELF' > src/calc.cpython-311-x86_64-linux-gnu.so && printf 'x' > src/calc.abi3.so",
        [FROZEN],
      ),
    ).toEqual([`src/calc.abi3.so: ${SHADOW}`, `src/calc.cpython-311-x86_64-linux-gnu.so: ${SHADOW}`]);
  }, 30_000);

  it("an honest GREEN is the driver's: src/calc.py fixed, a new module beside it", async () => {
    expect(
      await turn(
        'driver',
        'green',
        "printf 'def add(a, b):\\n    return a + b\\n' > src/calc.py && printf 'X = 1\\n' > src/calcs.py",
        [FROZEN],
      ),
    ).toEqual([]);
    expect(await pytest()).toBe(0);
  }, 120_000);

  it('nor a sourceless .pyc, in any step', async () => {
    expect(
      await turn(
        'navigator',
        'red',
        `printf '' > .gitignore && printf 'x' > src/helper.pyc && echo '# t' >> ${FROZEN}`,
        [FROZEN],
      ),
    ).toContain(`src/helper.pyc: ${COMPILED}`);
  }, 30_000);
});
