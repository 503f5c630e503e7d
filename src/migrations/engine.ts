/**
 * Which node-pg-migrate applies the migrations: the project's own installed copy when it has one
 * (so a check applies exactly what its deploy applies: 7.x and 9 render some index options
 * differently), else the one bundled with Consort. The version that ran goes into the report.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { runner as bundledRunner } from 'node-pg-migrate';
import { z } from 'zod';
import { pinnedDependency } from '../tools/pinned-versions.js';

export type Runner = typeof bundledRunner;

export interface MigrationEngine {
  runner: Runner;
  version: string;
  /** `project`: the workspace's node_modules; `bundled`: Consort's own. */
  source: 'project' | 'bundled';
  /** The package directory it was loaded from. */
  dir: string;
  /** The project's copy: its entry file (it is imported only where it runs, in a child process). */
  entry?: string;
}

const PackageJson = z.object({ name: z.string(), version: z.string() });

async function packageAt(dir: string): Promise<z.infer<typeof PackageJson> | undefined> {
  const text = await readFile(path.join(dir, 'package.json'), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const parsed = PackageJson.safeParse(JSON.parse(text));
  return parsed.success ? parsed.data : undefined;
}

/** The package root above a resolved entry file. */
async function packageRoot(entry: string): Promise<string | undefined> {
  for (let dir = path.dirname(entry); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if ((await packageAt(dir))?.name === 'node-pg-migrate') return dir;
  }
  return undefined;
}

/** node-pg-migrate 6–7 (CommonJS, `default` export) and 8–9 (ESM, named `runner`). */
function runnerOf(mod: Record<string, unknown>): Runner | undefined {
  const candidates = [mod.runner, (mod.default as Record<string, unknown> | undefined)?.runner, (mod.default as Record<string, unknown> | undefined)?.default, mod.default];
  return candidates.find((c): c is Runner => typeof c === 'function');
}

let bundled: MigrationEngine | undefined;

export async function bundledEngine(): Promise<MigrationEngine> {
  if (bundled) return bundled;
  let dir = '';
  try {
    dir = (await packageRoot(createRequire(import.meta.url).resolve('node-pg-migrate'))) ?? '';
  } catch {
    // Inside the bundled Action there is no node_modules: the runner is in dist/index.js itself.
  }
  const version = (dir ? (await packageAt(dir))?.version : undefined) ?? pinnedDependency('node-pg-migrate');
  bundled = { runner: bundledRunner, version, source: 'bundled', dir };
  return bundled;
}

/** The project's node-pg-migrate when `workspace` has one installed, else the bundled one. */
export async function resolveEngine(workspace: string): Promise<MigrationEngine> {
  let entry: string;
  try {
    entry = createRequire(path.join(path.resolve(workspace), 'package.json')).resolve('node-pg-migrate');
  } catch {
    return bundledEngine();
  }
  const dir = await packageRoot(entry);
  const pkg = dir === undefined ? undefined : await packageAt(dir);
  const mine = await bundledEngine();
  if (dir === undefined || pkg === undefined || path.resolve(dir) === path.resolve(mine.dir)) return mine;
  // The project's code is never imported here (this may be the App's process): the runner loads it
  // where it runs, which for a project's engine is always a child process (isolated.ts).
  const runner = (async (options) => (await loadProjectRunner(entry))(options)) as Runner;
  return { runner, version: pkg.version, source: 'project', dir, entry };
}

/** The project's runner, or the bundled one when its package exports none Consort knows. */
export async function loadProjectRunner(entry: string): Promise<Runner> {
  return runnerOf(await import(pathToFileURL(entry).href) as Record<string, unknown>) ?? bundledRunner;
}

export function describeEngine(e: MigrationEngine): string {
  return `node-pg-migrate ${e.version} (${e.source === 'project' ? "the project's" : 'bundled with Consort'})`;
}
