/** Jest in native ESM mode (node --experimental-vm-modules), TypeScript through ts-jest. */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }] },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  setupFiles: ['<rootDir>/test/setup/no-network.ts'],
  // One run directory for the run's embedded PostgreSQL clusters (one shared server, copies of one
  // initdb'd template), and the system server or its stand-in: see test/setup/clusters.ts.
  globalSetup: '<rootDir>/test/setup/global-setup.mjs',
  globalTeardown: '<rootDir>/test/setup/global-teardown.mjs',
  // Jest's default is one worker per core minus one: a single worker, one file at a time, on the
  // 2-core machines this runs on. The slow files wait on PostgreSQL, git and child processes, not
  // on the CPU, so two workers overlap that waiting (measured in CONTRIBUTING.md).
  maxWorkers: 2,
  testTimeout: 60000,
};
