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
  testTimeout: 60000,
};
