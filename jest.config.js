/** Jest in native ESM mode (node --experimental-vm-modules), TypeScript through ts-jest. */
import os from 'node:os';

export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // Its package.json sends jest's resolver to the CommonJS build, which ESM mode cannot run.
    '^@sparticuz/chromium$': '<rootDir>/node_modules/@sparticuz/chromium/build/esm/index.js',
  },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }] },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  setupFiles: ['<rootDir>/test/setup/no-network.ts'],
  // One run directory for the run's embedded PostgreSQL clusters (one shared server, copies of one
  // initdb'd template), and the system server or its stand-in: see test/setup/clusters.ts.
  globalSetup: '<rootDir>/test/setup/global-setup.mjs',
  globalTeardown: '<rootDir>/test/setup/global-teardown.mjs',
  // At least two workers (jest's default is one on 2 cores): most of a file's time is spent waiting
  // on PostgreSQL, git and child suites, which a second file fills. A subset of eleven files: 249 s
  // with one worker, 179 s with two, at load 15-20 (see CONTRIBUTING.md). Files never share state:
  // each has its own namespace on the run's servers (test/helpers/servers.ts).
  maxWorkers: Math.max(2, os.availableParallelism() - 1),
  testTimeout: 60000,
};
