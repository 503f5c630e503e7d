/** The version reported by `consort --version` and written into reports. Kept in step with package.json by a test. */
export const VERSION = '0.1.0';
