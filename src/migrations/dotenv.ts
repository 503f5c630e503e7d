/**
 * The project's `.env`, as node-pg-migrate's CLI gives it to migrations: where `dotenv` is
 * installed, its `bin` loads the `.env` of the directory it runs in into `process.env` before
 * loading a migration (or the file `--envPath` names), without overriding a variable already set,
 * then expands its `${VAR}` references where `dotenv-expand` (6 or later) is installed too
 * (dotenv-expand.ts; the migration child does it, against its own environment). A migration (or
 * a module it imports) that reads `process.env.APP_ROLE` set there works under the project's own
 * CLI, so it must under the check too. Read from the tree being applied (base's for the baseline,
 * the pull request's for its branch), never from another one, as data only (nothing of the
 * repository runs here), and never a connection variable (`DATABASE_URL`, `PG*`: a `.env` names
 * the developer's database, and migrations run on a branch) nor one of Consort's own: the
 * migrations' child fills in only what its environment lacks, so the allow-listed environment and
 * the branch's URL stay. Its values are the project's secrets: they go to that child alone, never
 * into a log, a report or an error.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { isConnectionVariable, isNeverPassed } from '../core/child-env.js';
import type { ExpandRules } from './dotenv-expand.js';
import { readRegularFile, resolvedInside } from '../core/read-regular.js';
import { installedIn, migrationsPackage } from './project-packages.js';
import { scriptedCommands } from './scripted-dirs.js';

/** More than any real `.env`; a larger file is not read. */
const MAX_BYTES = 256 * 1024;
const KEY = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

const Installed = z.object({ version: z.string() }).loose();

const Manifest = z
  .object({
    dependencies: z.record(z.string(), z.unknown()).optional(),
    devDependencies: z.record(z.string(), z.unknown()).optional(),
  })
  .loose();

function readInside(root: string, file: string): string | undefined {
  const real = resolvedInside(root, file);
  const bytes = real === null ? null : readRegularFile(real);
  return bytes === null || bytes.length > MAX_BYTES ? undefined : bytes.toString('utf8');
}

/** Where `close` (a quote) ends the value starting after `from`; a backslash escapes it in double quotes. */
function closingQuote(text: string, from: number, close: string): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] === '\\' && close === '"') i++;
    else if (text[i] === close) return i;
  }
  return -1;
}

/**
 * A `.env` file's variables as dotenv reads them: `KEY=value` (or `KEY: value`), an optional
 * `export `, `#` comments, values in single, double or back quotes (double quotes may span lines and
 * turn `\n` into a line break), unquoted values trimmed and cut at `#`; a later line wins.
 */
export function parseDotenv(text: string): Map<string, string> {
  const src = text.replace(/\r\n?/g, '\n');
  const out = new Map<string, string>();
  let at = 0;
  while (at < src.length) {
    const eol = src.indexOf('\n', at) === -1 ? src.length : src.indexOf('\n', at);
    const line = src.slice(at, eol);
    const head = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*(?:=|:\s)[ \t]*/.exec(line);
    if (head === null) {
      at = eol + 1;
      continue;
    }
    const start = at + head[0].length;
    const quote = src[start];
    const close = quote === '"' || quote === "'" || quote === '`' ? closingQuote(src, start + 1, quote) : -1;
    if (close !== -1) {
      let value = src.slice(start + 1, close);
      if (quote === '"') value = value.replace(/\\n/g, '\n').replace(/\\r/g, '\r');
      out.set(head[1]!, value);
      const next = src.indexOf('\n', close);
      at = next === -1 ? src.length : next + 1;
      continue;
    }
    out.set(head[1]!, (line.slice(head[0].length).split('#')[0] ?? '').trim());
    at = eol + 1;
  }
  return out;
}

/** Whether the package (or the repository's root) has dotenv: declared in its package.json, or installed. */
async function hasDotenv(root: string, pkg: string): Promise<boolean> {
  return (await dotenvPackage(root, pkg, 'dotenv')) !== undefined;
}

/**
 * The version of `name` the package (or the repository's root) has: its installed copy's, else
 * the range its package.json or the root's declares; undefined when it has none. `''`: one whose
 * version cannot be read.
 */
async function dotenvPackage(root: string, pkg: string, name: string): Promise<string | undefined> {
  const installed = await installedIn({ root, dir: pkg }, name).catch(() => undefined);
  if (installed !== undefined) {
    // The install (linked packages included) may lie outside the tree read: only its version is read.
    const bytes = readRegularFile(path.join(installed, 'node_modules', name, 'package.json'));
    try {
      return bytes === null ? '' : (Installed.safeParse(JSON.parse(bytes.toString('utf8'))).data?.version ?? '');
    } catch {
      return '';
    }
  }
  for (const dir of new Set([pkg, root])) {
    const text = readInside(root, path.join(dir, 'package.json'));
    try {
      const m = text === undefined ? undefined : Manifest.safeParse(JSON.parse(text)).data;
      const range = m?.dependencies?.[name] ?? m?.devDependencies?.[name];
      if (range !== undefined) return typeof range === 'string' ? range : '';
    } catch {
      // not JSON: declares nothing
    }
  }
  return undefined;
}

/**
 * Whether node-pg-migrate's CLI expands the package's `.env`, and by which dotenv-expand's rules:
 * `dotenv-expand` installed (or declared), in a version that exports `expand` (6 and later;
 * `^5.1.0` exported a function the CLI does not call). A version or range that names no major
 * (`latest`, `*`) is taken as the newest.
 */
async function dotenvExpandRules(root: string, pkg: string): Promise<ExpandRules | undefined> {
  const version = await dotenvPackage(root, pkg, 'dotenv-expand');
  if (version === undefined) return undefined;
  const major = /^\s*[~^=v]*\s*(\d+)(?:[.\sxX*-]|$)/.exec(version)?.[1];
  if (major === undefined || Number(major) >= 1000) return '1000';
  return Number(major) >= 6 ? '12' : undefined;
}

/** `--envPath <file>` (yargs takes `--env-path` and `--envPath=<file>` too) in a command's words. */
function envPathIn(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const eq = /^--(?:envPath|env-path)=(.*)$/.exec(args[i]!);
    if (eq) return eq[1];
    if (args[i] === '--envPath' || args[i] === '--env-path') return args[i + 1];
  }
  return undefined;
}

/**
 * The file the project's scripts that apply `dir` (relative to the root) load, as dotenv resolves
 * it from the directory each runs in (its package's, or the one a `cd dir &&` before it enters):
 * the `--envPath` it names, else `.env` there; the `.env` of the package that owns `dir` when no
 * script applies it; undefined when they load different ones.
 */
async function envFile(root: string, dir: string, owner: string): Promise<string | undefined> {
  const want = path.posix.normalize(dir.split(path.sep).join('/'));
  const commands = (await scriptedCommands(root, { owner }).catch(() => [])).filter(
    (c) => c.dir !== undefined && path.posix.normalize(c.dir) === want && !c.args.includes('create'),
  );
  const files = new Set(commands.map((c) => path.resolve(root, c.cwd, envPathIn(c.args) ?? '.env')));
  if (files.size > 1) return undefined;
  return [...files][0] ?? path.join(owner, '.env');
}

/** The file node-pg-migrate's CLI loads for a folder's migrations, and whether it expands it. */
export interface DotenvSource {
  /** Relative to the root, with `/` separators. */
  file: string;
  /** `dotenv-expand` (6 or later) is the project's: `${VAR}` references are expanded by its rules (dotenv-expand.ts). */
  expand?: ExpandRules;
}

/**
 * The file node-pg-migrate's CLI would load for `dir`'s migrations (the folder in the tree at
 * `root`): the `.env` of the package that owns it, or the file its scripts name with `--envPath`;
 * undefined when the project has no dotenv, or its scripts name different files. The file may not
 * exist.
 */
export async function dotenvSource(root: string, dir: string): Promise<DotenvSource | undefined> {
  const top = path.resolve(root);
  const rel = path.relative(top, path.resolve(top, dir));
  const owner = await migrationsPackage(top, rel);
  if (!(await hasDotenv(top, owner.dir))) return undefined;
  const file = await envFile(top, rel, owner.dir);
  if (file === undefined) return undefined;
  const expand = await dotenvExpandRules(top, owner.dir);
  return { file: path.relative(top, file).split(path.sep).join('/'), ...(expand ? { expand } : {}) };
}

/** What a project's `.env` gives its migrations (projectDotenv). */
export interface ProjectDotenv {
  /** The file's variables in its order, but connection variables and Consort's own. */
  vars: Record<string, string>;
  /** Expand their `${VAR}` references where the migrations run by these rules (dotenv-expand.ts), as the project's CLI does. */
  expand?: ExpandRules;
}

/**
 * The variables the `.env` of the package that owns `dir` (the migrations folder in the tree at
 * `root`), or the file its scripts name with `--envPath`, gives its migrations under
 * node-pg-migrate's CLI: none when the project has no dotenv or no such file, or its scripts name
 * different ones; never a connection variable nor one of Consort's own.
 */
export async function projectDotenv(root: string, dir: string): Promise<ProjectDotenv> {
  const top = path.resolve(root);
  const source = await dotenvSource(top, dir);
  const text = source === undefined ? undefined : readInside(top, path.join(top, source.file));
  if (source === undefined || text === undefined) return { vars: {} };
  return { vars: loaded(text), ...(source.expand ? { expand: source.expand } : {}) };
}

/** What a `.env`'s text gives migrations: its variables but connection variables and Consort's own. */
function loaded(text: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const [key, value] of parseDotenv(text))
    if (KEY.test(key) && !isConnectionVariable(key) && !isNeverPassed(key)) vars[key] = value;
  return vars;
}

/**
 * A sha256 of what `dir`'s `.env` gives its migrations (projectDotenv) in a tree, for a name that
 * must change when it does (a baseline's): the file is located by the packages at `root` and read
 * with `read` (a path relative to the root; default: from `root`). Undefined when it gives nothing,
 * so names of projects without one stay. Only the hash leaves here: the values are secrets.
 */
export async function dotenvHash(
  root: string,
  dir: string,
  read?: (file: string) => Promise<string | undefined>,
): Promise<string | undefined> {
  const top = path.resolve(root);
  const source = await dotenvSource(top, dir);
  if (source === undefined) return undefined;
  const text = read ? await read(source.file) : readInside(top, path.join(top, source.file));
  if (text === undefined || Buffer.byteLength(text) > MAX_BYTES) return undefined;
  const vars = Object.entries(loaded(text));
  if (vars.length === 0) return undefined;
  return createHash('sha256')
    .update(JSON.stringify({ vars, expand: source.expand ?? false }))
    .digest('hex');
}
