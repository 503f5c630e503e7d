/**
 * Manifests that hold both the driver's work (dependencies, metadata) and what decides how the suite
 * runs: each is judged by its runner's sections or keys only, and a change there is test-owned (the
 * rest of the file stays the driver's). What a manifest's reader cannot read, some tool may: any
 * change to such a text is a change.
 *
 * - `package.json`: `scripts`, the runners' own keys, `babel`, `imports`, `overrides`…
 * - `pyproject.toml`: `[tool.pytest]` (and `.ini_options`: `addopts = "-p plugin"` loads a module
 *   the driver wrote that turns every test into a pass; `python_files`, `testpaths`, `--deselect`),
 *   coverage's and tox's tables, the script runners' tasks (pdm, hatch's environments, poe, taskipy,
 *   rye) a `suite.command` may run, uv's dependency sources and pytest's `pytest11` entry points.
 *   Read with python's own TOML reader (`tomllib`, what pytest reads it with), by the `python3` on
 *   the conductor's PATH as Consort started (src/process/host-programs.ts) in isolated mode; without
 *   one, any change to the file is a change.
 * - `setup.cfg`: pytest's `[tool:pytest]`, coverage's `[coverage:*]`, tox's `[tox:tox]` and
 *   `[testenv*]`, read by lines (no python needed) so that neither pytest's reader (iniconfig) nor
 *   python's configparser can see a line of them that this does not.
 * - `Cargo.toml`: dev-dependencies (what a test imports), `[patch]`/`[replace]` (a crate a test uses,
 *   redirected to a copy the driver wrote), the test and bench targets (`harness = false`), `[lib]`,
 *   the test and bench profiles.
 * - `go.mod`: `replace` directives (`github.com/stretchr/testify => ./src/testify`).
 * - `deno.json`/`deno.jsonc`: `tasks`, `test`, `imports`/`importMap`/`scopes` (a test's assertion
 *   module mapped to a double), `compilerOptions`, `patch`/`links`, `workspace`, `vendor`.
 */
import { execFile } from 'node:child_process';
import { lstat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { childEnv } from '../../core/child-env.js';
import type { FileChange } from '../../conductor/events.js';
import type { Workspace } from '../../ports/workspace.js';
import { hostProgram } from '../../process/host-programs.js';
import { readText } from './store.js';

export const PACKAGE_RUNNER_KEYS = [
  'scripts',
  'jest',
  'mocha',
  'ava',
  'vitest',
  'tap',
  'c8',
  'nyc',
  'babel',
  'jest-junit',
  'imports',
  'type',
  'overrides',
  'resolutions',
  'pnpm',
  'workspaces',
  'packageManager',
] as const;

export const DENO_RUNNER_KEYS = [
  'tasks',
  'test',
  'imports',
  'importMap',
  'scopes',
  'compilerOptions',
  'patch',
  'links',
  'workspace',
  'vendor',
  'nodeModulesDir',
  'unstable',
] as const;

/** The tables of pyproject.toml a runner reads (dotted paths). */
export const PYPROJECT_RUNNER_TABLES = [
  'tool.pytest',
  'tool.coverage',
  'tool.tox',
  'tool.hatch.envs',
  'tool.pdm.scripts',
  'tool.poe',
  'tool.taskipy',
  'tool.rye.scripts',
  'tool.uv.sources',
  'project.entry-points.pytest11',
  'tool.poetry.plugins.pytest11',
] as const;

/** The tables of Cargo.toml that decide what a test builds against and how it runs. */
export const CARGO_RUNNER_TABLES = [
  'dev-dependencies',
  'dev_dependencies',
  'patch',
  'replace',
  'test',
  'bench',
  'lib',
  'profile.test',
  'profile.bench',
] as const;

/** setup.cfg sections a runner reads: pytest's, coverage's and tox's (case aside, anywhere in the name). */
const SETUP_CFG_RUNNER = /pytest|coverage|tox|testenv/i;

type Kind = 'package.json' | 'deno.json' | 'pyproject.toml' | 'setup.cfg' | 'Cargo.toml' | 'go.mod';

/** By lower-case name: on a case-insensitive file system `src/Package.json` is the `package.json` node reads. */
const KINDS: Record<string, Kind> = {
  'package.json': 'package.json',
  'deno.json': 'deno.json',
  'deno.jsonc': 'deno.json',
  'pyproject.toml': 'pyproject.toml',
  'setup.cfg': 'setup.cfg',
  'cargo.toml': 'Cargo.toml',
  'go.mod': 'go.mod',
};

/** Whether `file` is a manifest judged here (its name in any case). */
export function manifestKind(file: string): Kind | undefined {
  const name = path.posix.basename(file).toLowerCase();
  return Object.hasOwn(KINDS, name) ? KINDS[name] : undefined;
}

const unreadable = (text: string): string => `unparseable:${text}`;

function jsonKeys(text: string, keys: readonly string[]): string {
  try {
    // npm, node and deno read past a byte order mark; JSON.parse does not.
    const json = JSON.parse(text.replace(/^\uFEFF/, '')) as Record<string, unknown>;
    if (json === null || typeof json !== 'object' || Array.isArray(json)) return unreadable(text);
    return JSON.stringify(keys.map((k) => [k, Object.hasOwn(json, k) ? json[k] : null]));
  } catch {
    return unreadable(text);
  }
}

/**
 * setup.cfg's runner sections, line by line: every line from a header that names a runner up to a
 * header in the first column that both readers take for another section's (iniconfig: a line that
 * starts with `[` and, cut at `#` or `;`, ends in `]`; configparser: `[…]` on the stripped line).
 * An indented `[other]` inside a value is a continuation to one reader, so it ends nothing; lines
 * before any header are kept too.
 */
export function setupCfgSections(text: string): string {
  const kept: string[] = [];
  let runner = true;
  for (const line of text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/)) {
    const stripped = line.trim();
    if (stripped.startsWith('[')) {
      const names = [/^\[(.+)\]/.exec(stripped)?.[1]];
      if (line.startsWith('[')) {
        const cut = line.split('#')[0]!.split(';')[0]!.trimEnd();
        names.push(cut.endsWith(']') ? cut.slice(1, -1) : undefined);
      }
      if (names.some((n) => n !== undefined && SETUP_CFG_RUNNER.test(n))) runner = true;
      else if (line.startsWith('[') && names.every((n) => n !== undefined)) runner = false;
    }
    if (runner) kept.push(line);
  }
  return JSON.stringify(kept);
}

/**
 * go.mod's `replace` directives, one per line or in a `replace ( … )` block, comments dropped and
 * blanks collapsed; any other line with a `=>` (only a replacement has one) counts too.
 */
export function goModReplaces(text: string): string {
  const kept: string[] = [];
  let block = false;
  for (const raw of text.split(/\r\n|\r|\n/)) {
    const line = raw
      .replace(/\/\/.*$/, '')
      .trim()
      .replace(/\s+/g, ' ');
    if (block) {
      if (line === ')') block = false;
      else if (line !== '') kept.push(`replace ${line}`);
      continue;
    }
    if (/^replace\s*\($/.test(line)) block = true;
    else if (/^replace\b/.test(line) || line.includes('=>')) kept.push(line);
  }
  return JSON.stringify(kept.sort());
}

/** Reads TOML texts with python's own reader and prints each one's runner tables (null: unreadable). */
const TOML_PROJECTOR = `import json, sys
try:
    import tomllib
except ImportError:
    import tomli as tomllib
tables = json.loads(sys.argv[1])
def dig(doc, dotted):
    for key in dotted.split('.'):
        if not isinstance(doc, dict) or key not in doc:
            return None
        doc = doc[key]
    return doc
def project(kind, text):
    doc = tomllib.loads(text)
    out = [dig(doc, t) for t in tables[kind]]
    if kind == 'Cargo.toml':
        target = doc.get('target')
        out.append({t: [v.get('dev-dependencies'), v.get('dev_dependencies')] for t, v in target.items() if isinstance(v, dict)} if isinstance(target, dict) else None)
    return json.dumps(out, sort_keys=True, default=str)
result = []
for kind, text in json.load(sys.stdin):
    try:
        result.append(project(kind, text))
    except Exception:
        result.append(None)
print(json.dumps(result))
`;

async function tomlTables(texts: readonly (readonly [Kind, string])[]): Promise<(string | null)[]> {
  if (texts.length === 0) return [];
  try {
    // -I: no PYTHON* variables, no user site-packages (a .pth file in the writable home folder
    // would run here, outside any sandbox), no current folder on sys.path.
    const child = promisify(execFile)(
      hostProgram('python3'),
      [
        '-I',
        '-c',
        TOML_PROJECTOR,
        JSON.stringify({ 'pyproject.toml': PYPROJECT_RUNNER_TABLES, 'Cargo.toml': CARGO_RUNNER_TABLES }),
      ],
      { cwd: os.tmpdir(), env: childEnv({}), timeout: 30_000, maxBuffer: 64 * 1024 * 1024 },
    );
    child.child.stdin?.end(JSON.stringify(texts));
    const parsed = JSON.parse((await child).stdout) as unknown;
    if (!Array.isArray(parsed) || parsed.length !== texts.length) return texts.map(() => null);
    return parsed.map((p) => (typeof p === 'string' ? p : null));
  } catch {
    // No python3 to read them with: what could be read is not known.
    return texts.map(() => null);
  }
}

/** The manifests among `changes` whose runner sections differ from the base's (a new one is read against an empty file). */
export async function manifestsChanged(
  ws: Pick<Workspace, 'dir' | 'fileAt'>,
  base: string,
  changes: readonly FileChange[],
): Promise<string[]> {
  const pairs: { path: string; kind: Kind; before: string; after: string }[] = [];
  const owned: string[] = [];
  for (const change of changes) {
    const kind = manifestKind(change.path);
    if (kind === undefined || change.path.startsWith('../') || change.path.startsWith('~/')) continue;
    // A link (or anything but a file) is not read here, but every runner follows it to a file the
    // driver writes (`pyproject.toml` → `docs/settings.toml` with a `[tool.pytest.ini_options]`).
    const info = await lstat(path.join(ws.dir, change.path)).catch(() => null);
    if (info !== null && !info.isFile()) {
      owned.push(change.path);
      continue;
    }
    // An added one counts too (the nearest package.json decides what `#imports` mean for a test
    // beside it; pytest takes the first pyproject.toml up from its arguments with a pytest table).
    const before =
      (await ws.fileAt(base, change.path)) ?? (kind === 'package.json' || kind === 'deno.json' ? '{}' : '');
    const after =
      (await readText(path.join(ws.dir, change.path))) ?? (kind === 'package.json' || kind === 'deno.json' ? '{}' : '');
    pairs.push({ path: change.path, kind, before, after });
  }
  const toml = pairs.flatMap((p) =>
    p.kind === 'pyproject.toml' || p.kind === 'Cargo.toml'
      ? [[p.kind, p.before] as const, [p.kind, p.after] as const]
      : [],
  );
  const read = await tomlTables(toml);
  let next = 0;
  for (const p of pairs) {
    let before: string;
    let after: string;
    if (p.kind === 'pyproject.toml' || p.kind === 'Cargo.toml') {
      before = read[next++] ?? unreadable(p.before);
      after = read[next++] ?? unreadable(p.after);
    } else if (p.kind === 'setup.cfg') {
      [before, after] = [setupCfgSections(p.before), setupCfgSections(p.after)];
    } else if (p.kind === 'go.mod') {
      [before, after] = [goModReplaces(p.before), goModReplaces(p.after)];
    } else {
      const keys = p.kind === 'package.json' ? PACKAGE_RUNNER_KEYS : DENO_RUNNER_KEYS;
      [before, after] = [jsonKeys(p.before, keys), jsonKeys(p.after, keys)];
    }
    if (before !== after) owned.push(p.path);
  }
  return owned;
}
