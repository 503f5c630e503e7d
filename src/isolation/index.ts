/**
 * `import … from 'consort-db'`: a database per test file for any runner. Run `startTestDatabases`
 * once per test run (it prepares the template and keeps its pool warm), give each file a
 * `leaseForFile(spec)`, and `stop` the run at the end. jest and vitest have ready-made wiring:
 * `consort-db/jest` and `consort-db/vitest` (see docs/isolation.md).
 */
export { DEFAULT_LEASE_TTL_MS, isLeaseName, leaseBranch, releaseBranch, sweepLeases, type Lease } from './lease.js';
export {
  leaseForFile,
  parseRunSpec,
  RUN_SPEC_ENV,
  startTestDatabases,
  type RunSpec,
  type StartedRun,
  type TestDatabasesOptions,
} from './run.js';
export { prepareTestTemplate, type TestTemplate } from './template.js';
