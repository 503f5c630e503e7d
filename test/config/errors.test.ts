import { checkConfigText, ConfigError, parseConfigText } from '../../src/config/load.js';
import { isConsortError } from '../../src/core/errors.js';

/** The thrown error's problem lines, without the heading. */
function problemLines(text: string, file: string): string[] {
  try {
    parseConfigText(text, file);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return e.message.split('\n').slice(1);
  }
  throw new Error('expected the configuration to be rejected');
}

describe('errors name the file, line, column and key', () => {
  const Y = '.github/consort.yml';
  const EXAMPLES = 'such as 90s, 15m, 1h30m or 7d';

  it.each([
    [
      'an enum value',
      'lint:\n  failOn: fatal\n',
      [`${Y}:2:3 lint.failOn: expected one of error|warning|none, got "fatal"`],
    ],
    [
      'a misspelt key',
      'suite:\n  comand: x\n',
      [`${Y}:2:3 unknown key "suite.comand" (did you mean "suite.command"?)`],
    ],
    [
      'an approver that is neither a login nor a team',
      'gates:\n  approvers: [mona, "@octo-org/reviewers"]\n',
      [`${Y}:2:21 gates.approvers[1]: must be a GitHub login or a team as "org/team-slug"`],
    ],
    [
      "a migrations table node-pg-migrate's decamelize would break",
      'migrations:\n  decamelize: true\n  table: schemaVersions\n',
      [
        `${Y}:3:3 migrations.table: with decamelize, node-pg-migrate needs it in snake_case ("schema_versions"): it decamelizes the name in some of its statements and not in others`,
      ],
    ],
    [
      'a misplaced key',
      'timeout: 3m\n',
      [`${Y}:1:1 unknown key "timeout" (did you mean "migrations.timeout" or "suite.timeout"?)`],
    ],
    [
      "a runner's credential passed to the suite",
      'suite:\n  passEnv: [JWT_SECRET, GITHUB_TOKEN, neon_api_key]\n',
      [
        `${Y}:2:25 suite.passEnv[1]: GITHUB_TOKEN is a credential of the runner, the GitHub App, Consort or its providers: it never reaches a project's code`,
        `${Y}:2:39 suite.passEnv[2]: neon_api_key is a credential of the runner, the GitHub App, Consort or its providers: it never reaches a project's code`,
      ],
    ],
    [
      'an ignore pattern that is no regular expression',
      "migrations:\n  ignorePattern: '*.md'\n",
      [
        `${Y}:2:3 migrations.ignorePattern: "*.md" is not a valid regular expression (JavaScript syntax, as --ignore-pattern takes)`,
      ],
    ],
    [
      'a key in the wrong case',
      'lint:\n  failon: none\n',
      [`${Y}:2:3 unknown key "lint.failon" (did you mean "lint.failOn"?)`],
    ],
    ['a key with no close match', 'colour: red\n', [`${Y}:1:1 unknown key "colour"`]],
    [
      'a misspelt dotted key',
      'suite.comand: x\n',
      [`${Y}:1:1 unknown key "suite.comand" (did you mean "suite.command"?)`],
    ],
    [
      'a flat dotted key',
      'lint:\n  failOn: none\nsuite.command: make\n',
      [`${Y}:3:1 unknown key "suite.command": dotted names are not expanded; nest "command" under "suite"`],
    ],
    ['a number for a string', 'suite:\n  command: 42\n', [`${Y}:2:3 suite.command: expected a string, got number 42`]],
    [
      'a string for a boolean',
      'reversibility:\n  enabled: yes\n',
      [`${Y}:2:3 reversibility.enabled: expected true or false, got "yes"`],
    ],
    ['an empty section', 'suite:\n', [`${Y}:1:1 suite: expected a map, got an empty value`]],
    ['a list for the whole file', '- a\n', [`${Y}:1:1 the file must be a map of settings, got a list`]],
    [
      'a bad duration',
      'database:\n  ttl: 7days\n',
      [`${Y}:2:3 database.ttl: expected a positive duration ${EXAMPLES}, got "7days"`],
    ],
    [
      'a zero duration',
      'suite:\n  timeout: 0s\n',
      [`${Y}:2:3 suite.timeout: expected a positive duration ${EXAMPLES}, got "0s"`],
    ],
    [
      'a duration without a unit',
      'suite:\n  timeout: 15\n',
      [`${Y}:2:3 suite.timeout: expected a duration such as 15m (a number needs a unit), got number 15`],
    ],
    [
      'a bad list item (points at the item)',
      'check:\n  blocking:\n    - lint\n    - deploy\n',
      [`${Y}:4:7 check.blocking[1]: expected one of migrations|lint|reversibility|suite, got "deploy"`],
    ],
    ['a duplicated list item', 'lint:\n  rules: [a-b, a-b]\n', [`${Y}:2:3 lint.rules: lists "a-b" more than once`]],
    [
      'reports of the wrong type',
      'suite:\n  reports: [1]\n',
      [`${Y}:2:3 suite.reports: expected a glob or a list of globs`],
    ],
    [
      'an invalid env name',
      'suite:\n  env: 1X\n',
      [`${Y}:2:3 suite.env: must be an environment variable name (letters, digits, "_")`],
    ],
    [
      'a parent that is not a branch name',
      'database:\n  parent: Main\n',
      [`${Y}:2:3 database.parent: "Main" is not a valid branch name: it must start with a lowercase letter`],
    ],
    [
      'a long namespace',
      `database:\n  namespace: ${'a'.repeat(25)}\n`,
      [`${Y}:2:3 database.namespace: must be at most 24 characters`],
    ],
    [
      'a table that is not an identifier',
      'migrations:\n  table: public.migrations\n',
      [
        `${Y}:2:3 migrations.table: must be a plain SQL identifier (letters, digits, "_"; at most 63); put the schema in migrations.migrationsSchema instead`,
      ],
    ],
    [
      'a migrations schema that is not an identifier',
      'migrations:\n  migrationsSchema: my-meta\n',
      [`${Y}:2:3 migrations.migrationsSchema: must be a plain SQL identifier (letters, digits, "_"; at most 63)`],
    ],
    [
      'a schema list with a qualified name in it',
      'migrations:\n  schema: [app, app.things]\n',
      [
        `${Y}:2:17 migrations.schema[1]: must be a plain SQL identifier (letters, digits, "_"; at most 63); name one schema, without a table`,
      ],
    ],
    [
      "a schema of PostgreSQL's own",
      'migrations:\n  schema: pg_temp\n',
      [
        `${Y}:2:3 migrations.schema: "pg_temp" is not a schema a project can use: names starting with "pg_" are PostgreSQL's own`,
      ],
    ],
    [
      'an empty schema list',
      'migrations:\n  schema: []\n',
      [`${Y}:2:3 migrations.schema: list at least one schema, or leave schema out`],
    ],
    [
      'a schema listed twice',
      'migrations:\n  schema: [app, app]\n',
      [`${Y}:2:3 migrations.schema: lists "app" more than once`],
    ],
    [
      'a path outside the repository',
      'migrations:\n  dir: ../elsewhere\n',
      [`${Y}:2:3 migrations.dir: must be a path relative to the repository root, without ".."`],
    ],
    [
      'a seed with both forms',
      'database:\n  seed: {file: a.sql, command: b}\n',
      [`${Y}:2:3 database.seed: set exactly one of "file" or "command"`],
    ],
    [
      'a seed with neither form',
      'database:\n  seed: {}\n',
      [`${Y}:2:3 database.seed: set exactly one of "file" or "command"`],
    ],
    [
      'a YAML syntax error',
      'suite: [1\nlint: 2\n',
      [`${Y}:2:1 invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]`],
    ],
    ['a duplicate YAML key', 'suite: {}\nsuite: {}\n', [`${Y}:2:1 invalid YAML: Map keys must be unique`]],
    ['an unknown role', 'roles:\n  coder: {}\n', [`${Y}:2:3 unknown key "roles.coder"`]],
    [
      'a misspelt role setting',
      'roles:\n  driver:\n    writs: [src/**]\n',
      [`${Y}:3:5 unknown key "roles.driver.writs" (did you mean "roles.driver.writes"?)`],
    ],
    [
      'a command agent without a command',
      'agents:\n  default:\n    backend: command\n',
      [`${Y}:2:3 agents.default.command: the command backend needs "command"`],
    ],
    [
      'an unknown agent backend',
      'roles:\n  navigator:\n    agent: {backend: gpt}\n',
      [`${Y}:3:13 roles.navigator.agent.backend: expected one of command|claude|codex|openai, got "gpt"`],
    ],
    [
      'a write glob outside the repository',
      'roles:\n  driver:\n    writes: [../**]\n',
      [`${Y}:3:14 roles.driver.writes[0]: must be a glob relative to the repository root, without ".."`],
    ],
    [
      'a gate that is not optional',
      'gates:\n  optional: [spec]\n',
      [`${Y}:2:14 gates.optional[0]: expected one of plan|test_list|deploy, got "spec"`],
    ],
    [
      'an unknown design role',
      'build:\n  design: [driver]\n',
      [
        `${Y}:2:12 build.design[0]: expected one of product-owner|spec-author|architect-reviewer|dba|test-strategist|ux-designer, got "driver"`,
      ],
    ],
    ['too many repair rounds', 'build:\n  repairRounds: 50\n', [`${Y}:2:3 build.repairRounds: must be at most 10`]],
  ])('reports %s', (_label, text, expected) => {
    expect(problemLines(text, Y)).toEqual(expected);
  });

  it('masks URL passwords and shortens long values it quotes', () => {
    const long = 'x'.repeat(80);
    const text = `suite:\n  env: postgres://app:hunter2@db.internal/app\n  command: [x]\nlint:\n  failOn: ${long}\n`;
    expect(problemLines(text, Y)).toEqual([
      `${Y}:2:3 suite.env: must be an environment variable name (letters, digits, "_")`,
      `${Y}:3:3 suite.command: expected a string, got a list`,
      `${Y}:5:3 lint.failOn: expected one of error|warning|none, got "${'x'.repeat(57)}..."`,
    ]);
    expect(problemLines('suite:\n  timeout: postgres://app:hunter2@db/app\n', Y)).toEqual([
      `${Y}:2:3 suite.timeout: expected a positive duration ${EXAMPLES}, got "postgres://app:****@db/app"`,
    ]);
  });

  it('refuses a connection URL in the file and points at the environment', () => {
    const text = 'database:\n  provider: postgres\n  postgres:\n    url: postgres://u:p@db/app\n';
    let caught: unknown;
    try {
      parseConfigText(text, Y);
    } catch (e) {
      caught = e;
    }
    expect(isConsortError(caught, 'config')).toBe(true);
    const error = caught as ConfigError;
    expect(error.message.split('\n').slice(1)).toEqual([
      `${Y}:3:3 key "database.postgres" is not allowed: connection URLs and other secrets are read from the ` +
        'environment (CONSORT_POSTGRES_URL), never from the file',
    ]);
    // Said once: the problem line names the variable, the hint the one thing to do.
    expect(`${error.message}\n${error.hint}`.match(/CONSORT_POSTGRES_URL/g)).toHaveLength(1);
    expect(error.hint).toBe(`Delete that key from ${Y}.`);
    expect(error.message).not.toContain('u:p@db');
  });

  it('lists every problem, in file order, with a count and a hint', () => {
    const text = 'suite:\n  comand: x\n  timeout: soon\nlint:\n  failOn: fatal\n';
    let caught: unknown;
    try {
      parseConfigText(text, Y);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const error = caught as ConfigError;
    expect(error.code).toBe('config');
    expect(error.message).toBe(
      [
        `Invalid Consort configuration in ${Y} (3 problems):`,
        `${Y}:2:3 unknown key "suite.comand" (did you mean "suite.command"?)`,
        `${Y}:3:3 suite.timeout: expected a positive duration ${EXAMPLES}, got "soon"`,
        `${Y}:5:3 lint.failOn: expected one of error|warning|none, got "fatal"`,
      ].join('\n'),
    );
    expect(error.hint).toContain('docs/configuration.md');
    expect(error.problems.map((p) => [p.line, p.column, p.key])).toEqual([
      [2, 3, 'suite.comand'],
      [3, 3, 'suite.timeout'],
      [5, 3, 'lint.failOn'],
    ]);
  });
});

describe('JSON files', () => {
  const J = 'consort.config.json';

  it.each([
    [
      'a wrong type',
      '{\n  "suite": {\n    "timeout": 15\n  }\n}\n',
      [`${J}:3:5 suite.timeout: expected a duration such as 15m (a number needs a unit), got number 15`],
    ],
    [
      'an unknown key',
      '{\n  "lint": { "failOn": "none", "rule": [] }\n}\n',
      [`${J}:2:31 unknown key "lint.rule" (did you mean "lint.rules"?)`],
    ],
    [
      'a tab-indented file',
      '{\n\t"check": {\n\t\t"blocking": ["nope"]\n\t}\n}\n',
      [`${J}:3:16 check.blocking[0]: expected one of migrations|lint|reversibility|suite, got "nope"`],
    ],
    [
      'a syntax error',
      '{\n  "suite": {\n    "command": "x",\n  }\n}\n',
      [`${J}:4:3 invalid JSON: Expected double-quoted property name`],
    ],
    [
      'a duplicate key',
      '{\n  "suite": {},\n  "suite": {}\n}\n',
      [`${J}:3:3 invalid JSON: a key appears twice in the same object`],
    ],
    ['an empty file', '', [`${J}: invalid JSON: Unexpected end of JSON input`]],
    ['text after the object', '{}\n}', [`${J}:2:1 invalid JSON: Unexpected non-whitespace character after JSON`]],
  ])('reports %s', (_label, text, expected) => {
    expect(problemLines(text, J)).toEqual(expected);
  });

  it('treats any *.json name as JSON (so YAML-only syntax is refused)', () => {
    expect(problemLines('suite: {}', 'custom.json')).toEqual([`custom.json: invalid JSON: Unexpected token 's'`]);
    expect(checkConfigText('suite: {}', 'custom.yaml')).toMatchObject({ ok: true });
  });
});
