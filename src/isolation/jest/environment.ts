/**
 * jest `testEnvironment: 'consort-db/jest'`: jest's node environment, plus a database of its own for
 * each test file — a lease of the run's template, in the file's `process.env.DATABASE_URL` (or the
 * configured variable) before any of its modules load, returned when the file ends.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';
import type { TestEnvironment } from 'jest-environment-node';
import { ConsortError } from '../../core/errors.js';
import { parseRunSpec, RUN_SPEC_ENV, SHARED_ENV } from '../spec.js';
import { leaseForFile } from '../worker.js';
import { jestOptions } from './options.js';
import { hintingErrors } from '../runner-error.js';

/** jest's own node environment: the project's copy first (the one its jest runs with), else ours. */
function nodeEnvironment(): typeof TestEnvironment {
  for (const from of [path.join(process.cwd(), 'package.json'), import.meta.url]) {
    try {
      const mod = createRequire(from)('jest-environment-node') as {
        TestEnvironment?: typeof TestEnvironment;
        default?: typeof TestEnvironment;
      };
      const found = mod.TestEnvironment ?? mod.default;
      if (found) return found;
    } catch {
      // try the next place
    }
  }
  throw new ConsortError('config', 'consort-db/jest needs jest-environment-node (it comes with jest).', {
    hint: 'Install jest in the project: npm i -D jest.',
  });
}

const NodeEnvironment = nodeEnvironment();

export default class ConsortDbEnvironment extends NodeEnvironment {
  private readonly envName: string | undefined;
  private done: (() => Promise<void>) | undefined;

  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    super(config, context);
    this.envName = jestOptions(config.projectConfig.testEnvironmentOptions).env;
  }

  override async setup(): Promise<void> {
    await super.setup();
    await hintingErrors(() => this.lease());
  }

  private async lease(): Promise<void> {
    const text = process.env[RUN_SPEC_ENV];
    const shared = process.env[SHARED_ENV];
    const env = this.global.process.env;
    delete env[RUN_SPEC_ENV]; // the admin settings stay with the environment, not the test's code
    delete env[SHARED_ENV];
    if (text === undefined) {
      // The global setup left the variable as it was (its name may come from the configuration's suite.env).
      if (env[shared ?? this.envName ?? 'DATABASE_URL']) return;
      throw new ConsortError('config', 'consort-db/jest has no test run to lease a database from.', {
        hint: "Add globalSetup: 'consort-db/jest/global-setup' and globalTeardown: 'consort-db/jest/global-teardown' to the jest config.",
      });
    }
    const spec = parseRunSpec(text);
    const { lease, done } = await leaseForFile(spec);
    this.done = done;
    env[spec.envName] = lease.url;
    env.CONSORT_TEST_DATABASE = lease.name;
  }

  override async teardown(): Promise<void> {
    try {
      await this.done?.();
    } finally {
      this.done = undefined;
      await super.teardown();
    }
  }
}
