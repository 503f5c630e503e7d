/**
 * The parts of the test harness judged by content rather than by path (the path globs are
 * DEFAULT_HARNESS in src/conductor/roles.ts):
 *
 * - `package.json` is the driver's to change (dependencies), but its keys that decide how the
 *   suite runs — `scripts` (`"test": "exit 0"`), the runner's own key (`jest.testPathIgnorePatterns`,
 *   `passWithNoTests`, `moduleNameMapper` to an in-memory double), `babel` (babel-jest compiles every
 *   test with it: a plugin in `src/` could empty each `expect`), `jest-junit`, `imports`, `overrides` —
 *   are test-owned; so are the runner sections of `pyproject.toml`, `setup.cfg`, `Cargo.toml`,
 *   `go.mod` and `deno.json` (src/lanes/tdd/manifest-sections.ts);
 * - a data file a frozen test reads (its expected values in `expected.json`) is as frozen as the test,
 *   and so is one any older test of the base reads (it must keep passing on the code, not on new data)
 *   or a harness file reads (a setup file's `config/test.json`), however the name is spelled
 *   (dataReferences: template literals, f-strings, `require('../data/expected')`);
 * - a module a test imports from a test folder (`test/helpers.js`, `test/expected.js`) when a narrower
 *   `build.tests` leaves it out (src/lanes/tdd/test-support.ts);
 * - a committed file `suite.command` (or a package.json script it runs) names — `scripts/test.sh`,
 *   a config passed as `--config=…` — is harness, and one a `seed.command` names is locked;
 * - a top-level Python module or package named like one python finds outside the repository:
 *   `python -m pytest` (or `-m unittest`) puts the repository's root first on `sys.path`, and pytest's
 *   rootdir insertion or `pythonpath = src` any folder without an `__init__.py`, so a `pytest.py`,
 *   `_pytest/`, `pluggy/` or `xml/` there is imported in place of the runner and can forge its JUnit
 *   report (pythonShadows, asked of the python the suite command runs: suite-python.ts);
 * - any file in a virtualenv the repository holds (a folder with a `pyvenv.cfg`), whose python,
 *   scripts and packages a suite such as `.venv/bin/python -m pytest` runs (virtualenvChanges).
 *
 * The driver reports such paths as `facts.testOwned`; the scope check refuses them outside RED.
 */
import { execFile } from 'node:child_process';
import { access, lstat, readdir, readlink, realpath, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { childEnv } from '../../core/child-env.js';
import { readRegularFile } from '../../core/read-regular.js';
import type { ConsortConfig } from '../../config/schema.js';
import { matchesAny } from '../../core/glob.js';
import type { FileChange } from '../../conductor/events.js';
import { DEFAULT_HARNESS, RUNNER_CONFIGS, VITE_CONFIG } from '../../conductor/roles.js';
import type { Workspace } from '../../ports/workspace.js';
import { manifestKind, manifestsChanged, PACKAGE_RUNNER_KEYS } from './manifest-sections.js';
import { readText } from './store.js';
import { suitePython } from './suite-python.js';
import { importedByTests, supportCandidates } from './test-support.js';

/**
 * Extensions of files a test reads as data (code it imports is production code, judged by the
 * proof): text and structured data, configuration formats (`.toml`, `.ini`, `.cfg`, `.properties`),
 * expected outputs, images and archives a test compares against.
 */
const DATA =
  /\.(json|jsonc|json5|jsonl|ndjson|csv|tsv|txt|ya?ml|toml|ini|cfg|conf|properties|xml|sql|html?|md|snap|env|golden|expected|out|dat|bin|diff|patch|pem|crt|svg|png|jpe?g|gif|pdf|gz|zip|tar)$/i;

/** Where a string splits into pieces that may each name a file: `${…}`, `{…}` (f-strings, `format`), `%s` (not blanks: `'see README.md'` names no file). */
const INTERPOLATION = /\$\{[^}]*\}|\{[^}]*\}|%[sdr]/;

/** A relative module specifier without an extension (`require('../data/expected')`), which resolves to a `.json` too. */
const BARE_RELATIVE = /^\.{1,2}\/(?:[^/]+\/)*[^./][^./]*$/;

/**
 * String literals in a test (or in a harness file) that name a data file, normalized (`./`, `../`
 * dropped): quoted strings, and the pieces of a template literal or an f-string between its
 * interpolations (`${__dirname}/../data/expected.json` names `data/expected.json`). With `from`,
 * the file's own path, a relative module specifier without an extension is read as node and jest
 * resolve it: `require('../data/expected')` loads `data/expected.json` when there is no `.js`.
 */
export function dataReferences(source: string, from?: string): string[] {
  const refs = new Set<string>();
  const add = (literal: string) => {
    const name = literal.trim().replace(/^\/+/, '');
    // A bare extension (the `.json` of `${name}.json`) names no file.
    if (!DATA.test(name) || path.posix.basename(name).replace(DATA, '') === '') return;
    refs.add(name.replace(/^(\.{1,2}\/)+/, ''));
  };
  for (const m of source.matchAll(/(['"])([^'"`\n]{1,300})\1|`([^`]{1,2000})`/g)) {
    const literal = m[2] ?? m[3]!;
    if (m[2] !== undefined && !/[${}]/.test(literal)) add(literal);
    for (const piece of literal.split(INTERPOLATION)) if (piece) add(piece);
    if (from !== undefined && m[2] !== undefined && BARE_RELATIVE.test(literal)) {
      const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(from), literal));
      if (resolved !== '..' && !resolved.startsWith('../')) refs.add(`${resolved}.json`);
    }
  }
  return [...refs];
}

/** Harness paths that hold installed programs rather than the tests' own code: not read for the data they name. */
const INSTALLS = [
  '**/.yarn/**',
  '**/.pnp.*',
  '**/site-packages/**',
  '**/dist-packages/**',
  '**/*.dist-info/**',
  '**/*.egg-info/**',
];

function referenced(changed: string, refs: readonly string[]): boolean {
  return refs.some(
    (ref) =>
      changed === ref || changed.endsWith(`/${ref}`) || (!ref.includes('/') && path.posix.basename(changed) === ref),
  );
}

export async function testOwnedChanges(
  ws: Workspace,
  base: string,
  changes: readonly FileChange[],
  frozenTests: readonly string[],
  /** `build.tests`: the data files every test of the base reads are as test-owned as the frozen tests'. */
  testGlobs: readonly string[] = [],
  /** The suite's command, whose python pythonShadows asks; without, every new top-level Python module is test-owned. */
  suite: Pick<ConsortConfig['suite'], 'command' | 'passEnv'> | null = null,
): Promise<string[]> {
  const owned = new Set<string>(await manifestsChanged(ws, base, changes));
  const refs: string[] = [];
  for (const test of frozenTests) refs.push(...dataReferences((await readText(path.join(ws.dir, test))) ?? '', test));
  for (const change of changes)
    if (!frozenTests.includes(change.path) && referenced(change.path, refs)) owned.add(change.path);
  // A test from before the feature (not frozen, but it must keep passing) whose expected values the
  // driver rewrites along with the code passes on a regression. Its test file cannot change outside
  // RED, so the work tree's copy is the base's wherever the turn is not refused for that anyway.
  // The same holds for the harness itself: a setup file, a runner config or a script `suite.command`
  // runs that reads `config/test.json` (a flag that makes every assertion lenient) decides the run
  // through that file as much as through its own text, which the driver cannot change.
  const data = changes.filter(
    (c) =>
      DATA.test(c.path) && manifestKind(c.path) === undefined && !owned.has(c.path) && !matchesAny(c.path, testGlobs),
  );
  if (data.length > 0) {
    const tracked = await trackedAt(ws, base);
    const touched = new Set(changes.map((c) => c.path));
    const run =
      suite === null ? [] : commandFiles(suite.command, await textAtBase(ws, base, 'package.json', touched), tracked);
    const named = await harnessNamed(ws, base, touched);
    const sources = [...tracked].filter(
      (f) =>
        !frozenTests.includes(f) &&
        !DATA.test(f) &&
        !matchesAny(f, INSTALLS) &&
        // The app's own build config names the app's files (`rollupOptions.input: 'index.html'`).
        !matchesAny(f, [VITE_CONFIG]) &&
        (matchesAny(f, testGlobs) || matchesAny(f, DEFAULT_HARNESS) || matchesAny(f, run) || named.has(f)),
    );
    // What a test names counts wherever a file of that name lies (tests read fixtures by a path built
    // at run time); what the harness names, only at the path it gives, from the root or its own
    // folder: a setup file's `config/test.json`, not every `index.html` or `README.md` in the tree.
    const older: string[] = [];
    const atPaths = new Set<string>();
    for (const source of sources) {
      const found = dataReferences((await textAtBase(ws, base, source, touched)) ?? '', source);
      if (matchesAny(source, testGlobs)) older.push(...found);
      else
        for (const ref of found) {
          atPaths.add(ref);
          atPaths.add(path.posix.normalize(path.posix.join(path.posix.dirname(source), ref)));
        }
    }
    for (const change of data) if (referenced(change.path, older) || atPaths.has(change.path)) owned.add(change.path);
  }
  for (const support of await testSupport(ws, base, changes, frozenTests, testGlobs)) owned.add(support);
  for (const named of await namedByHarness(ws, base, changes)) owned.add(named);
  for (const shadow of await pythonShadows(ws, base, changes, suite)) owned.add(shadow);
  for (const file of await virtualenvChanges(ws.dir, changes)) owned.add(file);
  return [...owned].sort();
}

/** Changed test support modules (test-support.ts) that a frozen test, or any test of the base, imports. */
async function testSupport(
  ws: Pick<Workspace, 'dir' | 'filesUnder' | 'fileAt'>,
  base: string,
  changes: readonly FileChange[],
  frozenTests: readonly string[],
  testGlobs: readonly string[],
): Promise<string[]> {
  const candidates = supportCandidates(changes, testGlobs);
  if (candidates.length === 0) return [];
  const touched = new Set(changes.map((c) => c.path));
  const older = [...(await trackedAt(ws, base))].filter((f) => matchesAny(f, testGlobs) && !frozenTests.includes(f));
  const tests = await Promise.all([
    ...frozenTests.map(async (f) => ({ path: f, text: (await readText(path.join(ws.dir, f))) ?? '' })),
    ...older.map(async (f) => ({ path: f, text: (await textAtBase(ws, base, f, touched)) ?? '' })),
  ]);
  return importedByTests(candidates, tests);
}

/** The last few commits' tracked files (a commit is immutable: its sha names its whole tree), by workspace. */
const trackedMemo = new Map<string, Promise<Set<string>>>();
const TRACKED_MEMO_MAX = 8;

/**
 * The files tracked at `base` (relative to the workspace), read once per commit: a turn's judge
 * asks for them from several checks (runner configs, module namesakes, older tests' data), each a
 * git process otherwise. Only a commit's sha is remembered; anything else is read afresh.
 */
export function trackedAt(ws: Pick<Workspace, 'dir' | 'filesUnder'>, base: string): Promise<Set<string>> {
  if (!/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(base)) return ws.filesUnder(base, '.').then((f) => new Set(f));
  const key = `${ws.dir}\0${base}`;
  let known = trackedMemo.get(key);
  if (known === undefined) {
    known = ws.filesUnder(base, '.').then((f) => new Set(f));
    known.catch(() => trackedMemo.delete(key));
    trackedMemo.set(key, known);
    if (trackedMemo.size > TRACKED_MEMO_MAX) trackedMemo.delete(trackedMemo.keys().next().value!);
  }
  return known;
}

/**
 * A file's text at `base`: from the work tree when the turn did not change it and it is a regular
 * file there (the same bytes, without a git process), else from the commit.
 */
async function textAtBase(
  ws: Pick<Workspace, 'dir' | 'fileAt'>,
  base: string,
  file: string,
  changed: ReadonlySet<string>,
): Promise<string | null> {
  if (!changed.has(file)) {
    const here = readRegularFile(path.join(ws.dir, file), { follow: false });
    if (here !== null) return here.toString('utf8');
  }
  return ws.fileAt(base, file);
}

/** A file name a vite config names that is test support (`setupFiles: './src/setupTests.ts'`), not the app's. */
const TEST_SUPPORT =
  /setup|teardown|reporter|environment|serializer|resolver|sequencer|transform|mock|matchers|global/i;
/** package.json's runner keys that name files the runner loads (not `scripts`: commandFiles; not `imports`, which names the code). */
const PACKAGE_NAMING_KEYS = PACKAGE_RUNNER_KEYS.filter((k) =>
  ['jest', 'mocha', 'ava', 'vitest', 'tap', 'c8', 'nyc', 'babel', 'jest-junit'].includes(k),
);
const CODE_EXTENSIONS = ['.js', '.cjs', '.mjs', '.ts', '.cts', '.mts', '.jsx', '.tsx', '.json'];
/**
 * Runner settings that name the code under test or the tests, not files the runner loads into them:
 * coverage's files and thresholds (`coverageThreshold: { './src/sum.js': … }`), where modules and
 * tests are looked for. What they name stays the driver's (or the tests') to change.
 */
const NAMES_THE_CODE = [
  'collectCoverageFrom',
  'coverageThreshold',
  'coveragePathIgnorePatterns',
  'forceCoverageMatch',
  'coverage',
  'include',
  'exclude',
  'all',
  'roots',
  'modulePaths',
  'moduleDirectories',
  'modulePathIgnorePatterns',
  'testMatch',
  'testRegex',
  'testPathIgnorePatterns',
  'transformIgnorePatterns',
  'watchPathIgnorePatterns',
  'spec',
  'ignore',
  'extension',
  'files',
  'sources',
];
const CODE_KEY = new RegExp(`(?:^|[\\s,{])(['"]?)(?:${NAMES_THE_CODE.join('|')})\\1\\s*:\\s*`, 'g');

/**
 * `text` without the values of NAMES_THE_CODE's keys: a bracketed value (`[…]`, `{…}`) to its
 * matching bracket, else a quoted string, else the rest of the line (a YAML value, or YAML's list
 * items under the key).
 */
export function withoutCodeSettings(text: string): string {
  let out = '';
  let from = 0;
  CODE_KEY.lastIndex = 0;
  for (let m = CODE_KEY.exec(text); m !== null; m = CODE_KEY.exec(text)) {
    const start = m.index + m[0].length;
    if (start < from) continue;
    out += text.slice(from, start);
    const open = text[start];
    let end: number;
    if (open === '[' || open === '{') {
      let depth = 0;
      let quote: string | null = null;
      for (end = start; end < text.length; end++) {
        const c = text[end]!;
        if (quote) {
          if (c === '\\') end++;
          else if (c === quote) quote = null;
        } else if (c === '"' || c === "'" || c === '`') quote = c;
        else if (c === '[' || c === '{') depth++;
        else if ((c === ']' || c === '}') && --depth === 0) {
          end++;
          break;
        }
      }
    } else if (open === '"' || open === "'" || open === '`') {
      const close = text.indexOf(open, start + 1);
      end = close < 0 ? text.length : close + 1;
    } else {
      // YAML: the rest of the line, and the `- item` lines under it.
      const line = text.indexOf('\n', start);
      end = line < 0 ? text.length : line;
      const items = /^(?:\n[ \t]*-[^\n]*)*/.exec(text.slice(end));
      end += items ? items[0].length : 0;
    }
    from = end;
    CODE_KEY.lastIndex = end;
  }
  return out + text.slice(from);
}

/**
 * Changed files the base's runner configuration names: a jest config's `setupFilesAfterEnv:
 * ['<rootDir>/src/setupTests.js']`, a reporter, a test environment, a babel plugin in `src/`. The
 * runner loads them into every test, so what they say decides the run as much as the config
 * itself (a `jest.mock('./sum', () => …)` there is a double for the code under test). Read as string
 * literals of the config (`<rootDir>/`, `./` dropped; relative to the config's folder, then to the
 * root; with or without a code extension), one level deep: what such a file imports is not followed.
 */
export async function namedByHarness(
  ws: Pick<Workspace, 'dir' | 'filesUnder' | 'fileAt'>,
  base: string,
  changes: readonly FileChange[],
): Promise<string[]> {
  const changed = changes.filter((c) => !c.path.startsWith('../') && !c.path.startsWith('~/')).map((c) => c.path);
  if (changed.length === 0) return [];
  const named = await harnessNamed(ws, base, new Set(changes.map((c) => c.path)));
  return changed.filter((c) => named.has(c));
}

/**
 * Every path the base's runner configuration names (namedByHarness), with and without a code
 * extension, relative to the config's folder and to the root: candidates, not all of them files.
 */
async function harnessNamed(
  ws: Pick<Workspace, 'dir' | 'filesUnder' | 'fileAt'>,
  base: string,
  touched: ReadonlySet<string>,
): Promise<Set<string>> {
  const tracked = [...(await trackedAt(ws, base))];
  const configs = tracked.filter(
    (f) => matchesAny(f, RUNNER_CONFIGS) || matchesAny(f, [VITE_CONFIG]) || path.posix.basename(f) === 'package.json',
  );
  const named = new Set<string>();
  for (const config of configs) {
    let text = (await textAtBase(ws, base, config, touched)) ?? '';
    if (path.posix.basename(config) === 'package.json') {
      try {
        const json = JSON.parse(text.replace(/^\uFEFF/, '')) as Record<string, unknown>;
        text = JSON.stringify(PACKAGE_NAMING_KEYS.map((k) => (Object.hasOwn(json, k) ? json[k] : null)));
      } catch {
        continue;
      }
    }
    text = withoutCodeSettings(text);
    const vite = matchesAny(config, [VITE_CONFIG]);
    const folder = path.posix.dirname(config);
    // Quoted strings, and file names a YAML config (`.mocharc.yml`: `require: test/setup.js`) leaves bare.
    const literals = [
      ...[...text.matchAll(/(['"`])([^'"`\n$*]{1,200})\1/g)].map((m) => m[2]!),
      ...[...text.matchAll(/[\w./@<>-]{1,200}\.(?:[cm]?[jt]s|[jt]sx|json)\b/g)].map((m) => m[0]),
    ];
    for (const raw of literals) {
      const literal = raw.trim().replace(/^<rootDir>\//, '');
      if (literal === '' || literal.startsWith('/')) continue;
      if (vite && !TEST_SUPPORT.test(path.posix.basename(literal))) continue;
      for (const from of [folder, '.'])
        for (const ext of ['', ...CODE_EXTENSIONS])
          named.add(path.posix.normalize(path.posix.join(from, literal + ext)));
    }
  }
  return named;
}

/**
 * Changed paths inside a virtualenv the repository holds: a folder below the root with a
 * `pyvenv.cfg` (in the work tree, or one the turn added, changed or removed). Its python, its
 * scripts and its packages are what a suite command such as `.venv/bin/python -m pytest` runs.
 * Its `pyvenv.cfg`, `.pth` files and site-packages are harness by path (DEFAULT_HARNESS); this
 * covers the rest (`bin/activate`, `bin/pytest`, a `lib64` link).
 */
export async function virtualenvChanges(dir: string, changes: readonly FileChange[]): Promise<string[]> {
  const inside = (p: string) => !p.startsWith('../') && !p.startsWith('~/');
  const roots = new Set(
    changes
      .filter((c) => inside(c.path) && path.posix.basename(c.path) === 'pyvenv.cfg')
      .map((c) => path.posix.dirname(c.path)),
  );
  const known = new Map<string, boolean>();
  const isVirtualenv = async (folder: string): Promise<boolean> => {
    let is = known.get(folder);
    if (is === undefined) {
      is =
        roots.has(folder) ||
        (await lstat(path.join(dir, folder, 'pyvenv.cfg')).then(
          () => true,
          () => false,
        ));
      known.set(folder, is);
    }
    return is;
  };
  const owned: string[] = [];
  for (const change of changes) {
    if (!inside(change.path)) continue;
    for (let folder = path.posix.dirname(change.path); folder !== '.'; folder = path.posix.dirname(folder))
      if (await isVirtualenv(folder)) {
        owned.push(change.path);
        break;
      }
  }
  return owned;
}

/** A file python imports a module from: `name.py`, `name.cpython-311-x86_64-linux-gnu.so`, … */
const PYTHON_MODULE = /^([A-Za-z_][A-Za-z0-9_]*)(?:\.[^/]*)?\.(?:py|pyc|pyw|so|pyd)$/;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The top-level name a changed Python file is imported under when its folder is on `sys.path` — the
 * module itself, or the outermost package (folders with an `__init__.py`) it belongs to — and that
 * module's or package's path.
 */
async function topLevel(dir: string, file: string): Promise<{ name: string; path: string } | null> {
  const parts = file.split('/');
  const module = PYTHON_MODULE.exec(parts.at(-1)!)?.[1];
  if (module === undefined) return null;
  let top = module === '__init__' ? null : { name: module, path: file };
  let depth = parts.length - 1;
  while (depth > 0) {
    const init = path.join(dir, ...parts.slice(0, depth), '__init__.py');
    if (
      !(await access(init).then(
        () => true,
        () => false,
      ))
    )
      break;
    top = { name: parts[depth - 1]!, path: parts.slice(0, depth).join('/') };
    depth -= 1;
  }
  return top !== null && IDENTIFIER.test(top.name) ? top : null;
}

/**
 * Test runners' own modules: shadowing ones even where the probe's python lacks them (a user install,
 * which the probe does not read, or a virtualenv it does not see).
 */
const RUNNER_MODULES = ['pytest', '_pytest', 'pluggy', 'py', 'iniconfig', 'unittest', 'nose2', 'xdist', 'hypothesis'];

/**
 * Which names python finds outside `root` (standard library, site-packages, built in). `argv[2]`:
 * a virtualenv in `root` whose site-packages count (the suite's python is its), with the folders
 * its `.pth` files list (their `import` lines are never run); `argv[3:]`: the names.
 */
const PROBE = `import importlib.util, json, os, sys
root = os.path.realpath(sys.argv[1])
venv = sys.argv[2]
inside = lambda p: not p or os.path.realpath(p) == root or os.path.realpath(p).startswith(root + os.sep)
sys.path = [p for p in sys.path if not inside(p)]
if venv:
    for site in (os.path.join(venv, 'lib', 'python%d.%d' % sys.version_info[:2], 'site-packages'), os.path.join(venv, 'Lib', 'site-packages')):
        if not os.path.isdir(site):
            continue
        sys.path.append(site)
        for pth in sorted(n for n in os.listdir(site) if n.endswith('.pth')):
            try:
                lines = open(os.path.join(site, pth), encoding='utf-8', errors='replace').read().splitlines()
            except OSError:
                continue
            for line in lines:
                if not line.strip() or line.startswith('#') or line.startswith(('import ', 'import\\t')):
                    continue
                p = os.path.join(site, line.rstrip())
                if os.path.exists(p) and not inside(p):
                    sys.path.append(p)
def found(n):
    if n in sys.builtin_module_names or n in getattr(sys, 'stdlib_module_names', ()):
        return True
    try:
        return importlib.util.find_spec(n) is not None
    except Exception:
        return True
print(json.dumps([n for n in sys.argv[3:] if found(n)]))
`;

/**
 * Changed paths of a new top-level Python module or package (one the base does not have) that python
 * finds outside the workspace too. A module or package the base has is the project's own (an
 * editable install finds it, rightly). Asked of the python `suite.command` runs (suite-python.ts:
 * `python3 -m pytest` the `python3` on the conductor's PATH as it was when Consort started,
 * `.venv/bin/python -m pytest` the interpreter that virtualenv links to, with its site-packages),
 * in isolated mode, with the runners' own module names added. When the command does not say which
 * python it runs (`uv run pytest`, `poetry run pytest`, `npm test`), or that python cannot be
 * asked, every such new module is test-owned, since nothing can say which are safe.
 */
export async function pythonShadows(
  ws: Workspace,
  base: string,
  changes: readonly FileChange[],
  suite: Pick<ConsortConfig['suite'], 'command' | 'passEnv'> | null,
): Promise<string[]> {
  const byName = new Map<string, string[]>();
  const known = new Map<string, boolean>();
  for (const change of changes) {
    if (change.status === 'deleted' || change.path.startsWith('../')) continue;
    const top = await topLevel(ws.dir, change.path);
    if (top === null) continue;
    if (!known.has(top.path))
      known.set(
        top.path,
        top.path === change.path
          ? (await trackedAt(ws, base)).has(top.path)
          : [...(await trackedAt(ws, base))].some((f) => f.startsWith(`${top.path}/`)),
      );
    if (known.get(top.path)) continue;
    byName.set(top.name, [...(byName.get(top.name) ?? []), change.path]);
  }
  if (byName.size === 0) return [];
  let found: string[] = [...byName.keys()];
  const python = suite === null ? null : await suitePython(suite, ws.dir);
  if (python !== null) {
    try {
      // -I: no PYTHON* variables, no user site-packages (the home folder is untrusted code's to write:
      // a .pth file there would run here, outside any sandbox), no current folder on sys.path.
      const { stdout } = await promisify(execFile)(
        python.program,
        [...python.flags, '-c', PROBE, ws.dir, python.venv ?? '', ...byName.keys()],
        {
          cwd: os.tmpdir(),
          env: childEnv({}),
          timeout: 30_000,
        },
      );
      found = JSON.parse(stdout) as string[];
    } catch {
      // No such python to ask (or it failed): refuse them all rather than guess which are safe.
    }
  }
  for (const name of RUNNER_MODULES) if (byName.has(name) && !found.includes(name)) found.push(name);
  return found.flatMap((name) => byName.get(name) ?? []);
}

/** `npm test`, `npm run x`, `yarn x`, `pnpm run x`, `bun run x`: the package.json scripts a command runs. */
function scriptsRun(command: string): string[] {
  const names: string[] = [];
  const re = /\b(npm|yarn|pnpm|bun)\s+(?:(?:run|run-script)\s+([\w:.-]+)|(test|t|start)\b|([\w:.-]+))/g;
  for (const m of command.matchAll(re)) {
    const name = m[2] ?? (m[3] === undefined ? undefined : m[3] === 't' ? 'test' : m[3]);
    if (name !== undefined) names.push(name);
    // `yarn jest`, `pnpm vitest`: a script of that name if there is one.
    else if (m[1] !== 'npm' && m[4] !== undefined && !['install', 'add', 'exec', 'dlx', 'x'].includes(m[4]))
      names.push(m[4]);
  }
  return names.flatMap((n) => [`pre${n}`, n, `post${n}`]);
}

/** Words of a shell command that could name a file: split at blanks and operators, quotes and `--flag=` dropped. */
function words(command: string): string[] {
  return command
    .split(/[\s;&|()<>]+/)
    .map((w) => w.replace(/^['"]|['"]$/g, ''))
    .flatMap((w) => (w.includes('=') ? [w, w.slice(w.indexOf('=') + 1)] : [w]))
    .map((w) => path.posix.normalize(w.replace(/^\.\//, '')))
    .filter((w) => w && !w.startsWith('-') && !w.startsWith('/') && !w.startsWith('../') && !/[*?{}[\]!]/.test(w));
}

/**
 * Programs that read files of the repository without being told their names: `make test` runs the
 * Makefile's `test` target (and what it includes; GNU make prefers a `GNUmakefile` or `makefile`
 * the driver adds beside it), `just`, `task`, `nox`, `rake` and `invoke` their own files. Keyed by
 * the program's name (a word of the command, or the module of `python -m nox`); the globs hold
 * every file of those names in any folder (`make -C web`), present or added later.
 */
const MAKEFILES = ['**/GNUmakefile', '**/makefile', '**/Makefile', '**/*.mk'];
const TASKFILES = ['**/[Tt]askfile.yml', '**/[Tt]askfile.yaml', '**/[Tt]askfile.dist.yml', '**/[Tt]askfile.dist.yaml'];
const IMPLICIT_FILES: Record<string, readonly string[]> = {
  make: MAKEFILES,
  gmake: MAKEFILES,
  just: ['**/[Jj][Uu][Ss][Tt][Ff][Ii][Ll][Ee]', '**/.[Jj][Uu][Ss][Tt][Ff][Ii][Ll][Ee]'],
  task: TASKFILES,
  'go-task': TASKFILES,
  nox: ['**/noxfile.py'],
  rake: ['**/[Rr]akefile', '**/[Rr]akefile.rb', '**/rakelib/**'],
  invoke: ['**/tasks.py', '**/invoke.{yaml,yml,json,py}'],
};

/** The programs of IMPLICIT_FILES a command names (as a word, or by a path ending in the name). */
function implicitPrograms(command: string): string[] {
  return command
    .split(/[\s;&|()<>]+/)
    .map((w) => path.posix.basename(w.replace(/^['"]|['"]$/g, '')))
    .filter((w) => Object.hasOwn(IMPLICIT_FILES, w));
}

/**
 * Committed files a command runs or reads, by name: its own words, and those of the package.json
 * scripts it runs (and the scripts those run), and globs of the files a program it runs reads
 * unnamed (IMPLICIT_FILES: the Makefiles of `make test`). `suite.command: sh scripts/test.sh` makes
 * `scripts/test.sh` part of the harness (a driver's `exit 0` there would prove anything);
 * `seed.command: node db/seed.js` makes `db/seed.js` as locked as a seed file. `tracked` is the
 * base commit's file list, relative to the workspace; `packageJson` its package.json.
 */
export function commandFiles(command: string, packageJson: string | null, tracked: ReadonlySet<string>): string[] {
  let scripts: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(packageJson ?? '{}') as { scripts?: unknown };
    if (parsed.scripts !== null && typeof parsed.scripts === 'object')
      scripts = parsed.scripts as Record<string, unknown>;
  } catch {
    // An unparseable package.json runs no script.
  }
  const files = new Set<string>();
  const seen = new Set<string>();
  const queue = [command];
  while (queue.length > 0) {
    const text = queue.shift()!;
    for (const w of words(text)) if (tracked.has(w)) files.add(w);
    for (const program of implicitPrograms(text)) for (const glob of IMPLICIT_FILES[program]!) files.add(glob);
    for (const name of scriptsRun(text)) {
      const script = scripts[name];
      if (typeof script !== 'string' || seen.has(name)) continue;
      seen.add(name);
      queue.push(script);
    }
  }
  return [...files].sort();
}

/** The files `suite.command` runs (harness) and a `seed.command` runs (locked), as of the base commit. */
export async function commandPaths(
  ws: Pick<Workspace, 'filesUnder' | 'fileAt'>,
  base: string,
  config: Pick<ConsortConfig, 'suite' | 'database'>,
): Promise<{ harness: string[]; locked: string[] }> {
  const tracked = new Set(await ws.filesUnder(base, '.'));
  const packageJson = await ws.fileAt(base, 'package.json');
  const seed = config.database.seed;
  return {
    harness: commandFiles(config.suite.command, packageJson, tracked),
    locked: seed?.kind === 'command' ? commandFiles(seed.command, packageJson, tracked) : [],
  };
}

/**
 * Changed paths that are symbolic links leading out of the workspace (an absolute target, `..` past
 * its top) or into `.git`: a proof's worktree checks them out as links, so the suite would run what
 * they lead to, which no commit holds (a fix the agent wrote elsewhere; a test's content left free
 * to change after RED froze its path). Read lexically, as written: a link inside the tree to another
 * changed link is judged on its own.
 */
export async function linksLeaving(dir: string, changes: readonly FileChange[]): Promise<string[]> {
  const leaving: string[] = [];
  for (const change of changes) {
    if (change.status === 'deleted' || change.path.startsWith('../') || change.path.startsWith('~/')) continue;
    const target = await readlink(path.join(dir, change.path)).catch(() => null);
    if (target === null) continue;
    const to = path.posix.normalize(path.posix.join(path.posix.dirname(change.path), target));
    if (path.posix.isAbsolute(target) || to === '..' || to.startsWith('../') || to === '.git' || to.startsWith('.git/'))
      leaving.push(change.path);
  }
  return leaving.sort();
}

/**
 * Where each changed link inside the workspace leads, relative to the workspace: followed as the
 * kernel follows it (through links in its folders and chains of links; a dangling one as written),
 * a folder's path with a trailing `/`. A link at a test-owned path that leads to a file the driver
 * writes (`test/fixtures/expected.json` → `data/values.json`) would leave the test's expected
 * values free to change after RED froze its path (src/conductor/scope.ts). Links leading out of
 * the workspace are linksLeaving's.
 */
export async function linkTargets(dir: string, changes: readonly FileChange[]): Promise<Record<string, string>> {
  const targets: Record<string, string> = {};
  const top = await realpath(dir).catch(() => path.resolve(dir));
  for (const change of changes) {
    if (change.status === 'deleted' || change.path.startsWith('../') || change.path.startsWith('~/')) continue;
    const full = path.join(dir, change.path);
    const target = await readlink(full).catch(() => null);
    if (target === null) continue;
    const real = await realpath(full).catch(() => path.resolve(path.dirname(full), target));
    const rel = path.relative(top, real).split(path.sep).join('/');
    if (rel === '' || rel === '..' || rel.startsWith('../') || path.isAbsolute(rel)) continue;
    const folder = await stat(real).then(
      (st) => st.isDirectory(),
      () => false,
    );
    targets[change.path] = folder ? `${rel}/` : rel;
  }
  return targets;
}

/**
 * Module files by family, with the name an import finds them by and their folder module's file:
 * JavaScript and TypeScript (not declarations), what `import '../src/sum'` may resolve to, and
 * Python, where an extension module (`calc.cpython-311-x86_64-linux-gnu.so`, `calc.abi3.so`) is
 * imported before `calc.py`, and a package `calc/__init__.py` before both.
 */
const FAMILIES = [
  { module: /^(.+)\.(?:[cm]?[jt]s|[jt]sx)$/, not: /\.d\.[cm]?ts$/, index: 'index' },
  { module: /^([A-Za-z_][A-Za-z0-9_]*)(?:\.[^/]*)?\.(?:py|pyw|so|pyd)$/, not: /^$/, index: '__init__' },
];

function moduleStem(name: string): { family: number; stem: string } | undefined {
  for (const [family, f] of FAMILIES.entries()) {
    if (f.not.test(name)) continue;
    const stem = f.module.exec(name)?.[1];
    if (stem !== undefined) return { family, stem };
  }
  return undefined;
}

/** Modules in the work tree an import of `file`'s name could resolve to instead: `x.ts` for `x.js`, `x/index.ts`, `x.so` for `x.py`. */
async function namesakes(dir: string, file: string): Promise<string[]> {
  const folder = path.posix.dirname(file);
  const own = moduleStem(path.posix.basename(file));
  if (own === undefined) return [];
  const { family, stem } = own;
  const same = (name: string, wanted: string) => {
    const m = moduleStem(name);
    return m !== undefined && m.family === family && m.stem === wanted;
  };
  const list = (rel: string) => readdir(path.join(dir, rel)).catch(() => [] as string[]);
  const under = (rel: string, name: string) => (rel === '.' ? name : `${rel}/${name}`);
  const index = FAMILIES[family]!.index;
  const found: string[] = [];
  for (const name of await list(folder))
    if (name !== path.posix.basename(file) && same(name, stem)) found.push(under(folder, name));
  for (const name of await list(under(folder, stem)))
    if (same(name, index)) found.push(under(folder, `${stem}/${name}`));
  if (stem === index && folder !== '.') {
    const parent = path.posix.dirname(folder);
    for (const name of await list(parent)) if (same(name, path.posix.basename(folder))) found.push(under(parent, name));
  }
  return found;
}

/**
 * Changed modules that stand beside another one an import resolves by the same name, where the
 * base did not already hold both: `src/sum.js` added beside `src/sum.ts`, `src/calc.abi3.so` or
 * `src/calc/__init__.py` beside `src/calc.py`. Runners and builds resolve such a name differently —
 * jest tries `.js` before `.ts` (and so does a `moduleNameMapper` that strips `.js`, as ESM
 * TypeScript projects use), while `tsc` compiles `sum.ts` and ignores `sum.js` — so the proof would
 * run a stub the build never ships, with the bug still in `sum.ts`; python imports an extension
 * module (a binary nobody reads in the diff) before the source beside it. A pair the base already
 * had is the project's own, and an ignored file (a build's output beside its source) is in no commit.
 */
export async function modulesShadowing(
  ws: Pick<Workspace, 'dir' | 'filesUnder'>,
  base: string,
  changes: readonly FileChange[],
): Promise<string[]> {
  const shadowing: string[] = [];
  const kept = new Set(changes.filter((c) => c.status !== 'deleted').map((c) => c.path));
  let tracked: Set<string> | undefined;
  const had = async (p: string) => (tracked ??= await trackedAt(ws, base)).has(p);
  for (const change of changes) {
    if (change.status === 'deleted' || change.path.startsWith('../') || change.path.startsWith('~/')) continue;
    // Only committed namesakes count (the base's, or this turn's): an ignored build output beside its
    // source is in no proof's checkout.
    for (const other of await namesakes(ws.dir, change.path))
      if ((kept.has(other) || (await had(other))) && !((await had(change.path)) && (await had(other)))) {
        shadowing.push(change.path);
        break;
      }
  }
  return shadowing.sort();
}
