/**
 * What a test run's setup hands its test files (the `RunSpec`), the options users give it, and the
 * channel leases are given back on. Only zod: a worker loading this loads nothing else.
 */
import { z } from 'zod';
import { MAX_POOL_SIZE } from '../branches/pool.js';
import { parseDuration } from '../core/duration.js';
import { ConsortError } from '../core/errors.js';

/**
 * The catalog database's NOTIFY channel for leases given back (`[namespace, lease]` as JSON). Dropping
 * a database makes the server take a checkpoint (0.5–3 s on a busy disk), so a test file does not
 * wait for it: it says it is done and the run's setup drops the lease in the background.
 */
export const RETURN_CHANNEL = 'consort_lease_return';

/** The key vitest's global setup provides the spec under (`inject(SPEC_KEY)` in the test files). */
export const SPEC_KEY = 'consortDb';

/** The environment variable that carries a run's spec to jest's workers (it holds the admin URL). */
export const RUN_SPEC_ENV = 'CONSORT_TEST_DATABASES_SECRET';

/**
 * The variable the global setup found already set and left alone, so every file shares its database
 * (respectExisting): the configuration's `suite.env`, which the files cannot read themselves. jest's
 * workers find it in this variable, vitest's files under this key (`inject(SHARED_KEY)`).
 */
export const SHARED_ENV = 'CONSORT_TEST_DATABASES_SHARED';
export const SHARED_KEY = 'consortDbShared';

/** What the user may set (jest: testEnvironmentOptions.consortDb; vitest: the global setup's options). */
export const TestDatabasesOptions = z.strictObject({
  /** The project root (default: the git top level of the working directory). */
  root: z.string().min(1).optional(),
  /** The Consort configuration file (default: .github/consort.yml or consort.config.json, or none). */
  config: z.string().min(1).optional(),
  /** The variable each test file finds its database URL in (default: the configuration's suite.env, DATABASE_URL). */
  env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
    .optional(),
  /** Ready copies of the template to keep (default: the number of workers, at least 2). */
  poolSize: z.number().int().min(0).max(MAX_POOL_SIZE).optional(),
  /** How long a lease lives if its file never returns it (a crash): a duration such as 30m (default 1h). */
  ttl: z
    .string()
    .refine((t) => {
      try {
        return parseDuration(t) > 0;
      } catch {
        return false;
      }
    }, 'must be a duration such as 30m or 2h')
    .optional(),
  /**
   * When the variable is already set (Consort's own check, a CI job with its database), use that
   * one database for every file, as without consort-db (default true).
   */
  respectExisting: z.boolean().optional(),
});
export type TestDatabasesOptions = z.infer<typeof TestDatabasesOptions>;

export const Snapshot = z.object({
  provider: z.enum(['local', 'postgres']),
  adminUrl: z.string().min(1),
  namespace: z.string().min(1),
  databasePrefix: z.string(),
  catalogDatabase: z.string().min(1),
  known: z.object({
    provider: z.enum(['local', 'postgres']),
    mode: z.enum(['clone', 'copy']),
    modeReason: z.string(),
    serverVersion: z.string(),
  }),
});

export const RunSpec = z.object({
  settings: Snapshot,
  template: z.string().min(1),
  run: z.string().min(1),
  envName: z.string().min(1),
  ttlMs: z.number().int().positive(),
});
export type RunSpec = z.infer<typeof RunSpec>;

export function parseRunSpec(text: string): RunSpec {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    data = undefined;
  }
  const parsed = RunSpec.safeParse(data);
  if (!parsed.success) {
    throw new ConsortError('config', `${RUN_SPEC_ENV} does not hold a test run's database settings.`, {
      hint: "It is set by consort-db's global setup: do not set it yourself; unset it and run the tests again.",
    });
  }
  return parsed.data;
}
