/** What the App shows on GitHub, and the settings it starts with: pure functions, table-tested. */
import {
  cancelledOutcome,
  CHECK_NAME,
  checkReportComment,
  configOutcome,
  forkWaitingOutcome,
  pullUrl,
  reportAnnotations,
  reportOutcome,
  STICKY_MARKER,
} from '../../app/check-output.js';
import { MAX_ANNOTATIONS } from '../../src/github/check-limits.js';
import { replyText } from '../../src/github/command-reply.js';
import { gateStatusContext } from '../../src/conductor/gates.js';
import { parseAppSettings, suiteEnvironment } from '../../app/settings.js';
import { makeReport, passingStages } from '../fixtures/reports/build.js';
import { errorReport } from '../fixtures/reports/error.js';
import { failingReport } from '../fixtures/reports/failing.js';
import { passingReport } from '../fixtures/reports/passing.js';

describe('check run output', () => {
  it('a passing report: success, the verdict as title, the markdown report as summary', () => {
    const o = reportOutcome(passingReport);
    expect(o.conclusion).toBe('success');
    expect(o.output.title).toBe('Database checks passed');
    expect(o.output.summary).toContain(`${CHECK_NAME}: database checks passed`);
    // Its one lint warning is a notice at its line; nothing is marked as a failure.
    expect(o.output.annotations).toEqual([
      expect.objectContaining({ annotation_level: 'notice', title: expect.stringMatching(/^squawk: /) }),
    ]);
  });

  it('a failing report: failure, with annotations at the files and lines of each problem', () => {
    const o = reportOutcome(failingReport);
    expect(o.conclusion).toBe('failure');
    const annotations = reportAnnotations(failingReport);
    expect(annotations).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          path: 'migrations/20250502090000000_add_order_status.sql',
          start_line: 3,
          annotation_level: 'failure',
          title: 'Migration failed',
        }),
        expect.objectContaining({
          path: 'migrations/20250401000000000_add_orders.sql',
          title: 'Migration plan',
          message: expect.stringContaining('20250415093000001_add_orders'),
        }),
      ]),
    );
    expect(annotations.some((a) => a.title?.startsWith('squawk: '))).toBe(true);
    // parent-ahead has no file: it is in the summary, not an annotation
    expect(annotations.every((a) => a.path !== '')).toBe(true);
  });

  it('an errored report is a failure, never a success', () => {
    expect(reportOutcome(errorReport).conclusion).toBe('failure');
  });

  it('caps annotations at 500 (ten requests) and says how many there were', () => {
    const stages = passingStages();
    const findings = Array.from({ length: 520 }, (_, i) => ({
      rule: 'prefer-robust-stmts',
      level: 'warning' as const,
      message: `finding ${i}`,
      file: 'migrations/1_a.sql',
      line: i + 1,
      blocking: false,
    }));
    const o = reportOutcome(makeReport({ stages: { ...stages, lint: { ...stages.lint, findings } } }));
    expect(o.output.annotations).toHaveLength(MAX_ANNOTATIONS);
    expect(MAX_ANNOTATIONS).toBe(500);
    expect(o.output.summary).toContain(`Showing ${MAX_ANNOTATIONS} of 520 annotations`);
  });

  it('never annotates a path outside the repository', () => {
    const stages = passingStages();
    const failures = [
      { id: 'a', name: 'abs', state: 'failed' as const, file: '/etc/passwd' },
      { id: 'b', name: 'up', state: 'failed' as const, file: '../secrets.txt' },
      { id: 'c', name: 'ok', state: 'failed' as const, file: 'test/orders.test.js' },
    ];
    const report = makeReport({ stages: { ...stages, suite: { ...stages.suite, status: 'failed', failures } } });
    expect(
      reportAnnotations(report)
        .filter((a) => a.title?.startsWith('Test '))
        .map((a) => a.path),
    ).toEqual(['test/orders.test.js']);
  });

  it('cancelled, fork waiting and configuration problems', () => {
    expect(cancelledOutcome('superseded by a newer run at abc1234')).toEqual({
      conclusion: 'cancelled',
      output: { title: 'Cancelled', summary: 'This check was cancelled: superseded by a newer run at abc1234.' },
    });
    const details = pullUrl('https://ghe.example.com/', { owner: 'o', repo: 'r' }, 7, 99);
    expect(details).toBe('https://ghe.example.com/o/r/pull/7#issuecomment-99');
    expect(forkWaitingOutcome('0123456789abcdef0123456789abcdef01234567', details)).toMatchObject({
      conclusion: 'action_required',
      detailsUrl: details,
      output: { summary: expect.stringContaining('`/consort allow-run`') },
    });
    const config = configOutcome('.github/consort.yml', [
      { file: '.github/consort.yml', line: 4, column: 3, key: 'suite.comand', message: 'unknown key "suite.comand"' },
    ]);
    expect(config.conclusion).toBe('failure');
    expect(config.output.annotations).toEqual([
      expect.objectContaining({ path: '.github/consort.yml', start_line: 4, message: 'unknown key "suite.comand"' }),
    ]);
  });

  it('a parent ahead of base: comment and check run name what the App can honestly offer, not a CLI flag to re-run with', () => {
    for (const text of [checkReportComment(failingReport), reportOutcome(failingReport).output.summary]) {
      expect(text).toContain('**Parent ahead:**');
      expect(text).toContain('the App always builds the baseline on the parent');
      expect(text).not.toContain('run <code>consort check --rebuild-baseline</code>');
    }
  });

  it('the sticky comment starts with the marker the App finds it by', () => {
    expect(checkReportComment(passingReport).startsWith(`${STICKY_MARKER}\n`)).toBe(true);
  });
});

describe('gate statuses and replies', () => {
  it('a gate is published as consort/gate/<name>, and replies quote the command', () => {
    expect(gateStatusContext('spec')).toBe('consort/gate/spec');
    expect(replyText('octocat', '/consort approve', 'done.')).toBe('> /consort approve\n\n@octocat done.');
  });
});

describe('settings', () => {
  const base = {
    APP_ID: '42',
    PRIVATE_KEY: '-----BEGIN RSA PRIVATE KEY-----\\nabc\\n-----END RSA PRIVATE KEY-----',
    WEBHOOK_SECRET: 'a-long-enough-secret',
  };

  it('reads the environment, with defaults', () => {
    const s = parseAppSettings(base);
    expect(s).toMatchObject({
      appId: 42,
      webhookSecret: 'a-long-enough-secret',
      port: 3000,
      provider: 'local',
      databaseUrl: null,
      promote: false,
      runConcurrency: 2,
    });
    expect(s.privateKey).toBe('-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----');
  });

  it.each([
    ['no webhook secret', { WEBHOOK_SECRET: undefined }, /WEBHOOK_SECRET is not set/],
    ['an empty webhook secret', { WEBHOOK_SECRET: '' }, /WEBHOOK_SECRET is not set/],
    ["Probot's development placeholder", { WEBHOOK_SECRET: 'development' }, /must not be "development"/],
    ['no app id', { APP_ID: undefined }, /APP_ID is not set/],
    ['no private key', { PRIVATE_KEY: undefined }, /PRIVATE_KEY or PRIVATE_KEY_PATH is not set/],
    ['postgres without a URL', { CONSORT_PROVIDER: 'postgres' }, /CONSORT_POSTGRES_URL/],
  ])('refuses to start with %s', (_label, over, message) => {
    expect(() => parseAppSettings({ ...base, ...over })).toThrow(message);
  });

  it('names every missing required setting at once, the private key among them', () => {
    // The README's first start: nothing set yet. One message, so one round of fixes, not three.
    expect(() => parseAppSettings({ PATH: '/bin' })).toThrow(
      /APP_ID is not set.*; WEBHOOK_SECRET is not set.*; PRIVATE_KEY or PRIVATE_KEY_PATH is not set/,
    );
  });

  it.each([
    [
      'CONSORT_POSTGRES_URL',
      { CONSORT_POSTGRES_URL: 'localhost:5432' },
      /CONSORT_POSTGRES_URL must be a postgres:\/\/ URL/,
    ],
    ['PORT', { PORT: 'eighty' }, /PORT: /],
    ['WEBHOOK_PATH', { WEBHOOK_PATH: 'hooks' }, /WEBHOOK_PATH: /],
    ['CONSORT_APP_SWEEP_CRON', { CONSORT_APP_SWEEP_CRON: '* *' }, /CONSORT_APP_SWEEP_CRON: /],
  ])('a malformed %s is named in the message', (_name, over, message) => {
    expect(() => parseAppSettings({ ...base, ...over })).toThrow(message);
  });

  it('a PRIVATE_KEY_PATH it cannot read says what to set instead', () => {
    let error: unknown;
    try {
      parseAppSettings({ ...base, PRIVATE_KEY: undefined, PRIVATE_KEY_PATH: './nope.pem' }, () => {
        throw new Error("ENOENT: no such file or directory, open './nope.pem'");
      });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({
      message: expect.stringContaining('Cannot read PRIVATE_KEY_PATH ./nope.pem'),
      hint: expect.stringMatching(/\.pem file generated on the App's settings page.*PRIVATE_KEY/),
    });
  });

  it('reads the private key from PRIVATE_KEY_PATH', () => {
    const s = parseAppSettings(
      { ...base, PRIVATE_KEY: undefined, PRIVATE_KEY_PATH: '/keys/app.pem', CONSORT_APP_PROMOTE: '1' },
      (f) => `key from ${f}`,
    );
    expect(s.privateKey).toBe('key from /keys/app.pem');
    expect(s.promote).toBe(true);
  });

  it("never hands the App's secrets to a project's suite", () => {
    const env = suiteEnvironment(
      {
        PATH: '/bin',
        HOME: '/home/app',
        LC_ALL: 'C',
        WEBHOOK_SECRET: 's',
        PRIVATE_KEY: 'k',
        DATABASE_URL: 'postgres://x',
        EXTRA: 'e',
      },
      ['EXTRA'],
    );
    expect(env).toEqual({
      PATH: '/bin',
      HOME: '/home/app',
      LC_ALL: 'C',
      EXTRA: 'e',
      WEBHOOK_SECRET: undefined,
      PRIVATE_KEY: undefined,
      DATABASE_URL: undefined,
      CI: 'true',
    });
  });
});
