import { parseConfigText } from '../../src/config/load.js';
import { CHECK_STAGES, type ConsortConfig, defaultConfig, PROVIDERS } from '../../src/config/schema.js';

const FULL_YAML = `# yaml-language-server: $schema=../schema/consort.schema.json
database:
  provider: postgres
  parent: staging
  namespace: shop
  ttl: 7d
  seed:
    file: db/seed.sql
  promote: true
migrations:
  dir: db/migrations
  table: schema_migrations
  schema: [app, public]
  createSchema: true
  migrationsSchema: meta
  createMigrationsSchema: true
  decamelize: true
  checkOrder: false
  timeout: 1h
suite:
  command: npm run test:integration
  env: TEST_DATABASE_URL
  reports:
    - reports/junit.xml
    - packages/*/junit.xml
  timeout: 1h30m
  passEnv: [JWT_SECRET, STRIPE_TEST_KEY]
lint:
  rules: [ban-drop-column, prefer-robust-stmts]
  failOn: warning
  severity:
    require-concurrent-index-creation: warning
    prefer-bigint-over-int: error
reversibility:
  enabled: false
  requireDown: true
check:
  blocking: [migrations, suite]
  migrationsRole: admin
roles:
  driver:
    instructions: prompts/driver.md
    writes: ['src/**', '{migrations}/**']
    agent:
      backend: command
      command: node agents/driver.mjs
      timeout: 10m
agents:
  default:
    backend: command
    command: node agents/any.mjs
    model: scripted
gates:
  optional: [plan, deploy]
  mode: proxy
  approvers: [mona, octo-org/db-reviewers]
  selfApproval: true
build:
  tests: ['spec/**']
  design: [spec-author, dba, test-strategist]
  rejectBornGreen: false
  retries: 2
  repairRounds: 5
  turnTimeout: 45m
  experiments: 3
  branchPool: 0
pairing:
  envFile: .env.local
  envKey: APP_DATABASE_URL
  writeEnv: false
  rootGitBranches: [trunk]
`;

const FULL_CONFIG: ConsortConfig = {
  database: {
    provider: 'postgres',
    parent: 'staging',
    namespace: 'shop',
    ttl: '7d',
    seed: { kind: 'file', path: 'db/seed.sql' },
    promote: true,
  },
  migrations: {
    dir: 'db/migrations',
    table: 'schema_migrations',
    schema: ['app', 'public'],
    createSchema: true,
    migrationsSchema: 'meta',
    createMigrationsSchema: true,
    decamelize: true,
    checkOrder: false,
    ignorePattern: '\\..*',
    timeout: '1h',
  },
  suite: {
    command: 'npm run test:integration',
    env: 'TEST_DATABASE_URL',
    reports: ['reports/junit.xml', 'packages/*/junit.xml'],
    timeout: '1h30m',
    passEnv: ['JWT_SECRET', 'STRIPE_TEST_KEY'],
  },
  lint: {
    rules: ['ban-drop-column', 'prefer-robust-stmts'],
    failOn: 'warning',
    severity: { 'require-concurrent-index-creation': 'warning', 'prefer-bigint-over-int': 'error' },
  },
  reversibility: { enabled: false, requireDown: true },
  check: { blocking: ['migrations', 'suite'], migrationsRole: 'admin' },
  roles: {
    driver: {
      instructions: 'prompts/driver.md',
      writes: ['src/**', '{migrations}/**'],
      agent: { backend: 'command', command: 'node agents/driver.mjs', timeout: '10m' },
    },
  },
  agents: { default: { backend: 'command', command: 'node agents/any.mjs', model: 'scripted' } },
  gates: {
    optional: ['plan', 'deploy'],
    mode: 'proxy',
    approvers: ['mona', 'octo-org/db-reviewers'],
    selfApproval: true,
  },
  build: {
    tests: ['spec/**'],
    design: ['spec-author', 'dba', 'test-strategist'],
    rejectBornGreen: false,
    retries: 2,
    repairRounds: 5,
    turnTimeout: '45m',
    experiments: 3,
    branchPool: 0,
  },
  pairing: { envFile: '.env.local', envKey: 'APP_DATABASE_URL', writeEnv: false, rootGitBranches: ['trunk'] },
};

describe('defaults', () => {
  const DEFAULTS: ConsortConfig = {
    database: { provider: 'local', parent: 'main', promote: false },
    migrations: {
      dir: 'migrations',
      table: 'pgmigrations',
      createSchema: false,
      createMigrationsSchema: false,
      decamelize: false,
      checkOrder: true,
      ignorePattern: '\\..*',
      timeout: '30m',
    },
    suite: { command: 'npm test', env: 'DATABASE_URL', reports: [], timeout: '15m', passEnv: [] },
    lint: { rules: [], failOn: 'error', severity: {} },
    reversibility: { enabled: true, requireDown: false },
    check: { blocking: ['migrations', 'lint', 'reversibility', 'suite'], migrationsRole: 'branch' },
    roles: {},
    agents: {},
    gates: { optional: [], mode: 'human', approvers: [], selfApproval: false },
    build: {
      tests: [
        'test/**',
        'tests/**',
        '**/__tests__/**',
        '**/*.test.*',
        '**/*.spec.*',
        '**/test/**',
        '**/tests/**',
        '**/{test,spec}.{js,cjs,mjs,jsx,ts,cts,mts,tsx}',
        '**/*{-,_}test.{js,cjs,mjs,jsx,ts,cts,mts,tsx,py,go}',
        '**/*_spec.{js,cjs,mjs,jsx,ts,cts,mts,tsx}',
        '**/test{-,_}*.{js,cjs,mjs,jsx,ts,cts,mts,tsx,py}',
      ],
      design: ['spec-author', 'architect-reviewer', 'dba', 'test-strategist'],
      rejectBornGreen: true,
      retries: 1,
      repairRounds: 3,
      turnTimeout: '30m',
      experiments: 1,
      branchPool: 2,
    },
    pairing: { envFile: '.env', envKey: 'DATABASE_URL', writeEnv: true, rootGitBranches: ['main', 'master'] },
  };

  it.each([
    ['an empty YAML file', '', 'consort.yml'],
    ['a YAML file with only comments', '# nothing yet\n', 'consort.yml'],
    ['empty sections', 'database: {}\nsuite: {}\n', 'consort.yml'],
    ['an empty JSON object', '{}', 'consort.config.json'],
  ])('fills every key for %s', (_label, text, file) => {
    expect(parseConfigText(text, file)).toEqual(DEFAULTS);
  });

  it('defaultConfig() returns the defaults, fresh each time', () => {
    const first = defaultConfig();
    expect(first).toEqual(DEFAULTS);
    first.check.blocking.pop();
    expect(defaultConfig().check.blocking).toEqual([...CHECK_STAGES]);
  });

  it('fills the keys a partial file leaves out', () => {
    const config = parseConfigText('suite:\n  command: make test\n', 'consort.yml');
    expect(config.suite).toEqual({ ...DEFAULTS.suite, command: 'make test' });
    expect(config.database).toEqual(DEFAULTS.database);
  });
});

describe('valid files', () => {
  it('parses every key of a full YAML file', () => {
    expect(parseConfigText(FULL_YAML, '.github/consort.yml')).toEqual(FULL_CONFIG);
  });

  it('parses the same settings written as JSON, with $schema', () => {
    // The same settings as FULL_YAML; only the seed is written in its input form.
    const input = { ...FULL_CONFIG, database: { ...FULL_CONFIG.database, seed: { file: 'db/seed.sql' } } };
    const json = JSON.stringify({ $schema: './schema/consort.schema.json', ...input }, null, 2);
    const expected = { ...FULL_CONFIG, $schema: './schema/consort.schema.json' };
    expect(parseConfigText(json, 'consort.config.json')).toEqual(expected);
  });

  it.each([
    ['a single report glob becomes a list', 'suite:\n  reports: junit.xml\n', { suite: { reports: ['junit.xml'] } }],
    ['a single schema becomes a list', 'migrations:\n  schema: App_1\n', { migrations: { schema: ['App_1'] } }],
    [
      'a seed command',
      'database:\n  seed:\n    command: npm run seed\n',
      { database: { seed: { kind: 'command', command: 'npm run seed' } } },
    ],
    ['no blocking stage', 'check:\n  blocking: []\n', { check: { blocking: [] } }],
    ['a compound duration', 'suite:\n  timeout: 1h30m\n', { suite: { timeout: '1h30m' } }],
  ])('accepts %s', (_label, text, expected) => {
    expect(parseConfigText(text, 'consort.yml')).toMatchObject(expected);
  });

  it.each(PROVIDERS)('accepts the provider %s', (provider) => {
    expect(parseConfigText(`database:\n  provider: ${provider}\n`, 'consort.yml').database.provider).toBe(provider);
  });
});
