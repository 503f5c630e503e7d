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

/** A tsconfig's `paths` as they apply: the file declaring them and the folder their targets are relative to. */
interface CompiledPaths {
  declaring: string;
  paths: Record<string, unknown>;
  /** The nearest `baseUrl` (relative to its file), else the folder of the file declaring `paths` (TypeScript 4.1+). */
  from: string;
  /** Whether a `baseUrl` is set: then a bare specifier no pattern matches is looked up under it too. */
  baseUrl: boolean;
}

/** `file`'s `paths` and `baseUrl`, with those it extends (relative ones; inside `root`); undefined when it sets neither. */
function compiledPaths(root: string, file: string): CompiledPaths | undefined {
  const chain = layers(root, file);
  // The nearest `paths` wins whole, as in tsc; its targets are relative to the nearest baseUrl (or to that file).
  const declaring = chain.find((l) => l.paths !== undefined);
  const base = chain.find((l) => l.baseUrl !== undefined);
  if (!declaring?.paths && !base) return undefined;
  const from = base ? path.resolve(path.dirname(base.file), base.baseUrl!) : path.dirname(declaring!.file);
  return { declaring: declaring?.file ?? base!.file, paths: declaring?.paths ?? {}, from, baseUrl: base !== undefined };
}

/**
 * Where a bare `specifier` may be, by the tsconfig at `file` (absolute, inside `root`), in the order
 * tsx tries them (get-tsconfig's paths matcher, as TypeScript resolves): an exact key's targets,
 * else the targets of the matching pattern with the longest prefix, else — with a `baseUrl` — the
 * specifier under it. Absolute paths without an extension; none for a relative or absolute
 * specifier, or a tsconfig without `paths` or `baseUrl`.
 */
export function pathCandidates(root: string, file: string): ((specifier: string) => string[]) | undefined {
  const compiled = compiledPaths(path.resolve(root), file);
  if (compiled === undefined) return undefined;
  const targets = (value: unknown): string[] =>
    Array.isArray(value) ? value.filter((t): t is string => typeof t === 'string') : [];
  return (specifier) => {
    if (specifier.startsWith('.') || path.isAbsolute(specifier)) return [];
    const exact = compiled.paths[specifier];
    if (exact !== undefined && !specifier.includes('*'))
      return targets(exact).map((t) => path.resolve(compiled.from, t));
    let best: { prefix: number; star: string; to: string[] } | undefined;
    for (const [pattern, to] of Object.entries(compiled.paths)) {
      const star = pattern.includes('*') ? capture(pattern, specifier) : undefined;
      const prefix = pattern.indexOf('*');
      if (star !== undefined && (best === undefined || prefix > best.prefix)) best = { prefix, star, to: targets(to) };
    }
    if (best === undefined) return compiled.baseUrl ? [path.join(compiled.from, specifier)] : [];
    return best.to.map((t) => path.resolve(compiled.from, t.replace('*', best.star)));
  };
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
  const compiled = compiledPaths(top, path.join(owner.dir, 'tsconfig.json'));
  if (compiled === undefined || Object.keys(compiled.paths).length === 0) return undefined;
  const { declaring, from } = compiled;
  const rel = (p: string) => path.relative(top, p).split(path.sep).join('/');
  for (const [pattern, targets] of Object.entries(compiled.paths)) {
    const star = capture(pattern, specifier);
    if (star === undefined) continue;
    const first = Array.isArray(targets) && typeof targets[0] === 'string' ? targets[0] : undefined;
    const target = first === undefined ? undefined : rel(path.resolve(from, first.replace('*', star)));
    return {
      tsconfig: rel(declaring),
      pattern,
      ...(target !== undefined && !target.startsWith('..') ? { target: target.replace(/\.[cm]?[jt]sx?$/, '') } : {}),
    };
  }
  return undefined;
}
