/**
 * Where a project's own scripts keep its migrations: each package.json script (the root's and its
 * workspace packages') that runs node-pg-migrate, with the directory it names (`-m db/migrations`,
 * `--migrations-dir db/migrations`, `--migrations-dir=db/migrations`) or node-pg-migrate's default
 * (`migrations`, in the directory the script runs in). Read only to tell a user whose configured
 * migrations directory does not exist what to set migrations.dir to. The manifests are the
 * repository's, untrusted: each is read only when it is a regular file inside it, and parsed with zod.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { readRegularFile, resolvedInside } from '../core/read-regular.js';

export interface ScriptedDir {
  /** The manifest holding the script, relative to the root (`package.json`, `packages/db/package.json`). */
  manifest: string;
  script: string;
  /** How the script names the directory (`-m db/migrations`); undefined: node-pg-migrate's default. */
  flag?: string;
  /** The directory, relative to the root, with `/` separators. */
  dir: string;
}

/** node-pg-migrate's own default for `--migrations-dir`. */
const DEFAULT_DIR = 'migrations';
/** Enough for any real monorepo; a pattern matching more is not read further. */
const MAX_PACKAGES = 500;

const Manifest = z
  .object({
    scripts: z.record(z.string(), z.string()).optional(),
    workspaces: z
      .union([z.array(z.string()), z.object({ packages: z.array(z.string()).optional() }).loose()])
      .optional(),
  })
  .loose();
const PnpmWorkspace = z.object({ packages: z.array(z.string()).optional() }).loose();

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

const unquote = (s: string): string => s.replace(/^(['"])(.*)\1$/, '$2');

/**
 * The migrations directory each node-pg-migrate command of `script` uses, relative to the
 * directory the script runs in (a `cd dir &&` before it counts).
 */
export function dirsInScript(script: string): { flag?: string; dir: string }[] {
  const found: { flag?: string; dir: string }[] = [];
  let cwd = '.';
  for (const command of script.split(/&&|\|\||[;|\n]/)) {
    const words = command.trim().split(/\s+/).filter(Boolean).map(unquote);
    if (words[0] === 'cd' && words[1] !== undefined) {
      cwd = path.posix.join(cwd, words[1]);
      continue;
    }
    const at = words.findIndex((w) => /(?:^|\/)node-pg-migrate$/.test(w));
    if (at < 0) continue;
    let named: { flag: string; dir: string } | undefined;
    for (let i = at + 1; i < words.length && !named; i++) {
      const w = words[i]!;
      const eq = /^(-m|--migrations-dir|--migrationsDir)=(.+)$/.exec(w);
      if (eq) named = { flag: `${eq[1]} ${eq[2]}`, dir: eq[2]! };
      else if (/^(-m|--migrations-dir|--migrationsDir)$/.test(w) && words[i + 1] !== undefined)
        named = { flag: `${w} ${words[i + 1]}`, dir: words[i + 1]! };
    }
    const dir = named?.dir ?? DEFAULT_DIR;
    if (path.posix.isAbsolute(dir)) continue;
    found.push({ ...(named ? { flag: named.flag } : {}), dir: path.posix.join(cwd, dir) });
  }
  return found;
}

/** Every migrations directory the root's and its workspace packages' scripts run node-pg-migrate on. */
export async function scriptedMigrationDirs(root: string): Promise<ScriptedDir[]> {
  const top = path.resolve(root);
  const rootManifest = manifestAt(top, top);
  const out: ScriptedDir[] = [];
  for (const pkg of ['', ...(await workspacePackages(top, rootManifest))]) {
    const manifest = pkg === '' ? rootManifest : manifestAt(top, path.join(top, pkg));
    for (const [script, text] of Object.entries(manifest?.scripts ?? {})) {
      for (const { flag, dir } of dirsInScript(text)) {
        const joined = path.posix.join(pkg || '.', dir);
        if (joined === '..' || joined.startsWith('../')) continue;
        out.push({ manifest: path.posix.join(pkg, 'package.json'), script, ...(flag ? { flag } : {}), dir: joined });
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

/**
 * What to set migrations.dir to when `configured` (relative to `root`) does not exist: the first
 * existing directory a script runs node-pg-migrate on, said with the script that names it;
 * undefined when no script names one that exists.
 */
export async function migrationsDirHint(root: string, configured: string): Promise<string | undefined> {
  const want = path.posix.normalize(configured.replace(/\\/g, '/')).replace(/\/$/, '');
  const named = (await scriptedMigrationDirs(root)).filter((s) => s.dir !== want);
  const existing: ScriptedDir[] = [];
  for (const s of named) if (await isDirectory(path.resolve(root), s.dir)) existing.push(s);
  const [first] = existing;
  if (!first) return undefined;
  const pkg = path.posix.dirname(first.manifest);
  const how = first.flag
    ? `with ${first.flag}`
    : pkg === '.'
      ? `with its default -m ${DEFAULT_DIR}`
      : `in ${pkg} with its default -m ${DEFAULT_DIR}`;
  const others = [...new Set(existing.map((s) => s.dir))].filter((d) => d !== first.dir);
  return (
    `${first.manifest}'s script "${first.script}" runs node-pg-migrate ${how}: set migrations.dir: ${first.dir} in .github/consort.yml` +
    (others.length ? ` (other scripts name ${others.join(', ')}).` : '.')
  );
}
