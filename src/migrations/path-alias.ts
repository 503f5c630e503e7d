/**
 * Whether a module a migration could not load is a TypeScript path alias (`compilerOptions.paths`
 * of the tsconfig.json of the package that owns the migrations: `"api/*": ["src/api/*"]`) rather
 * than a package. Node's resolution, which node-pg-migrate loads migrations with, never reads
 * `paths`: a project whose deploy registers `tsconfig-paths` (`ts-node -r tsconfig-paths/register
 * node_modules/.bin/node-pg-migrate`, or node-pg-migrate 9's `--tsconfig-paths`) loads them there
 * and nowhere else, and "install the dependencies" is no answer. The files are the repository's: read only when regular and inside it,
 * as data, with comments and trailing commas allowed as tsc allows them.
 */
import path from 'node:path';
import { readRegularFile, resolvedInside } from '../core/read-regular.js';
import { migrationsPackage } from './project-packages.js';

export interface PathAlias {
  /** The tsconfig that declares it, relative to the root (`tsconfig.json`, `packages/db/tsconfig.base.json`). */
  tsconfig: string;
  /** The `paths` key it matches (`api/*`). */
  pattern: string;
  /** Where its first target points, relative to the root, without an extension (`src/api/database/tables`). */
  target?: string;
}

/** tsconfig.json is JSONC: `//` and block comments, trailing commas. Strings are kept as they are. */
function parseJsonc(text: string): unknown {
  const bare = text
    .replace(/("(?:[^"\\]|\\.)*")|\/\/[^\n]*|\/\*[\s\S]*?\*\//g, (_m, s: string | undefined) => s ?? '')
    .replace(/("(?:[^"\\]|\\.)*")|,(\s*[}\]])/g, (m, s: string | undefined, close: string | undefined) =>
      s !== undefined ? s : (close ?? m),
    );
  return JSON.parse(bare);
}

interface TsconfigLayer {
  file: string;
  paths?: Record<string, unknown>;
  baseUrl?: string;
}

/** The tsconfig and those it `extends` by relative path, nearest first (at most 5; a package name is not followed). */
function layers(root: string, first: string): TsconfigLayer[] {
  const out: TsconfigLayer[] = [];
  for (let file: string | undefined = first; file !== undefined && out.length < 5;) {
    const real = resolvedInside(root, file);
    const text = real === null ? undefined : readRegularFile(real)?.toString('utf8');
    if (text === undefined) break;
    let data: { extends?: unknown; compilerOptions?: { paths?: unknown; baseUrl?: unknown } };
    try {
      data = parseJsonc(text) as typeof data;
    } catch {
      break;
    }
    const options = data?.compilerOptions;
    out.push({
      file,
      ...(options?.paths && typeof options.paths === 'object'
        ? { paths: options.paths as Record<string, unknown> }
        : {}),
      ...(typeof options?.baseUrl === 'string' ? { baseUrl: options.baseUrl } : {}),
    });
    const next = typeof data?.extends === 'string' && data.extends.startsWith('.') ? data.extends : undefined;
    file =
      next === undefined ? undefined : path.resolve(path.dirname(file), next.endsWith('.json') ? next : `${next}.json`);
  }
  return out;
}

/** The `*` a pattern (`api/*`, or an exact key) captures from `specifier`, or undefined when it does not match. */
function capture(pattern: string, specifier: string): string | undefined {
  const star = pattern.indexOf('*');
  if (star < 0) return pattern === specifier ? '' : undefined;
  const [head, tail] = [pattern.slice(0, star), pattern.slice(star + 1)];
  return specifier.length >= head.length + tail.length && specifier.startsWith(head) && specifier.endsWith(tail)
    ? specifier.slice(head.length, specifier.length - tail.length)
    : undefined;
}

/**
 * The path alias `specifier` is, in the tsconfig.json of the package that owns `migrationsDir`
 * (relative to `root`) or one it extends; undefined when it is none (a package, or no tsconfig).
 */
export async function pathAlias(
  root: string,
  migrationsDir: string,
  specifier: string,
): Promise<PathAlias | undefined> {
  if (specifier.startsWith('.') || path.isAbsolute(specifier)) return undefined;
  const top = path.resolve(root);
  const owner = await migrationsPackage(top, migrationsDir);
  const chain = layers(top, path.join(owner.dir, 'tsconfig.json'));
  // The nearest `paths` wins whole, as in tsc; its targets are relative to the nearest baseUrl (or to that file).
  const declaring = chain.find((l) => l.paths !== undefined);
  if (!declaring?.paths) return undefined;
  const base = chain.find((l) => l.baseUrl !== undefined);
  const from = base ? path.resolve(path.dirname(base.file), base.baseUrl!) : path.dirname(declaring.file);
  const rel = (p: string) => path.relative(top, p).split(path.sep).join('/');
  for (const [pattern, targets] of Object.entries(declaring.paths)) {
    const star = capture(pattern, specifier);
    if (star === undefined) continue;
    const first = Array.isArray(targets) && typeof targets[0] === 'string' ? targets[0] : undefined;
    const target = first === undefined ? undefined : rel(path.resolve(from, first.replace('*', star)));
    return {
      tsconfig: rel(declaring.file),
      pattern,
      ...(target !== undefined && !target.startsWith('..') ? { target: target.replace(/\.[cm]?[jt]sx?$/, '') } : {}),
    };
  }
  return undefined;
}
