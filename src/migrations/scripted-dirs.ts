/**
 * Where a project's own node-pg-migrate keeps its migrations: each package.json script (the root's,
 * its workspace packages', and for the missing folder's hint those of packages below the root that
 * are no workspace) that runs node-pg-migrate, with the directory it names (`-m db/migrations`,
 * `--migrations-dir db/migrations`, `--migrations-dir=db/migrations`), or that its configuration
 * names (`migrations-dir` in the script's `--config-file`, or in `config/default.json` read through
 * the `config` package, section `db` or the script's `--config-value`: node-pg-migrate lets either
 * override the flag), or node-pg-migrate's default (`migrations`, in the directory the script runs
 * in); and a package that depends on node-pg-migrate and whose `config/default.json` names one with
 * no script at all. Read only to tell a user whose configured migrations directory does not exist
 * what to set migrations.dir to. The files are the repository's, untrusted: each is read only when
 * it is a regular file inside it, parsed with zod, and never run (a `--config-file` in JavaScript
 * names nothing here).
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { readRegularFile, resolvedInside } from '../core/read-regular.js';
import { configFileToEdit } from '../config/files.js';
import { isIgnored } from '../git/repo.js';
import { lockedVersion } from './engine-pin.js';
import { installedIn } from './project-packages.js';

export interface ScriptedDir {
  /** The manifest holding the script, relative to the root (`package.json`, `packages/db/package.json`). */
  manifest: string;
  /** The script; undefined: no script, the package's configuration names the directory. */
  script?: string;
  /** How the script names the directory (`-m db/migrations`); undefined: node-pg-migrate's default. */
  flag?: string;
  /**
   * The configuration file, relative to the root, and its section (none: the file read whole) that
   * name the directory; they win over `flag`.
   */
  config?: { file: string; section?: string };
  /** The directory, relative to the root, with `/` separators. */
  dir: string;
}

/** One node-pg-migrate command of a script: where it runs and what it names. */
interface Command {
  /** The directory it runs in, relative to the script's package. */
  cwd: string;
  flag?: string;
  /** `-m`'s directory, relative to `cwd`. */
  dir?: string;
  /** `--config-file` / `-f`, relative to `cwd`. */
  configFile?: string;
  /** `--config-value`: the configuration's section (node-pg-migrate's default: `db`). */
  section: string;
  /** The words after `node-pg-migrate`, unquoted. */
  args: string[];
  /** The words before it (`NODE_OPTIONS=…`, `ts-node -r tsconfig-paths/register`), unquoted. */
  before: string[];
  /** The shell script file it is written in (`utils/migrate.sh`), relative to the script's package; none: the script itself. */
  via?: string;
}

/** node-pg-migrate's own default for `--migrations-dir`. */
const DEFAULT_DIR = 'migrations';
/** Enough for any real monorepo; a pattern matching more is not read further. */
const MAX_PACKAGES = 500;

const Manifest = z
  .object({
    scripts: z.record(z.string(), z.string()).optional(),
    dependencies: z.record(z.string(), z.unknown()).optional(),
    devDependencies: z.record(z.string(), z.unknown()).optional(),
    workspaces: z
      .union([z.array(z.string()), z.object({ packages: z.array(z.string()).optional() }).loose()])
      .optional(),
  })
  .loose();
const PnpmWorkspace = z.object({ packages: z.array(z.string()).optional() }).loose();
/** A node-pg-migrate configuration's section: only the key read here. */
const Section = z.object({ 'migrations-dir': z.string().min(1).optional() }).loose();
/** The `config` package's default files node-pg-migrate would read, in the order it merges them (the last wins). */
const CONFIG_DEFAULTS = ['config/default.json', 'config/default.yaml', 'config/default.yml'];

/**
 * Whether a node-pg-migrate version (unknown: the newest) reads a `--config-file`'s `--config-value`
 * section: 8 and 9 do, 6 and 7 read the file's top-level keys whatever it holds.
 */
export const readsSections = (engineVersion: string | undefined): boolean =>
  engineVersion === undefined || !(Number(engineVersion.split('.')[0]) < 8);

const InstalledManifest = z.object({ version: z.string() }).loose();
const DeclaredManifest = z
  .object({
    dependencies: z.record(z.string(), z.unknown()).optional(),
    devDependencies: z.record(z.string(), z.unknown()).optional(),
  })
  .loose();

/**
 * The node-pg-migrate version a package's scripts run (`pkg` relative to the root): its installed
 * copy's (the package's node_modules or one above it), else the exact one its lockfile pins, else the
 * major its package.json asks for (`^7.9.1`: 7); undefined when none says.
 */
async function packageEngineVersion(root: string, pkg: string): Promise<string | undefined> {
  const at = { root, dir: path.join(root, pkg) };
  const installed = await installedIn(at, 'node-pg-migrate').catch(() => undefined);
  if (installed !== undefined) {
    const text = await readFile(path.join(installed, 'node_modules', 'node-pg-migrate', 'package.json'), 'utf8').catch(
      () => undefined,
    );
    try {
      const version = text === undefined ? undefined : InstalledManifest.safeParse(JSON.parse(text)).data?.version;
      if (version !== undefined) return version;
    } catch {
      // unreadable: as if not installed
    }
  }
  const locked = await lockedVersion(at).catch(() => undefined);
  if (locked !== undefined) return locked.version;
  const text = readInside(root, path.join(root, pkg, 'package.json'));
  try {
    const m = text === undefined ? undefined : DeclaredManifest.safeParse(JSON.parse(text)).data;
    const range = m?.dependencies?.['node-pg-migrate'] ?? m?.devDependencies?.['node-pg-migrate'];
    return typeof range === 'string' ? /^\s*[~^=v]*\s*(\d+)(?:\.[\dx*]+)*\s*$/.exec(range)?.[1] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * How a package's node-pg-migrate reads a command's `--config-file` (configSection's `sections`),
 * looked up once per package and only for a command that names one.
 */
function packageSections(root: string, pkg: string): (c: Command) => Promise<boolean> {
  let known: Promise<boolean> | undefined;
  return (c) =>
    c.configFile === undefined
      ? Promise.resolve(true)
      : (known ??= packageEngineVersion(root, pkg).then(readsSections));
}

function readInside(root: string, file: string): string | undefined {
  const real = resolvedInside(root, file);
  return real === null ? undefined : (readRegularFile(real)?.toString('utf8') ?? undefined);
}

function manifestAt(root: string, dir: string): z.infer<typeof Manifest> | undefined {
  const text = readInside(root, path.join(dir, 'package.json'));
  if (text === undefined) return undefined;
  try {
    const parsed = Manifest.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The directories a workspace pattern names (`packages/*`, `apps/api`); `*` and `**` match one level. */
async function expand(root: string, pattern: string): Promise<string[]> {
  const segments = pattern.replace(/\\/g, '/').replace(/^\.\//, '').split('/').filter(Boolean);
  if (segments.some((s) => s === '..')) return [];
  let dirs = [''];
  for (const segment of segments) {
    const next: string[] = [];
    for (const d of dirs) {
      if (!segment.includes('*')) {
        next.push(path.posix.join(d, segment));
        continue;
      }
      const match = new RegExp(`^${segment.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*+/g, '.*')}$`);
      const entries = await readdir(path.join(root, d), { withFileTypes: true }).catch(() => []);
      for (const e of entries)
        if (e.isDirectory() && e.name !== 'node_modules' && !e.name.startsWith('.') && match.test(e.name))
          next.push(path.posix.join(d, e.name));
    }
    dirs = next.slice(0, MAX_PACKAGES);
  }
  return dirs;
}

/** The root's workspace packages: package.json `workspaces` (npm, yarn) and pnpm-workspace.yaml. */
async function workspacePackages(root: string, manifest: z.infer<typeof Manifest> | undefined): Promise<string[]> {
  const ws = manifest?.workspaces;
  const patterns = [...(Array.isArray(ws) ? ws : (ws?.packages ?? []))];
  const pnpm = readInside(root, path.join(root, 'pnpm-workspace.yaml'));
  if (pnpm !== undefined) {
    try {
      patterns.push(...(PnpmWorkspace.safeParse(parseYaml(pnpm)).data?.packages ?? []));
    } catch {
      // not YAML: as if it named no packages
    }
  }
  const found = new Set<string>();
  for (const p of patterns.filter((x) => !x.startsWith('!'))) for (const d of await expand(root, p)) found.add(d);
  return [...found].filter((d) => d !== '').slice(0, MAX_PACKAGES);
}

/** How deep below the root a package that is no workspace is looked for (`src/server/package.json` is 2). */
const NESTED_DEPTH = 3;
/** Folders read looking for them: a repository's source folders, not its every file. */
const NESTED_FOLDERS = 2000;

/**
 * The folders with a package.json of their own below the root that no workspace pattern names, the
 * shallowest first, each level by name: a repository holding its server and its app side by side
 * (`server/`, `src/server/`) without workspaces keeps its migrate script in the server's own
 * package.json. Real folders only (no links), never node_modules nor a dot-folder; at most
 * NESTED_DEPTH levels down and NESTED_FOLDERS folders read.
 */
async function nestedPackages(root: string, known: ReadonlySet<string>): Promise<string[]> {
  const found: string[] = [];
  let level = [''];
  let read = 0;
  for (let depth = 1; depth <= NESTED_DEPTH && level.length > 0; depth++) {
    const next: string[] = [];
    for (const d of level) {
      if (read++ >= NESTED_FOLDERS) return found;
      const entries = await readdir(path.join(root, d), { withFileTypes: true }).catch(() => []);
      for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
        if (!e.isDirectory() || e.name === 'node_modules' || e.name.startsWith('.')) continue;
        const dir = path.posix.join(d, e.name);
        next.push(dir);
        if (!known.has(dir) && manifestAt(root, path.join(root, dir)) !== undefined) found.push(dir);
      }
    }
    level = next;
  }
  return found.slice(0, MAX_PACKAGES);
}

/**
 * A script's commands, each as its words, the way `sh` reads them: split on `&&`, `||`, `;`, `|`,
 * `&` and newlines, and each into words on blanks, except inside quotes (`--ignore-pattern
 * '\\..*|README\\.md'` is one word, with its `|`); quotes removed, a backslash outside single quotes
 * keeping the next character.
 */
export function shellCommands(script: string): string[][] {
  const commands: string[][] = [];
  let words: string[] = [];
  let word: string | undefined;
  let quote: "'" | '"' | undefined;
  const endWord = () => {
    if (word !== undefined) words.push(word);
    word = undefined;
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  for (let i = 0; i < script.length; i++) {
    const ch = script[i]!;
    if (quote === "'") {
      if (ch === "'") quote = undefined;
      else word = (word ?? '') + ch;
    } else if (quote === '"') {
      if (ch === '"') quote = undefined;
      else if (ch === '\\' && i + 1 < script.length && '"\\$`'.includes(script[i + 1]!))
        word = (word ?? '') + script[++i];
      else word = (word ?? '') + ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      word ??= '';
    } else if (ch === '#' && word === undefined) {
      // A comment, to the end of the line.
      while (i + 1 < script.length && script[i + 1] !== '\n') i++;
    } else if (ch === '\\' && script[i + 1] === '\n') {
      i++; // a line continuation
    } else if (ch === '\\' && i + 1 < script.length) {
      word = (word ?? '') + script[++i];
    } else if (/\s/.test(ch) && ch !== '\n') {
      endWord();
    } else if (ch === '\n' || ch === ';' || ch === '|' || ch === '&') {
      endCommand();
    } else {
      word = (word ?? '') + ch;
    }
  }
  endCommand();
  return commands;
}

/** The value of an option spelled `-x v`, `--long v` or `--long=v` after `from`. */
function option(words: readonly string[], from: number, names: RegExp): { spelled: string; value: string } | undefined {
  for (let i = from; i < words.length; i++) {
    const w = words[i]!;
    const eq = /^(--?[\w-]+)=(.+)$/.exec(w);
    if (eq && names.test(eq[1]!)) return { spelled: `${eq[1]} ${eq[2]}`, value: eq[2]! };
    if (names.test(w) && words[i + 1] !== undefined) return { spelled: `${w} ${words[i + 1]}`, value: words[i + 1]! };
  }
  return undefined;
}

/** A word as sh reads it back, after a blank. */
const shellWord = (w: string): string => ` '${w.replace(/'/g, "'\\''")}'`;

/** Shells that run a script file named after them (`sh scripts/migrate.sh up`), and sh's `.`/`source`. */
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', '.', 'source']);
/** How deep a chain of script files running script files is followed. */
const MAX_FILES = 3;
/** A shell script file larger than this is not read. */
const MAX_FILE_BYTES = 256 * 1024;

/**
 * The shell script file a command runs and the words it passes it: `sh scripts/migrate.sh up`,
 * `bash -e ./migrate.sh`, `. ./utils/migrateDb.sh up`, `./scripts/migrate.sh` (after any `VAR=value`
 * assignments); undefined for anything else, and for a file named by a variable (`source $ENV_FILE`)
 * or a command string (`bash -c '…'`).
 */
function shellFileCall(words: readonly string[]): { file: string; args: string[] } | undefined {
  let i = 0;
  while (/^[A-Za-z_]\w*=/.test(words[i] ?? '')) i++;
  const first = words[i];
  if (first === undefined) return undefined;
  let file: string | undefined;
  if (SHELLS.has(path.posix.basename(first))) {
    i++;
    while (words[i]?.startsWith('-')) if (words[i++] === '-c') return undefined;
    file = words[i];
  } else if (/\.(?:ba)?sh$/.test(first) && first.includes('/')) file = first;
  if (file === undefined || file.includes('$') || path.posix.isAbsolute(file)) return undefined;
  return { file, args: words.slice(i + 1) };
}

/** A script file's text with the words it was run with for its positional parameters (`$1`, `"$@"`); those not given are empty. */
function withArgs(text: string, args: readonly string[]): string {
  const all = args.map(shellWord).join('').trimStart();
  return text.replace(/"\$[@*]"|"\$\{?([1-9])\}?"|\$[@*]|\$\{?([1-9])\}?/g, (_, quoted?: string, bare?: string) => {
    const n = quoted ?? bare;
    if (n === undefined) return all;
    const arg = args[Number(n) - 1];
    return arg === undefined ? '' : shellWord(arg).trimStart();
  });
}

/** Reads a script file a command runs, by its path relative to the script's package; undefined when it cannot be read. */
type ReadScript = (file: string) => string | undefined;

/** The script files of the package `pkg` (relative to the root): regular files inside the repository, read as text. */
function scriptReader(root: string, pkg: string): ReadScript {
  return (file) => {
    const inside = insidePath(pkg || '.', file);
    const real = inside === undefined ? null : resolvedInside(root, path.join(root, inside));
    const bytes = real === null ? null : readRegularFile(real);
    return bytes === null || bytes.length > MAX_FILE_BYTES ? undefined : bytes.toString('utf8');
  };
}

/**
 * Each node-pg-migrate command of `script` (a `cd dir &&` before it counts), and those of the shell
 * script files it runs (`sh scripts/migrate.sh up`: read with `read`, never run, their `$1` the words
 * passed; each command then says which file it is in).
 */
function commandsInScript(script: string, read?: ReadScript, depth = 0): Command[] {
  const found: Command[] = [];
  let cwd = '.';
  for (const words of shellCommands(script)) {
    if (words[0] === 'cd' && words[1] !== undefined) {
      cwd = path.posix.join(cwd, words[1]);
      continue;
    }
    const at = words.findIndex((w) => /(?:^|\/)node-pg-migrate(?:\.[cm]?js)?$/.test(w));
    if (at < 0) {
      const call = read === undefined || depth >= MAX_FILES ? undefined : shellFileCall(words);
      const file = call === undefined ? undefined : path.posix.join(cwd, call.file);
      const text = file === undefined ? undefined : read!(file);
      if (call === undefined || file === undefined || text === undefined) continue;
      for (const c of commandsInScript(withArgs(text, call.args), read, depth + 1))
        found.push({ ...c, cwd: path.posix.join(cwd, c.cwd), via: file });
      continue;
    }
    const named = option(words, at + 1, /^(-m|--migrations-dir|--migrationsDir)$/);
    const configFile = option(words, at + 1, /^(-f|--config-file|--configFile)$/)?.value;
    const section = option(words, at + 1, /^(--config-value|--configValue)$/)?.value ?? 'db';
    found.push({
      cwd,
      ...(named ? { flag: named.spelled, dir: named.value } : {}),
      ...(configFile ? { configFile } : {}),
      section,
      args: words.slice(at + 1),
      before: words.slice(0, at),
    });
  }
  return found;
}

/**
 * The migrations directory each node-pg-migrate command of `script` names with its flags,
 * relative to the directory the script runs in (a `cd dir &&` before it counts).
 */
export function dirsInScript(script: string): { flag?: string; dir: string }[] {
  return commandsInScript(script).flatMap((c) => {
    const dir = c.dir ?? DEFAULT_DIR;
    if (path.posix.isAbsolute(dir)) return [];
    return [{ ...(c.flag ? { flag: c.flag } : {}), dir: path.posix.join(c.cwd, dir) }];
  });
}

/** A repository path (relative to the root) that stays inside it, with `/` separators; undefined otherwise. */
function insidePath(...parts: string[]): string | undefined {
  const joined = path.posix.normalize(path.posix.join(...parts.map((p) => p.replace(/\\/g, '/'))));
  if (path.posix.isAbsolute(joined) || joined === '..' || joined.startsWith('../')) return undefined;
  return joined;
}

/**
 * A configuration file's `section` as node-pg-migrate reads it: a `--config-file` without that
 * section is read whole, the config package's files only by their section. Undefined when the file
 * cannot be read or parsed, or holds no such section. `sections: false` is node-pg-migrate 6 and 7
 * reading a `--config-file`: always whole, its top-level keys, whatever section it holds (8 and 9
 * read the section when there is one).
 */
export function configSection(
  root: string,
  file: string,
  section: string,
  whole: boolean,
  sections = true,
): { data: Record<string, unknown>; section?: string } | undefined {
  const text = readInside(root, path.join(root, file));
  if (text === undefined) return undefined;
  let data: unknown;
  try {
    data = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch {
    return undefined;
  }
  if (typeof data !== 'object' || data === null) return undefined;
  const inSection = sections && section in data;
  if (!inSection && !whole) return undefined;
  const picked: unknown = inSection ? (data as Record<string, unknown>)[section] : data;
  if (typeof picked !== 'object' || picked === null || Array.isArray(picked)) return undefined;
  return { data: picked as Record<string, unknown>, ...(inSection ? { section } : {}) };
}

/** `migrations-dir` in a configuration file's `section` (see configSection). */
function configuredDir(
  root: string,
  file: string,
  section: string,
  whole: boolean,
  sections = true,
): { dir: string; section?: string } | undefined {
  const found = configSection(root, file, section, whole, sections);
  const dir = found && Section.safeParse(found.data).data?.['migrations-dir'];
  return found && dir !== undefined ? { dir, ...(found.section ? { section: found.section } : {}) } : undefined;
}

/** A configuration file (relative to the root) that names a migrations directory, and the section it is in. */
interface Configured {
  file: string;
  section?: string;
  dir: string;
}

/**
 * The `config` package's default file in `dir` (relative to the root) that names a migrations
 * directory for `section`, when a manifest depends on `config` (node-pg-migrate reads it only then).
 */
function packageConfig(
  root: string,
  manifests: readonly (z.infer<typeof Manifest> | undefined)[],
  dir: string,
  section: string,
): Configured | undefined {
  if (!manifests.some((m) => dependsOn(m, 'config'))) return undefined;
  let found: Configured | undefined;
  for (const name of CONFIG_DEFAULTS) {
    const file = insidePath(dir, name);
    const named = file === undefined ? undefined : configuredDir(root, file, section, false);
    if (file !== undefined && named !== undefined) found = { file, ...named };
  }
  return found;
}

const dependsOn = (manifest: z.infer<typeof Manifest> | undefined, name: string): boolean =>
  [manifest?.dependencies, manifest?.devDependencies].some((d) => d !== undefined && name in d);

/** The directory a command uses, relative to the root: its configuration's, else its flag's, else the default. */
function commandDir(
  root: string,
  manifests: readonly (z.infer<typeof Manifest> | undefined)[],
  cwd: string,
  c: Command,
  sections = true,
): { dir: string; config?: Configured } | undefined {
  // node-pg-migrate reads the config package, then --config-file; each one's migrations-dir wins over -m.
  const file = c.configFile === undefined ? undefined : insidePath(cwd, c.configFile);
  const fromFile = file === undefined ? undefined : configuredDir(root, file, c.section, true, sections);
  const config =
    file !== undefined && fromFile !== undefined
      ? { file, ...fromFile }
      : packageConfig(root, manifests, cwd, c.section);
  const named = config?.dir ?? c.dir ?? DEFAULT_DIR;
  const dir = path.posix.isAbsolute(named) ? undefined : insidePath(cwd, named);
  return dir === undefined ? undefined : { dir, ...(config ? { config } : {}) };
}

/**
 * Every migrations directory the root's and its workspace packages' node-pg-migrate uses, then
 * those of the packages below the root that are no workspace (nestedPackages).
 */
export async function scriptedMigrationDirs(root: string): Promise<ScriptedDir[]> {
  const top = path.resolve(root);
  const rootManifest = manifestAt(top, top);
  const out: ScriptedDir[] = [];
  const workspaces = await workspacePackages(top, rootManifest);
  for (const pkg of ['', ...workspaces, ...(await nestedPackages(top, new Set(workspaces)))]) {
    const manifest = pkg === '' ? rootManifest : manifestAt(top, path.join(top, pkg));
    const manifests = [manifest, rootManifest];
    const manifestFile = path.posix.join(pkg, 'package.json');
    const at = pkg || '.';
    const sections = packageSections(top, pkg);
    let scripted = false;
    for (const [script, text] of Object.entries(manifest?.scripts ?? {})) {
      for (const c of commandsInScript(text, scriptReader(top, pkg))) {
        scripted = true;
        const cwd = insidePath(at, c.cwd);
        const found = cwd === undefined ? undefined : commandDir(top, manifests, cwd, c, await sections(c));
        if (found === undefined) continue;
        const { config } = found;
        out.push({
          manifest: manifestFile,
          script,
          ...(config
            ? { config: { file: config.file, ...(config.section ? { section: config.section } : {}) } }
            : c.flag
              ? { flag: c.flag }
              : {}),
          dir: found.dir,
        });
      }
    }
    // Run by hand or from CI, not by a script: the package's own config/default.json still says where.
    if (!scripted && manifests.some((m) => dependsOn(m, 'node-pg-migrate'))) {
      const found = commandDir(top, manifests, at, { cwd: '.', section: 'db', args: [], before: [] });
      if (found?.config)
        out.push({ manifest: manifestFile, config: { file: found.config.file, section: 'db' }, dir: found.dir });
    }
  }
  return out;
}

/** A configuration node-pg-migrate reads for a command: a file relative to the root, its section, what it holds. */
export interface ConfigSource {
  file: string;
  section?: string;
  data: Record<string, unknown>;
}

/** One node-pg-migrate command of a package.json script, as node-pg-migrate would read its settings. */
export interface ScriptedCommand {
  manifest: string;
  script: string;
  /** The directory it runs in (its package's, after a `cd dir &&`), relative to the root, with `/` separators. */
  cwd: string;
  /** The migrations directory it uses, relative to the root; undefined: outside the repository. */
  dir: string | undefined;
  /** Its words after `node-pg-migrate`. */
  args: readonly string[];
  /** Its words before `node-pg-migrate`: what runs it and how (`ts-node -r tsconfig-paths/register`, `NODE_OPTIONS=…`). */
  before: readonly string[];
  /** The shell script file the script runs it in (`utils/migrate.sh`, relative to the root); none: the script itself. */
  via?: string;
  /** The configurations it reads, in node-pg-migrate's order (a later one wins, and each wins over the flags). */
  sources: ConfigSource[];
  /**
   * The keys (node-pg-migrate's long flags) a configuration it may read could set but that cannot be
   * read here; 'all': any of them (a `--config-file` in JavaScript, a `config/default.ts`, a file
   * linked out of the repository). The config package's other files (`config/production.json`,
   * `custom-environment-variables.json`, …) are read by the deploy's environment, unknown here: the
   * keys they set count as unknown too.
   */
  unknown: 'all' | string[];
}

/** The files the config package loads, by extension; only JSON and YAML are read here (as data). */
const CONFIG_EXTENSIONS =
  /\.(js|cjs|mjs|ts|cts|mts|json|json5|jsonc|hjson|toml|coffee|iced|ya?ml|cson|properties|xml)$/;
const DATA_FILE = /\.(json|ya?ml)$/;

/** Whether `file` (relative to the root) is a JSON or YAML file inside the repository that parses. */
function readableData(root: string, file: string): boolean {
  if (!DATA_FILE.test(file)) return false;
  const text = readInside(root, path.join(root, file));
  if (text === undefined) return false;
  try {
    return (file.endsWith('.json') ? JSON.parse(text) : parseYaml(text)) !== undefined;
  } catch {
    return false;
  }
}

/** What the config package's files in `cwd/config` other than its default JSON and YAML may set for `section`. */
async function otherConfigKeys(root: string, cwd: string, section: string): Promise<'all' | string[]> {
  const dir = insidePath(cwd, 'config');
  if (dir === undefined) return [];
  const entries = await readdir(path.join(root, dir), { withFileTypes: true }).catch(() => []);
  if (entries.length > 0 && resolvedInside(root, path.join(root, dir)) === null) return 'all';
  const keys: string[] = [];
  for (const e of entries) {
    const file = path.posix.join(dir, e.name);
    if (e.isDirectory() || !CONFIG_EXTENSIONS.test(e.name)) continue;
    if (!readableData(root, file)) return 'all';
    if (CONFIG_DEFAULTS.includes(`config/${e.name}`)) continue; // read as a source already
    keys.push(...Object.keys(configSection(root, file, section, false)?.data ?? {}));
  }
  return keys;
}

/** How deep a chain of scripts running scripts is followed (`db:prod` → `migrate:up` → `migrate`). */
const MAX_CALLS = 4;

/** The script another command of `words` runs, and the words it passes on (`npm run migrate -- up -t v`). */
function scriptCall(words: readonly string[]): { name: string; extra: string[] } | undefined {
  const tool = path.posix.basename(words[0] ?? '');
  let i = 1;
  if (tool === 'npm' || tool === 'bun') {
    while (words[i]?.startsWith('-')) i++;
    if (!['run', 'run-script', 'rum', 'urn'].includes(words[i] ?? '')) return undefined;
    i++;
  } else if (tool === 'yarn' || tool === 'pnpm') {
    while (words[i]?.startsWith('-')) i++;
    if (words[i] === 'run') i++;
  } else return undefined;
  while (words[i]?.startsWith('-')) i++;
  const name = words[i];
  if (name === undefined) return undefined;
  const extra = words.slice(i + 1);
  const dashes = extra.indexOf('--');
  if (dashes >= 0) extra.splice(dashes, 1);
  return { name, extra };
}

/**
 * How a package's scripts run `name`: itself, and through each script that runs it with more
 * words (`"migrate:prod": "npm run migrate -- up -t versions"`), which npm, yarn and pnpm add to its
 * end; the variant is said as that script's.
 */
function calledWith(scripts: Record<string, string>, name: string, depth = 0): { script: string; extra: string[] }[] {
  const out = [{ script: name, extra: [] as string[] }];
  if (depth >= MAX_CALLS) return out;
  for (const [caller, text] of Object.entries(scripts)) {
    if (caller === name) continue;
    for (const words of shellCommands(text)) {
      const call = scriptCall(words);
      if (call?.name !== name) continue;
      for (const v of calledWith(scripts, caller, depth + 1))
        if (call.extra.length + v.extra.length > 0) out.push({ script: v.script, extra: [...call.extra, ...v.extra] });
    }
  }
  return out;
}

/**
 * Every node-pg-migrate command of the root's and its workspace packages' scripts (and `owner`'s), with the
 * configuration files it reads: the `config` package's default files (when a manifest depends on
 * it), then its `--config-file`. Read as data only: nothing is run.
 */
export async function scriptedCommands(
  root: string,
  {
    /**
     * How the node-pg-migrate that applies reads a `--config-file` (configSection): false for 6 and 7;
     * undefined: as each package's own node-pg-migrate does (packageEngineVersion).
     */
    sections: applying,
    /**
     * The package that owns the migrations (relative to the root, or absolute inside it), read too
     * when it is neither the root nor a workspace: a folder with a package.json of its own whose
     * scripts apply them from there (`cd db && npm run migrate`).
     */
    owner,
  }: { sections?: boolean; owner?: string } = {},
): Promise<ScriptedCommand[]> {
  const top = path.resolve(root);
  const rootManifest = manifestAt(top, top);
  const out: ScriptedCommand[] = [];
  const packages = ['', ...(await workspacePackages(top, rootManifest))];
  const own = owner === undefined ? undefined : insidePath(path.relative(top, path.resolve(top, owner)));
  if (own !== undefined && own !== '.' && !packages.includes(own)) packages.push(own);
  for (const pkg of packages) {
    const manifest = pkg === '' ? rootManifest : manifestAt(top, path.join(top, pkg));
    const manifests = [manifest, rootManifest];
    const scripts = manifest?.scripts ?? {};
    const sectionsOf = packageSections(top, pkg);
    for (const [script, text] of Object.entries(scripts).flatMap(([name, text]) =>
      calledWith(scripts, name).map((v): [string, string] => [v.script, `${text}${v.extra.map(shellWord).join('')}`]),
    )) {
      for (const c of commandsInScript(text, scriptReader(top, pkg))) {
        const cwd = insidePath(pkg || '.', c.cwd);
        if (cwd === undefined) continue;
        const sources: ConfigSource[] = [];
        let unknown: 'all' | string[] = [];
        if (manifests.some((m) => dependsOn(m, 'config'))) {
          for (const name of CONFIG_DEFAULTS) {
            const file = insidePath(cwd, name);
            const found = file === undefined ? undefined : configSection(top, file, c.section, false);
            if (file !== undefined && found !== undefined) sources.push({ file, ...found });
          }
          unknown = await otherConfigKeys(top, cwd, c.section);
        }
        const sections = applying ?? (await sectionsOf(c));
        const file = c.configFile === undefined ? undefined : insidePath(cwd, c.configFile);
        // node-pg-migrate runs a --config-file it cannot parse as data (JavaScript, TypeScript): what it sets is unknown.
        if (c.configFile !== undefined && (file === undefined || !readableData(top, file))) unknown = 'all';
        const found = file === undefined ? undefined : configSection(top, file, c.section, true, sections);
        if (file !== undefined && found !== undefined) sources.push({ file, ...found });
        out.push({
          manifest: path.posix.join(pkg, 'package.json'),
          script,
          cwd,
          dir: commandDir(top, manifests, cwd, c, sections)?.dir,
          args: c.args,
          before: c.before,
          ...(c.via === undefined ? {} : { via: insidePath(pkg || '.', c.via) ?? c.via }),
          sources,
          unknown,
        });
      }
    }
  }
  return out;
}

const isDirectory = (root: string, dir: string): Promise<boolean> =>
  readdir(path.join(root, dir)).then(
    () => resolvedInside(root, path.join(root, dir)) !== null,
    () => false,
  );

/** How a script names its folder, for a hint: `package.json's script "migrate" runs node-pg-migrate with -m dist/migrations`. */
function scriptWords(s: ScriptedDir): string | undefined {
  if (s.script === undefined || s.flag === undefined) return undefined;
  return `${s.manifest}'s script "${s.script}" runs node-pg-migrate with ${s.flag}`;
}

/**
 * The TypeScript a build's output folder (`dist/migrations`) is likely made from: the same path
 * under `src/` (`src/migrations`), when that folder holds a TypeScript file; undefined otherwise.
 */
export async function builtFrom(root: string, dir: string): Promise<string | undefined> {
  const parts = path.posix.normalize(dir.replace(/\\/g, '/')).split('/');
  if (parts.length < 2 || parts[0] === 'src' || parts[0] === '..') return undefined;
  const source = ['src', ...parts.slice(1)].join('/');
  if (!(await isDirectory(path.resolve(root), source))) return undefined;
  const names = await readdir(path.join(root, source)).catch(() => [] as string[]);
  return names.some((n) => /\.[cm]?ts$/.test(n) && !n.endsWith('.d.ts')) ? source : undefined;
}

/**
 * A script that runs node-pg-migrate on a build's output (`-m dist/migrations` after `tsc`) names a
 * folder the repository does not hold, so it is no answer itself: its TypeScript sources are, where
 * the same path under `src/` holds some (`src/migrations`). Undefined when none does.
 */
async function builtDirHint(root: string, named: readonly ScriptedDir[]): Promise<string | undefined> {
  for (const s of named) {
    const said = scriptWords(s);
    const source = said === undefined ? undefined : await builtFrom(root, s.dir);
    if (said === undefined || source === undefined) continue;
    return (
      `${said}, a folder the repository does not hold (a build writes it), and the check reads migrations from the repository: ` +
      `set migrations.dir: ${source} in ${await configFileToEdit(root)}, the TypeScript they are built from, which the check loads through the project's TypeScript loader (tsx or ts-node) or node-pg-migrate 9's own.`
    );
  }
  return undefined;
}

/**
 * What to set migrations.dir to when `configured` (relative to `root`) does not exist: the first
 * existing directory a script runs node-pg-migrate on, said with the script that names it;
 * undefined when no script names one that exists.
 */
export async function migrationsDirHint(root: string, configured: string): Promise<string | undefined> {
  const want = path.posix.normalize(configured.replace(/\\/g, '/')).replace(/\/$/, '');
  const named = (await scriptedMigrationDirs(root)).filter((s) => s.dir !== want);
  const existing: ScriptedDir[] = [];
  // A folder git ignores (a build's output a local build left, `dist/migrations`) is in no commit:
  // the check would refuse it, so it is no answer either.
  for (const s of named)
    if ((await isDirectory(path.resolve(root), s.dir)) && !(await isIgnored(root, s.dir).catch(() => false)))
      existing.push(s);
  const [first] = existing;
  if (!first) return builtDirHint(root, named);
  const pkg = path.posix.dirname(first.manifest);
  const fromConfig = first.config
    ? `${first.config.file}${first.config.section ? `'s ${first.config.section} section` : ''} sets migrations-dir for node-pg-migrate`
    : undefined;
  const how = first.flag
    ? `with ${first.flag}`
    : fromConfig !== undefined
      ? `, and ${fromConfig}`
      : pkg === '.'
        ? `with its default -m ${DEFAULT_DIR}`
        : `in ${pkg} with its default -m ${DEFAULT_DIR}`;
  const said =
    first.script === undefined
      ? fromConfig!
      : `${first.manifest}'s script "${first.script}" runs node-pg-migrate${how.startsWith(',') ? '' : ' '}${how}`;
  const others = [...new Set(existing.map((s) => s.dir))].filter((d) => d !== first.dir);
  return (
    `${said}: set migrations.dir: ${first.dir} in ${await configFileToEdit(root)}` +
    (others.length ? ` (other scripts name ${others.join(', ')}).` : '.')
  );
}
