/**
 * Which python the project's `suite.command` runs, read conservatively from its words, so that the
 * TDD lane asks that interpreter (not whichever `python3` PATH holds) which module names it finds
 * outside the repository (pythonShadows in harness.ts).
 *
 * Understood: leading `NAME=value` assignments (none that moves where python looks: `PATH`,
 * `PYTHONHOME`, `PYTHONPATH` outside the repository…), then `python3` or `python` (as PATH named
 * it when Consort started), a path to a python (`.venv/bin/python`, `/opt/venv/bin/python3.12`),
 * or `pytest`/`py.test` (bare, or a path) whose `#!` line names one. Anything else — `uv run`,
 * `poetry run`, `tox`, `npm test`, a `cd` first, `&&`, a variable, `python3.12` by name — is not
 * determined: the caller then treats every new top-level module as test-owned.
 *
 * The probe never starts a file of the workspace, which an agent can write: a python inside it
 * counts only through a link that leads out of it (a virtualenv's `bin/python`), and the program
 * started is the link's target, which does not read the workspace's `pyvenv.cfg`. That
 * virtualenv's site-packages are given to the probe to search (with the folders its `.pth` files
 * list; their `import` lines never run), the interpreter's own ones only when its `pyvenv.cfg`
 * says `include-system-site-packages = true`.
 */
import { lstat, readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { ConsortConfig } from '../../config/schema.js';
import { foundProgram } from '../../process/host-programs.js';

export interface SuitePython {
  /** The program to start (an absolute path outside the workspace). */
  program: string;
  /** Flags before the probe's `-c`: `-I`, and `-S` for a virtualenv without the system's site-packages. */
  flags: string[];
  /** The workspace's virtualenv whose site-packages the probe searches too, or null. */
  venv: string | null;
}

/** `PYTHON*` variables that do not change where python finds modules. */
const HARMLESS = new Set([
  'PYTHONDONTWRITEBYTECODE',
  'PYTHONUNBUFFERED',
  'PYTHONHASHSEED',
  'PYTHONWARNINGS',
  'PYTHONFAULTHANDLER',
  'PYTHONIOENCODING',
  'PYTHONUTF8',
  'PYTHONDEVMODE',
  'PYTHONSAFEPATH',
  'PYTHONTRACEMALLOC',
]);

const PYTHON_NAME = /^python(?:3(?:\.\d+)?)?$/;

/** The words of a simple command (quotes joined), or null for anything a shell would do more with. */
export function shellWords(command: string): string[] | null {
  if (/[;&|<>()`$\\\n\r]/.test(command)) return null;
  const words: string[] = [];
  for (const m of command.trim().matchAll(/(?:[^\s'"]+|'[^']*'|"[^"]*")+|(['"])/g)) {
    if (m[1] !== undefined) return null; // an unclosed quote
    words.push(m[0].replace(/'([^']*)'|"([^"]*)"/g, (_, a: string | undefined, b: string | undefined) => a ?? b ?? ''));
  }
  return words;
}

/** Whether an assignment before the command leaves where python looks for modules as the probe sees it. */
function harmlessAssignment(name: string, value: string): boolean {
  if (name === 'PATH') return false;
  if (!name.startsWith('PYTHON')) return true;
  if (HARMLESS.has(name)) return true;
  // Folders of the repository only: the probe leaves those out anyway.
  return (
    name === 'PYTHONPATH' &&
    value
      .split(':')
      .every((p) => p !== '' && !path.posix.isAbsolute(p) && !p.startsWith('~') && !p.split('/').includes('..'))
  );
}

const inside = (dir: string, p: string) => p === dir || p.startsWith(dir + path.sep);

/** The python a `#!` line names: an absolute path, or `/usr/bin/env python3`. */
async function shebang(script: string): Promise<string | null> {
  const head = await readFile(script, 'utf8').then(
    (t) => t.slice(0, 256).split('\n')[0]!,
    () => '',
  );
  const m = /^#!\s*(\S+)(?:\s+(\S+))?\s*$/.exec(head);
  if (!m) return null;
  if (path.posix.basename(m[1]!) === 'env' && m[2] !== undefined)
    return PYTHON_NAME.test(m[2]) ? (m[2] === 'python3' || m[2] === 'python' ? foundProgram(m[2]) : null) : null;
  return m[2] === undefined && path.isAbsolute(m[1]!) && PYTHON_NAME.test(path.basename(m[1]!)) ? m[1]! : null;
}

/** The python `word` (the command's program) starts, by path as the suite would reach it, or null. */
async function named(word: string, dir: string): Promise<string | null> {
  if (/[*?[\]{}~]/.test(word) || word.startsWith('../') || word.includes('/../')) return null;
  const base = path.posix.basename(word);
  const located = word.includes('/') ? (path.isAbsolute(word) ? word : path.join(dir, word)) : null;
  if (PYTHON_NAME.test(base)) return located ?? (word === 'python3' || word === 'python' ? foundProgram(word) : null);
  if (base === 'pytest' || base === 'py.test') {
    const script = located ?? foundProgram(word);
    return script === null ? null : shebang(script);
  }
  return null;
}

/** `include-system-site-packages` of a `pyvenv.cfg`, as python reads it. */
async function systemSite(cfg: string): Promise<boolean> {
  const text = await readFile(cfg, 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    const [key, value] = line.split('=', 2).map((s) => s.trim().toLowerCase());
    if (key === 'include-system-site-packages') return value === 'true';
  }
  return false;
}

/** The python `suite.command` runs, as the probe should start it; null when that cannot be said. */
export async function suitePython(
  suite: Pick<ConsortConfig['suite'], 'command' | 'passEnv'>,
  workspace: string,
): Promise<SuitePython | null> {
  // What the suite gets from Consort's environment: a PYTHON* setting there is not the probe's.
  if (suite.passEnv.some((name) => name.startsWith('PYTHON') && !HARMLESS.has(name))) return null;
  const words = shellWords(suite.command);
  if (words === null) return null;
  let i = 0;
  for (; i < words.length; i++) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(words[i]!);
    if (!m) break;
    if (!harmlessAssignment(m[1]!, m[2]!)) return null;
  }
  const word = words[i];
  if (word === undefined) return null;
  const dir = await realpath(workspace).catch(() => path.resolve(workspace));
  let start = await named(word, dir);
  if (start === null) return null;
  if (!path.isAbsolute(start)) start = path.join(dir, start);
  // Never a file of the workspace, by whatever path (a link outside that leads into it included).
  const target = await realpath(start).catch(() => null);
  if (target === null || inside(dir, target)) return null;
  const folder = await realpath(path.dirname(start)).catch(() => null);
  // Outside the workspace: started as the suite starts it (python reads its own pyvenv.cfg).
  if (!inside(dir, path.resolve(start)) && (folder === null || !inside(dir, folder)))
    return { program: start, flags: ['-I'], venv: null };
  // Reached through the workspace: the interpreter it links to, outside, is started instead.
  // A virtualenv: python reads the pyvenv.cfg beside its program or one folder up.
  let venv: string | null = null;
  for (const up of [path.dirname(start), path.dirname(path.dirname(start))])
    if (
      await lstat(path.join(up, 'pyvenv.cfg')).then(
        () => true,
        () => false,
      )
    ) {
      venv = up;
      break;
    }
  if (venv === null) return { program: target, flags: ['-I'], venv: null };
  return {
    program: target,
    flags: (await systemSite(path.join(venv, 'pyvenv.cfg'))) ? ['-I'] : ['-I', '-S'],
    venv,
  };
}
