/**
 * node-pg-migrate engines as a project has them installed, for tests that apply migrations in the
 * migration child: Consort's own devDependencies stand in for the project's packages.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MigrationEngine } from '../../src/migrations/engine.js';

/** Consort's repository root: the project whose node_modules hold the stand-ins. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const requireHere = createRequire(import.meta.url);

/** node-pg-migrate 7.9.1 (CommonJS) with tsx, as `node-pg-migrate --tsx` deploys TypeScript migrations. */
export const tsxEngine7: MigrationEngine = {
  runner: (() => Promise.reject(new Error('loaded in the child'))) as unknown as MigrationEngine['runner'],
  version: '7.9.1',
  source: 'project',
  dir: path.dirname(requireHere.resolve('node-pg-migrate-7/package.json')),
  entry: requireHere.resolve('node-pg-migrate-7'),
  tsLoader: { name: 'tsx', workspace: REPO_ROOT },
};
