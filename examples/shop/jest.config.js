/** The shop's integration suite: native ESM (run jest under node --experimental-vm-modules), no transform. */
export default {
  testEnvironment: 'node',
  transform: {},
  testMatch: ['<rootDir>/test/**/*.test.js'],
  reporters: ['default', ['<rootDir>/test/junit-reporter.js', { outputFile: 'junit.xml' }]],
  testTimeout: 30000,
};
