/** jest's side of the options: `testEnvironmentOptions.consortDb` in the project's jest config. */
import { ConsortError } from '../../core/errors.js';
import { TestDatabasesOptions } from '../spec.js';
import { docsUrl } from '../../core/docs-url.js';

export function jestOptions(testEnvironmentOptions: Record<string, unknown> | undefined): TestDatabasesOptions {
  const parsed = TestDatabasesOptions.safeParse(testEnvironmentOptions?.consortDb ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${['consortDb', ...i.path].join('.')}: ${i.message}`).join('; ');
    throw new ConsortError('config', `Invalid testEnvironmentOptions in the jest config: ${problems}.`, {
      hint: `consortDb takes root, config, env, poolSize, ttl and respectExisting (see ${docsUrl('isolation.md')}).`,
    });
  }
  return parsed.data;
}

/** Where the run's setup keeps its handle for the teardown (same process, another module). */
export const RUN_HANDLE = Symbol.for('consort-db.jest.run');
