/**
 * Reading the configuration file and turning every problem into `file:line:col` text. YAML is
 * parsed into a document (not straight to objects) so each zod issue path can be traced back to
 * the key that caused it; JSON files are re-read as YAML, a superset, only to get those positions.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { type Document, isMap, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { ConsortError } from '../core/errors.js';
import { INSIDE_HINT, resolvedInside } from '../core/read-regular.js';
import { CONFIG_ENV_VARS, ConsortConfigSchema, type ConsortConfig, defaultConfig, KNOWN_KEYS, show } from './schema.js';
import { docsUrl } from '../core/docs-url.js';
import { CONFIG_FILES, configFilesIn } from './files.js';

export { CONFIG_FILES } from './files.js';

export interface ConfigProblem {
  file: string;
  /** 1-based; null when the position could not be recovered. */
  line: number | null;
  column: number | null;
  /** Dotted key (`suite.reports[1]`), '' for the document itself. */
  key: string;
  /** Complete text after the position, e.g. `lint.failOn: expected one of …`. */
  message: string;
  secret?: true;
}

/** A configuration error that keeps its problems as data, e.g. for check-run annotations. */
export class ConfigError extends ConsortError {
  readonly problems: readonly ConfigProblem[];

  constructor(file: string, problems: ConfigProblem[]) {
    const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
    // A secret's problem line already says where it belongs (the environment): not said twice.
    const hint = problems.every((p) => p.secret)
      ? `Delete ${problems.length === 1 ? 'that key' : 'those keys'} from ${file}.`
      : `Fix the settings listed; every key is described in ${docsUrl('configuration.md')}.`;
    const lines = [`Invalid Consort configuration in ${file} (${count}):`, ...problems.map(formatProblem)];
    super('config', lines.join('\n'), { hint });
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export type ConfigCheck = { ok: true; config: ConsortConfig } | { ok: false; problems: ConfigProblem[] };

type Position = { line: number; col: number } | null;
type Locate = (keyPath: readonly PropertyKey[]) => Position;

export function formatProblem(p: ConfigProblem): string {
  return p.line === null ? `${p.file}: ${p.message}` : `${p.file}:${p.line}:${p.column} ${p.message}`;
}

/** Validate config text without throwing: the App reports the problems as annotations. */
export function checkConfigText(text: string, fileName: string): ConfigCheck {
  const parsed = fileName.toLowerCase().endsWith('.json') ? readJson(text, fileName) : readYaml(text, fileName);
  if ('problems' in parsed) return { ok: false, problems: parsed.problems };
  const result = ConsortConfigSchema.safeParse(parsed.data ?? {}, { error: defaultMessage });
  if (result.success) return { ok: true, config: result.data };
  const problems = result.error.issues.flatMap((issue) => issueProblems(issue, fileName, parsed.locate));
  return { ok: false, problems: problems.sort(byPosition) };
}

/** Parse config text (YAML, or JSON when `fileName` ends in `.json`); throws ConfigError. */
export function parseConfigText(text: string, fileName: string): ConsortConfig {
  const checked = checkConfigText(text, fileName);
  if (!checked.ok) throw new ConfigError(fileName, checked.problems);
  return checked.config;
}

/**
 * Find and parse the project's configuration. `source` is the file read, relative to
 * `projectRoot` (absolute when outside it), or null when there is none and defaults apply.
 */
export async function loadConfig(
  projectRoot: string,
  options: { path?: string } = {},
): Promise<{ config: ConsortConfig; source: string | null }> {
  const source = options.path !== undefined ? displayPath(projectRoot, options.path) : await discover(projectRoot);
  if (source === null) return { config: defaultConfig(), source: null };
  let text: string;
  try {
    const file = path.resolve(projectRoot, source);
    // A file of the repository (found, or named inside it) must stay inside it: a pull request can
    // make `.github/consort.yml` a link to /proc/self/environ, and the parse error would quote this
    // process's environment (tokens among it) into the log or the check's comment.
    if (!path.isAbsolute(source) && resolvedInside(projectRoot, file) === null && existsSync(file))
      throw new ConsortError('config', `Config file ${source} leads outside the repository.`, {
        hint: INSIDE_HINT,
      });
    text = await readFile(file, 'utf8');
  } catch (cause) {
    if (cause instanceof ConsortError) throw cause;
    const missing = (cause as NodeJS.ErrnoException).code === 'ENOENT';
    if (missing) {
      throw new ConsortError('config', `Config file ${source} not found.`, {
        hint: `Check the path, or omit it to use ${CONFIG_FILES.join(', ')} or the defaults.`,
        cause,
      });
    }
    throw new ConsortError('config', `Cannot read config file ${source}.`, { hint: 'Check its permissions.', cause });
  }
  return { config: parseConfigText(text, source), source };
}

async function discover(projectRoot: string): Promise<string | null> {
  const found = await configFilesIn(projectRoot);
  if (found.length > 1) {
    const message = `Found ${found.length} config files: ${found.join(', ')}. Consort reads exactly one.`;
    throw new ConsortError('config', message, { hint: 'Keep one of them and delete the others; they are not merged.' });
  }
  return found[0] ?? null;
}

function displayPath(projectRoot: string, file: string): string {
  const absolute = path.resolve(projectRoot, file);
  const relative = path.relative(projectRoot, absolute);
  const outside = relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative);
  return outside ? absolute : relative.split(path.sep).join('/');
}

type Parsed = { data: unknown; locate: Locate } | { problems: ConfigProblem[] };

function readYaml(text: string, file: string): Parsed {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  if (doc.errors.length > 0) {
    return {
      problems: doc.errors.map((e) => {
        const at = lines.linePos(e.pos[0]);
        return { file, line: at.line, column: at.col, key: '', message: `invalid YAML: ${firstLine(e.message)}` };
      }),
    };
  }
  return { data: doc.toJS(), locate: locator(doc, lines) };
}

function readJson(text: string, file: string): Parsed {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    const offset = /at position (\d+)/.exec(message)?.[1];
    const at = offset === undefined ? null : positionAt(text, Number(offset));
    const problem = { file, line: at?.line ?? null, column: at?.col ?? null, key: '' };
    // V8 quotes a slice of the text in some messages; drop it, the text may hold a secret.
    const reason = message.replace(/ (in JSON )?at position \d+.*$/s, '').replace(/, ".*" is not valid JSON$/s, '');
    return { problems: [{ ...problem, message: `invalid JSON: ${reason}` }] };
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  // JSON.parse silently keeps the last of duplicate keys; that is nearly always a mistake.
  const duplicates = doc.errors.filter((e) => e.code === 'DUPLICATE_KEY');
  if (duplicates.length > 0) {
    return {
      problems: duplicates.map((e) => {
        const at = lines.linePos(e.pos[0]);
        const message = 'invalid JSON: a key appears twice in the same object';
        return { file, line: at.line, column: at.col, key: '', message };
      }),
    };
  }
  return { data, locate: doc.errors.length > 0 ? () => null : locator(doc, lines) };
}

/** Position of the key (or list item) a path names; the deepest existing ancestor when it is absent. */
function locator(doc: Document, lines: LineCounter): Locate {
  return (keyPath) => {
    let node: unknown = doc.contents;
    let offset = doc.contents?.range?.[0] ?? 0;
    for (const segment of keyPath) {
      if (isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(segment));
        if (pair === undefined || !isScalar(pair.key)) break;
        offset = pair.key.range?.[0] ?? offset;
        node = pair.value;
      } else if (isSeq(node) && typeof segment === 'number') {
        const item: unknown = node.items[segment];
        if (!isScalar(item) && !isMap(item) && !isSeq(item)) break;
        offset = item.range?.[0] ?? offset;
        node = item;
      } else {
        break;
      }
    }
    return lines.linePos(offset);
  };
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  object: 'a map',
  array: 'a list',
};

/** Messages for issues whose schema gives none of its own (zod's defaults are not written for YAML users). */
const defaultMessage: z.core.$ZodErrorMap = (issue) => {
  const got = `got ${show(issue.input)}`;
  if (issue.code === 'invalid_type') return `expected ${EXPECTED[issue.expected] ?? issue.expected}, ${got}`;
  if (issue.code === 'invalid_value') return `expected one of ${issue.values.map(String).join('|')}, ${got}`;
  return undefined;
};

const SECRET_KEY = /^(url|uri|dsn|password|passwd|token|secret|api[-_]?key|connection[-_]?string)$/i;

function issueProblems(issue: z.core.$ZodIssue, file: string, locate: Locate): ConfigProblem[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((name) => {
      const keyPath = [...issue.path, name];
      const key = dotted(keyPath);
      const at = locate(keyPath);
      const base = { file, line: at?.line ?? null, column: at?.col ?? null, key };
      if (key === 'database.postgres' || SECRET_KEY.test(name)) {
        const env = CONFIG_ENV_VARS.postgresUrl;
        const why = `connection URLs and other secrets are read from the environment (${env}), never from the file`;
        return { ...base, message: `key "${key}" is not allowed: ${why}`, secret: true as const };
      }
      // A flat `suite.command:` is an easy slip after reading dotted names in the docs.
      const nested = [...issue.path, ...name.split('.')];
      if (name.includes('.') && KNOWN_KEYS.includes(dotted(nested))) {
        const [section, ...rest] = name.split('.');
        const how = `dotted names are not expanded; nest "${rest.join('.')}" under "${section}"`;
        return { ...base, message: `unknown key "${key}": ${how}` };
      }
      const suggestions = suggestKeys(nested).map((k) => `"${k}"`);
      const suggestion = suggestions.length > 0 ? ` (did you mean ${suggestions.join(' or ')}?)` : '';
      return { ...base, message: `unknown key "${key}"${suggestion}` };
    });
  }
  const key = dotted(issue.path);
  const at = locate(issue.path);
  const root = () => `the file ${issue.message.replace(/^expected a map/, 'must be a map of settings')}`;
  const message = key === '' ? root() : `${key}: ${issue.message}`;
  return [{ file, line: at?.line ?? null, column: at?.col ?? null, key, message }];
}

function dotted(keyPath: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of keyPath) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out;
}

/** A sibling with a close spelling, else the same name in another section (a misplaced key). */
function suggestKeys(keyPath: readonly PropertyKey[]): string[] {
  const parent = dotted(keyPath.slice(0, -1));
  const name = String(keyPath.at(-1)).toLowerCase();
  const leaf = (key: string): string => key.slice(key.lastIndexOf('.') + 1).toLowerCase();
  const siblings = KNOWN_KEYS.filter((key) => key.slice(0, Math.max(0, key.lastIndexOf('.'))) === parent);
  const limit = Math.min(3, Math.max(1, Math.floor(name.length / 3)));
  const close = siblings
    .map((key) => ({ key, distance: editDistance(name, leaf(key)) }))
    .filter((c) => c.distance <= limit)
    .sort((a, b) => a.distance - b.distance)[0];
  if (close) return [close.key];
  // The same name elsewhere: the shallowest ones (`timeout` is both migrations.timeout and suite.timeout).
  const same = KNOWN_KEYS.filter((key) => leaf(key) === name);
  const depth = (key: string): number => key.split('.').length;
  const least = Math.min(...same.map(depth));
  return same.filter((key) => depth(key) === least).slice(0, 3);
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

function positionAt(text: string, offset: number): { line: number; col: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, col: (before.at(-1)?.length ?? 0) + 1 };
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? message;
}

function byPosition(a: ConfigProblem, b: ConfigProblem): number {
  return (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0);
}
