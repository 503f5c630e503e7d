/**
 * `import { test } from 'consort-db/vitest'`: vitest's `test` with a file-scoped `database` fixture —
 * a lease of the run's template for each test file that uses it, returned when the file ends. The
 * URL is also put in `process.env.DATABASE_URL` (or the configured variable) while the file runs.
 * Needs `globalSetup: ['consort-db/vitest/global-setup']`.
 */
import { inject, test as base } from 'vitest';
import { ConsortError } from '../../core/errors.js';
import { RunSpec, SHARED_KEY, SPEC_KEY } from '../spec.js';
import { leaseForFile } from '../worker.js';
import { hintingErrors } from '../runner-error.js';

declare module 'vitest' {
  interface ProvidedContext {
    consortDb: RunSpec | null;
    consortDbShared: string | null;
  }
}

export interface TestDatabase {
  /** The lease's branch name. */
  name: string;
  /** Its connection URL (the same as the variable's). */
  url: string;
  /** Taken ready-made from the template's warm pool. */
  pooled: boolean;
}

/** A lease for this file, with `process.env[envName]` pointing at it until `done`. */
export function leaseTestDatabase(): Promise<{ database: TestDatabase; done: () => Promise<void> }> {
  return hintingErrors(lease);
}

async function lease(): Promise<{ database: TestDatabase; done: () => Promise<void> }> {
  const provided = inject(SPEC_KEY) as unknown;
  if (provided === null) {
    // The global setup found the variable set and left it alone: every file shares that database.
    const url = process.env[inject(SHARED_KEY) ?? 'DATABASE_URL'] ?? '';
    return { database: { name: '', url, pooled: false }, done: async () => undefined };
  }
  if (provided === undefined) {
    throw new ConsortError('config', 'consort-db/vitest has no test run to lease a database from.', {
      hint: "Add globalSetup: ['consort-db/vitest/global-setup'] to the vitest config.",
    });
  }
  const spec = RunSpec.parse(provided);
  const { lease, done } = await leaseForFile(spec);
  const before = process.env[spec.envName];
  process.env[spec.envName] = lease.url;
  return {
    database: { name: lease.name, url: lease.url, pooled: lease.pooled },
    done: async () => {
      if (before === undefined) delete process.env[spec.envName];
      else process.env[spec.envName] = before;
      await done();
    },
  };
}

// eslint-disable-next-line no-empty-pattern -- vitest reads a fixture's dependencies from this pattern: none
export const test = base.extend('database', { scope: 'file' }, async ({}, { onCleanup }) => {
  const { database, done } = await leaseTestDatabase();
  onCleanup(done);
  return database;
});

export { SPEC_KEY };
