/** Jest in native ESM mode (node --experimental-vm-modules), TypeScript through ts-jest. */
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
  // No maxWorkers: jest's default on the 2-core machines this runs on is one worker. Two overlap
  // the files' waiting (a subset: 225 s -> 191 s), but on a loaded box the story-ordered lane
  // files then overrun their timeouts (see CONTRIBUTING.md): measure before raising it.
  testTimeout: 60000,
};
