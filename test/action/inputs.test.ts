/** The Action's inputs: parsed once, '' is unset, defaults as in action.yml, errors name the input. */
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { isConsortError } from '../../src/core/errors.js';
import { INPUT, MODES, parseInputs, SECRET_INPUTS, type InputName } from '../../src/action/inputs.js';
import { OUTPUT } from '../../src/action/outputs.js';

const reader = (values: Partial<Record<InputName, string>>) => (name: InputName) => values[name] ?? '';

function failure(values: Partial<Record<InputName, string>>): string {
  try {
    parseInputs(reader(values));
  } catch (e) {
    if (isConsortError(e, 'invalid-input')) return e.message;
    throw e;
  }
  throw new Error('expected the inputs to be rejected');
}

describe('parseInputs', () => {
  it('treats every empty input as unset and applies the defaults', () => {
    expect(parseInputs(reader({}))).toEqual({
      mode: 'check',
      githubToken: undefined,
      githubWritePacing: 'github',
      config: undefined,
      provider: undefined,
      databaseUrl: undefined,
      suiteCommand: undefined,
      comment: 'sticky',
      commentKey: undefined,
      failOn: undefined,
      rebuildBaseline: false,
      cloudEnv: {},
      reflink: 'false',
      lane: {
        feature: undefined,
        pullRequest: undefined,
        buildLabel: 'consort:build',
        maxTurns: 12,
        maxCostUsd: undefined,
        timeLimitMs: 45 * 60_000,
        agentEnv: {},
      },
    });
  });

  it('reads every input under its action.yml name', () => {
    const inputs = parseInputs(
      reader({
        mode: 'cleanup',
        'github-token': 'ghs_abc',
        'github-write-pacing': 'none',
        config: 'ci/consort.yml',
        provider: 'postgres',
        'database-url': 'postgresql://ci:pw@db:5432/postgres',
        'suite-command': 'npm run test:db',
        comment: 'off',
        'fail-on': 'warning',
      }),
    );
    expect(inputs).toEqual({
      mode: 'cleanup',
      githubToken: 'ghs_abc',
      githubWritePacing: 'none',
      config: 'ci/consort.yml',
      provider: 'postgres',
      databaseUrl: 'postgresql://ci:pw@db:5432/postgres',
      suiteCommand: 'npm run test:db',
      comment: 'off',
      failOn: 'warning',
      rebuildBaseline: false,
      cloudEnv: {},
      reflink: 'false',
      lane: {
        feature: undefined,
        pullRequest: undefined,
        buildLabel: 'consort:build',
        maxTurns: 12,
        maxCostUsd: undefined,
        timeLimitMs: 45 * 60_000,
        agentEnv: {},
      },
    });
  });

  it('reads the TDD lane inputs: budgets, trigger settings and model keys (as the variables the backends read)', () => {
    const inputs = parseInputs(
      reader({
        mode: 'build',
        feature: 'customer-phones',
        'pull-request': '42',
        'build-label': 'tdd',
        'max-turns': '5',
        'max-cost-usd': '2.5',
        'time-limit': '1h30m',
        'anthropic-api-key': 'sk-ant-test',
        'openai-api-key': 'sk-test',
      }),
    );
    expect(inputs.mode).toBe('build');
    expect(inputs.lane).toEqual({
      feature: 'customer-phones',
      pullRequest: 42,
      buildLabel: 'tdd',
      maxTurns: 5,
      maxCostUsd: 2.5,
      timeLimitMs: 90 * 60_000,
      agentEnv: { ANTHROPIC_API_KEY: 'sk-ant-test', OPENAI_API_KEY: 'sk-test' },
    });
    expect(parseInputs(reader({ mode: 'approve' })).mode).toBe('approve');
  });

  it('passes Lakebase and Neon settings on as the environment variables their providers read', () => {
    const inputs = parseInputs(
      reader({
        provider: 'neon',
        'neon-api-key': 'napi_secret',
        'neon-project-id': 'calm-pond-123',
        'databricks-host': 'https://adb-1.azuredatabricks.net',
        'databricks-client-secret': 'dose_x',
        'lakebase-project': 'shop',
      }),
    );
    expect(inputs.provider).toBe('neon');
    expect(inputs.cloudEnv).toEqual({
      NEON_API_KEY: 'napi_secret',
      NEON_PROJECT_ID: 'calm-pond-123',
      DATABRICKS_HOST: 'https://adb-1.azuredatabricks.net',
      DATABRICKS_CLIENT_SECRET: 'dose_x',
      CONSORT_LAKEBASE_PROJECT: 'shop',
    });
    for (const secret of ['neon-api-key', 'databricks-token', 'databricks-client-secret'] as const)
      expect(SECRET_INPUTS).toContain(secret);
  });

  it('reads reflink: false by default, auto and true as given (auto may meet any provider: it does nothing off local)', () => {
    expect(
      parseInputs(reader({ reflink: 'auto', provider: 'postgres', 'database-url': 'postgres://u:p@h/d' })).reflink,
    ).toBe('auto');
    expect(parseInputs(reader({ reflink: 'true', provider: 'local' })).reflink).toBe('true');
  });

  it('reads rebuild-baseline as GitHub reads a boolean input: false by default', () => {
    expect(parseInputs(reader({})).rebuildBaseline).toBe(false);
    for (const yes of ['true', 'True', 'TRUE'])
      expect(parseInputs(reader({ 'rebuild-baseline': yes })).rebuildBaseline).toBe(true);
    for (const no of ['false', 'False', 'FALSE'])
      expect(parseInputs(reader({ 'rebuild-baseline': no })).rebuildBaseline).toBe(false);
  });

  it('uses the postgres provider when a database URL is given without a provider', () => {
    expect(parseInputs(reader({ 'database-url': 'postgres://u:p@h/d' })).provider).toBe('postgres');
  });

  it.each([
    [{ mode: 'banana' }, 'Invalid input "mode" must be one of check, cleanup, build, approve (got "banana").'],
    [{ 'max-turns': '0' }, 'Invalid input "max-turns" must be a whole number of turns, at least 1.'],
    [{ 'max-cost-usd': '-1' }, 'Invalid input "max-cost-usd" must be a positive amount in US dollars.'],
    [{ 'time-limit': 'soon' }, 'Invalid input "time-limit" must be a duration such as 45m or 1h30m.'],
    [
      { feature: 'Customer Phones' },
      'Invalid input "feature" must be a feature slug (lowercase letters, digits and "-") or number.',
    ],
    [{ provider: 'mysql' }, 'Invalid input "provider" must be one of local, postgres, lakebase, neon (got "mysql").'],
    [{ comment: 'yes' }, 'Invalid input "comment" must be one of sticky, off (got "yes").'],
    [
      { 'comment-key': 'api -->' },
      'Invalid input "comment-key" must be 1 to 100 letters, digits and . _ / @ : + = - (e.g. services/api or pg-17).',
    ],
    [{ 'fail-on': 'none' }, 'Invalid input "fail-on" must be one of error, warning (got "none").'],
    [{ reflink: 'yes' }, 'Invalid input "reflink" must be one of false, auto, true (got "yes").'],
    [{ 'rebuild-baseline': 'yes' }, 'Invalid input "rebuild-baseline" must be true or false (got "yes").'],
    [
      { 'github-write-pacing': 'fast' },
      'Invalid input "github-write-pacing" must be one of github, none (got "fast").',
    ],
    [
      { reflink: 'true', provider: 'neon' },
      'Invalid input "reflink": it puts the local provider\'s data directory on a loop-mounted XFS, and provider is neon.',
    ],
    [
      { reflink: 'true', 'database-url': 'postgres://u:p@h/d' },
      'Invalid input "reflink": it puts the local provider\'s data directory on a loop-mounted XFS, and provider is postgres.',
    ],
  ])('names the input it rejects: %j', (values, message) => {
    expect(failure(values)).toBe(message);
  });

  it('lists every invalid input at once', () => {
    expect(failure({ mode: 'x', comment: 'y' })).toBe(
      'Invalid input "mode" must be one of check, cleanup, build, approve (got "x"); input "comment" must be one of sticky, off (got "y").',
    );
  });

  it('never repeats a rejected database URL, which holds a password', () => {
    const message = failure({ 'database-url': 'mysql://root:s3cret-pw@db/app' });
    expect(message).toBe('Invalid input "database-url" must be a postgres:// or postgresql:// connection string.');
    expect(failure({ provider: 'local', 'database-url': 'postgres://u:s3cret-pw@h/d' })).not.toContain('s3cret-pw');
  });

  it('treats the token, the database URL and the cloud credentials as secrets', () => {
    expect([...SECRET_INPUTS].sort()).toEqual([
      'anthropic-api-key',
      'database-url',
      'databricks-client-secret',
      'databricks-token',
      'github-token',
      'neon-api-key',
      'openai-api-key',
    ]);
  });
});

describe('action.yml', () => {
  it('declares exactly the inputs and outputs the code reads and writes, with matching defaults', async () => {
    const meta = parseYaml(await readFile(new URL('../../action.yml', import.meta.url), 'utf8')) as {
      inputs: Record<string, { default?: string }>;
      outputs: Record<string, unknown>;
      runs: Record<string, unknown>;
    };
    expect(Object.keys(meta.inputs).sort()).toEqual(Object.values(INPUT).sort());
    expect(Object.keys(meta.outputs).sort()).toEqual(Object.values(OUTPUT).sort());
    expect(meta.runs).toEqual({ using: 'node24', main: 'dist/index.js', post: 'dist/post.js' });
    expect(meta.inputs.reflink!.default).toBe('false');
    expect(meta.inputs.mode!.default).toBe(MODES[0]);
    expect(meta.inputs.comment!.default).toBe('sticky');
    expect(meta.inputs['github-token']!.default).toBe('${{ github.token }}');
  });
});
