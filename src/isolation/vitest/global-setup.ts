/**
 * vitest `globalSetup: ['consort-db/vitest/global-setup']`: prepare the migrated, seeded template, warm
 * its pool and keep it filled during the run; `provide` the run's spec to the test files. For options,
 * make a global setup file of your own: `export default consortDbSetup({ poolSize: 4 })`.
 */
import { ConsortError } from '../../core/errors.js';
import { startTestDatabases } from '../run.js';
import { SHARED_KEY, SPEC_KEY, TestDatabasesOptions, type RunSpec } from '../spec.js';
import { docsUrl } from '../../core/docs-url.js';
import { hintingErrors, withHintInMessage } from '../runner-error.js';

export { SPEC_KEY };

/** The part of vitest's TestProject the setup uses. */
interface Project {
  provide: ((key: typeof SPEC_KEY, value: RunSpec | null) => void) &
    ((key: typeof SHARED_KEY, value: string | null) => void);
  config: { root: string; maxWorkers?: number };
}

export function consortDbSetup(options: TestDatabasesOptions = {}): (project: Project) => Promise<() => Promise<void>> {
  const parsed = TestDatabasesOptions.safeParse(options);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw withHintInMessage(
      new ConsortError('config', `Invalid consortDbSetup options: ${problems}.`, {
        hint: `It takes root, config, env, poolSize, ttl and respectExisting (see ${docsUrl('isolation.md')}).`,
      }),
    );
  }
  return async (project) => {
    const started = await hintingErrors(() =>
      startTestDatabases({
        ...parsed.data,
        ...(parsed.data.root === undefined ? { root: project.config.root } : {}),
        ...(typeof project.config.maxWorkers === 'number' ? { workers: project.config.maxWorkers } : {}),
        log: (m) => process.stderr.write(`${m}\n`),
      }),
    );
    project.provide(SPEC_KEY, started.spec ?? null);
    project.provide(SHARED_KEY, started.spec ? null : started.envName);
    return started.stop;
  };
}

export default consortDbSetup();
