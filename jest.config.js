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
  // The live tests against the real cloud services are not part of the suite (they need the
  // network and credentials): `npm run test:live` runs them, see test/branches/live.test.ts.
  testPathIgnorePatterns: [
    '/node_modules/',
    ...(process.env.CONSORT_LIVE_TESTS === '1' ? [] : ['/test/branches/live\\.test\\.ts$']),
  ],
  setupFiles: ['<rootDir>/test/setup/no-network.ts', '<rootDir>/test/setup/npm-env.ts'],
  // One run directory for the run's embedded PostgreSQL clusters (one shared server, copies of one
  // initdb'd template), and the system server or its stand-in: see test/setup/clusters.ts.
  globalSetup: '<rootDir>/test/setup/global-setup.mjs',
  globalTeardown: '<rootDir>/test/setup/global-teardown.mjs',
  // Slowest files first, by jest's own timings or, on a machine without them (CI's fresh checkout),
  // by the committed test/setup/durations.json (scripts/test-durations.mjs regenerates it).
  testSequencer: '<rootDir>/test/setup/sequencer.mjs',
  // Four workers on the 2-core machines this runs on (jest's default there is one): most of a
  // file's time is spent waiting on PostgreSQL, git and child suites, which other files fill. The
  // whole suite on the idle 2-core box, 2026-12-01: 305.8 s with two workers, 264.9 s with three;
  // 2026-12-03 (a faster box, jest's timings cached): 190.4 s with three (28 s of the box's CPU
  // idle), 180.1 s with four (11 s idle), all green (see CONTRIBUTING.md). Files never share
  // state: each has its own namespace on the run's servers (test/helpers/servers.ts).
  maxWorkers: Math.max(4, os.availableParallelism()),
  // A worker is replaced after a file that leaves more than 300 MB of heap. The suite starts
  // thousands of processes (git, node, psql, the lanes' suites), and each start forks the worker:
  // Linux copies the worker's page tables, so a start costs 5-10 ms from a fresh worker (~130 MB
  // resident) and 20-60 ms once jest's ESM module registries have grown it past 500 MB (each file
  // leaves ~5-10 MB behind; a worker runs ~50 files of a run). 55 files in one worker, three runs
  // each way alternating at load 4-9: median 168.7 -> 119.0 s wall, 87.0 -> 78.3 s CPU (see CONTRIBUTING.md).
  workerIdleMemoryLimit: '300MB',
  testTimeout: 60000,
};
