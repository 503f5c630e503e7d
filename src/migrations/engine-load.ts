/**
 * Loading a node-pg-migrate runner where migrations run: the migrations' child process
 * (apply-child.ts) and, for SQL alone, Consort's own. Kept apart from engine.ts, which decides
 * which engine a project deploys with (lockfiles, manifests, the cache) and needs zod, yaml and
 * npm for it: the child imports only this, so the wait for its first request holds node-pg-migrate,
 * pg and the TypeScript loader, not the rest of Consort.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type { runner as BundledRunner } from 'node-pg-migrate';

export type Runner = typeof BundledRunner;

/** node-pg-migrate 3–7 (CommonJS, `default` export) and 8–9 (ESM, named `runner`). */
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
  const runner = runnerOf((await import(pathToFileURL(entry).href)) as Record<string, unknown>);
  if (runner === undefined) return bundledRunner();
  const proto = engineClientPrototype(entry);
  return ((options) => runner(asOlderEnginesRead(options, proto))) as Runner;
}

type RunnerOptions = Parameters<Runner>[0];

/**
 * The options as node-pg-migrate 3 and 4 read them too (5 and later read them as given, and take
 * `logger` over `log`): the client an instance of their own pg.Client, and the logger's `info` as
 * `log`, the only logger 3 reads. Without it 3 printed its `### MIGRATION <name> (UP) ###` lines to
 * stdout, the capture attributed no statement to any migration (lint saw none, a failure named none).
 */
function asOlderEnginesRead(options: RunnerOptions, proto: object | undefined): RunnerOptions {
  return {
    ...options,
    ...(options.logger && !options.log ? { log: (msg: string) => options.logger!.info(msg) } : {}),
    ...('dbClient' in options && proto !== undefined ? { dbClient: asClientOf(options.dbClient, proto) } : {}),
  };
}

/**
 * The prototype of the `pg.Client` the engine imports itself, or undefined when it resolves no
 * `pg`. node-pg-migrate 3 and 4 use `dbClient` only when it is `instanceof` that class (5 and later
 * take any object with a `query` method): anything else, such as Consort's client from its own
 * copy of pg, becomes the configuration of a client of their own, which takes over the given
 * one's live socket (its `connection` field) and sends a second start-up message on it. The server
 * answers "invalid frontend message type 0", and a history these versions apply by hand failed
 * every check as a lost connection.
 */
function engineClientPrototype(entry: string): object | undefined {
  try {
    const pg = createRequire(entry)('pg') as { Client?: unknown };
    return typeof pg.Client === 'function' ? (pg.Client.prototype as object) : undefined;
  } catch {
    return undefined; // no pg beside it: the engine cannot test against one either
  }
}

/** `client` as an instance of the engine's pg.Client: only its prototype differs, every read is the client's. */
function asClientOf<T extends object>(client: T, proto: object): T {
  if (Object.prototype.isPrototypeOf.call(proto, client)) return client;
  return new Proxy(client, { getPrototypeOf: () => proto });
}
