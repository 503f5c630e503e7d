/**
 * Loading a node-pg-migrate runner where migrations run: the migrations' child process
 * (apply-child.ts) and, for SQL alone, Consort's own. Kept apart from engine.ts, which decides
 * which engine a project deploys with (lockfiles, manifests, the cache) and needs zod, yaml and
 * npm for it: the child imports only this, so the wait for its first request holds node-pg-migrate,
 * pg and the TypeScript loader, not the rest of Consort.
 */
import { pathToFileURL } from 'node:url';
import type { runner as BundledRunner } from 'node-pg-migrate';

export type Runner = typeof BundledRunner;

/** node-pg-migrate 6–7 (CommonJS, `default` export) and 8–9 (ESM, named `runner`). */
export function runnerOf(mod: Record<string, unknown>): Runner | undefined {
  const candidates = [
    mod.runner,
    (mod.default as Record<string, unknown> | undefined)?.runner,
    (mod.default as Record<string, unknown> | undefined)?.default,
    mod.default,
  ];
  return candidates.find((c): c is Runner => typeof c === 'function');
}

let bundled: Promise<Runner> | undefined;

/** The node-pg-migrate bundled with Consort, imported on first use. */
export function bundledRunner(): Promise<Runner> {
  bundled ??= import('node-pg-migrate').then((m) => m.runner);
  return bundled;
}

/** The project's runner, or the bundled one when its package exports none Consort knows. */
export async function loadProjectRunner(entry: string): Promise<Runner> {
  return runnerOf((await import(pathToFileURL(entry).href)) as Record<string, unknown>) ?? (await bundledRunner());
}
