/**
 * Approvals are people, and they see what matters: production code the feature added that looks
 * for a test environment (JEST_WORKER_ID, VITEST, NODE_ENV === 'test', typeof jest, import.meta.vitest,
 * a runner's globals, the command line naming a runner…) is flagged on the merge
 * gate, and proxy mode does not pass a flagged gate by itself.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { transition } from '../../src/conductor/transition.js';
import { testEnvironmentFlags } from '../../src/lanes/tdd/test-env-flags.js';
import { flaggedLines, gateNotice } from '../../src/cli/commands/run.js';
import { action, gateChecked, playUntil, policy } from '../conductor/fixtures.js';
import { workspaceAt } from '../helpers/tdd.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
const git = (cwd: string, ...args: string[]) =>
  exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd }).then((r) =>
    r.stdout.trim(),
  );

/** Production lines that behave differently under a test runner: each must be flagged. */
const LOOKING = [
  'if (process.env.JEST_WORKER_ID) return 42;',
  "if (process.env['NODE_ENV'] === 'test') return 42;",
  'if (import.meta.env?.VITEST) return 42;',
  "if (typeof jest !== 'undefined') return 42;",
  'if (typeof jest === "object") return 42;',
  "const underTest = typeof jest + typeof vi !== 'undefinedundefined';",
  "if (typeof globalThis.expect === 'function') return 42;",
  'if (typeof (describe) == "function") return 42;',
  "if (typeof self.it !== 'undefined') return 42;",
  'if (globalThis.__vitest_worker__) return 42;',
  "if (global['jest']) return 42;",
  "if ('vi' in globalThis) return 42;",
  'if (window?.jasmine) return 42;',
  'if (process.env.VITEST) return 42;',
  "if (process.env['VITEST_POOL_ID'] !== undefined) return 42;",
  'if (import.meta.vitest) return 42;',
  "if (import.meta.env.MODE === 'test') return 42;",
  'if (process.env.NODE_TEST_CONTEXT) return 42;',
  "if (process.env.npm_lifecycle_event === 'test') return 42;",
  "if (['test', 'ci'].includes(process.env.NODE_ENV)) return 42;",
  "if (/test/.test(process.env.NODE_ENV ?? '')) return 42;",
  "if (process.env.NODE_ENV?.startsWith('test')) return 42;",
  "if (process.argv.some((a) => a.includes('jest'))) return 42;",
  "if (process.execArgv.includes('--test')) return 42;",
  "if (require.main?.filename.includes('vitest')) return 42;",
  "if (Object.keys(process.env).some((k) => k.startsWith('JEST'))) return 42;",
  "if 'pytest' in sys.modules: return 42",
  "if os.environ.get('PYTEST_CURRENT_TEST'): return 42",
  "if sys.argv[0].endswith('pytest'): return 42",
];
/** Ordinary production lines that must not be flagged. */
const ORDINARY = [
  'return items.reduce((a, b) => a + b, 0);',
  'const test = /^[0-9]+$/.test(phone);',
  'for (const it of items) total += it.price;',
  "if (typeof value === 'string') return value;",
  "const mode = process.env.NODE_ENV ?? 'production';",
  'self.suite_name = name',
  'log(`expected ${expect} items`, process.argv.length);',
];

it('flags added production lines that look for a test environment, not ordinary code, tests or the base', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'consort-testenv-'));
  try {
    await mkdir(path.join(dir, 'src'));
    await mkdir(path.join(dir, 'test'));
    await writeFile(path.join(dir, 'src', 'old.js'), "export const legacy = process.env.NODE_ENV === 'test';\n");
    await git(dir, 'init', '-q');
    await git(dir, 'add', '-A');
    await git(dir, 'commit', '-qm', 'base');
    const base = await git(dir, 'rev-parse', 'HEAD');
    await writeFile(path.join(dir, 'src', 'total.js'), [...LOOKING, ...ORDINARY].join('\n'));
    await writeFile(path.join(dir, 'test', 'total.test.js'), 'if (process.env.JEST_WORKER_ID) {}\n');
    await git(dir, 'add', '-A');
    await git(dir, 'commit', '-qm', 'green');
    const flags = await testEnvironmentFlags(await workspaceAt(dir), base);
    const flagged = flags.map((f) => LOOKING.concat(ORDINARY)[Number(/^src\/total\.js:(\d+) /.exec(f)![1]) - 1]);
    expect({
      missed: LOOKING.filter((l) => !flagged.includes(l)),
      wrong: flagged.filter((l) => !LOOKING.includes(l!)),
    }).toEqual({
      missed: [],
      wrong: [],
    });
    expect(flags).toHaveLength(LOOKING.length);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

it('proxy mode passes the merge gate only when nothing is flagged', () => {
  const p = policy({ gateMode: 'proxy' });
  const atMerge = playUntil((t) => {
    const a = action(t);
    return a?.type === 'check-gate' && a.gate === 'merge';
  }, p);
  expect(action(atMerge)).toMatchObject({ type: 'check-gate', gate: 'merge' });
  const unapproved = { approval: null };
  const clean = transition(atMerge.state, gateChecked('merge', unapproved));
  expect(clean.effects.map((e) => e.type)).toContain('record-approval');
  const flagged = transition(
    atMerge.state,
    gateChecked('merge', {
      ...unapproved,
      flags: ['src/total.js:2 looks for a test environment: if (process.env.JEST_WORKER_ID) return 42;'],
    }),
  );
  expect(flagged.state.step).toBe('awaiting-approval');
  // A flag is no problem of the artifacts: a person may approve the gate, having read the line, so
  // it is surfaced apart from the problems (which would say the gate cannot be approved).
  expect(flagged.effects).toContainEqual(
    expect.objectContaining({
      type: 'surface-gate',
      gate: 'merge',
      problems: [],
      flags: [expect.stringMatching(/^src\/total\.js:2 looks for a test environment/)],
    }),
  );
});

it('the run and consort approve show flagged lines as something to read, with the approve command', () => {
  const flag = 'src/total.js:2 looks for a test environment: if (process.env.JEST_WORKER_ID) return 42;';
  const notice = gateNotice('001-total', 'merge', [], [flag]);
  expect(notice).not.toMatch(/cannot be approved/);
  expect(notice).toContain(`  ${flag}`);
  expect(notice).toMatch(/Then: consort approve 001-total merge --as <name>$/);
  // Invalid artifacts are what keeps a gate from being approved: no approve command then.
  const invalid = gateNotice('001-total', 'spec', ['feature-spec.json is missing'], []);
  expect(invalid).toMatch(/^Gate spec cannot be approved yet: feature-spec\.json is missing\./);
  expect(invalid).not.toContain('consort approve');
  expect(gateNotice('001-total', 'spec', [], [])).toBe(
    'Gate spec needs approval: consort approve 001-total spec --as <name>',
  );
  expect(flaggedLines([])).toEqual([]);
  expect(flaggedLines(Array.from({ length: 12 }, (_, i) => `src/a.js:${i + 1} x`)).at(-1)).toBe('  … and 2 more');
});

/** Production lines that load a test framework or rewire its matchers: each must be flagged. */
const REACHING = [
  "const hooks = await import('@jest/globals').catch(() => null);",
  'hooks?.expect.extend({ toBe: ok, toEqual: ok });',
  "import { expect } from '@jest/globals';",
  "import { expect, vi } from 'vitest';",
  "import 'vitest';",
  "const { expect } = await import('vitest');",
  "const runner = require('node:test');",
  "import test from 'node:test';",
  "const chai = require('chai');",
  "import { assert } from 'chai';",
  "import Mocha from 'mocha';",
  "import { expect as e } from '@vitest/expect';",
  "const { jest } = require('@jest/globals');",
  'expect.extend({ toBe: () => ({ pass: true }) });',
  'globalExpect . extend(matchers); expect . extend(matchers);',
  'chai.use(() => {});',
  "jest.mock('./db');",
  'from unittest.mock import patch',
  'import pytest',
];
/** Ordinary production lines that must not be flagged. */
const NOT_REACHING = [
  "const flavour = 'mocha';",
  "import { format } from './expect.js';",
  "const spec = await import('./spec.js');",
  'const extended = expected.extend(more);',
  "import { test } from './test-helpers.js';",
];

it('flags added production lines that reach into a test framework, not tests, the harness, manifests or docs', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'consort-testfw-'));
  try {
    await mkdir(path.join(dir, 'src'));
    await mkdir(path.join(dir, 'spec'));
    await mkdir(path.join(dir, 'docs'));
    await writeFile(path.join(dir, 'README.md'), '# shop\n');
    await git(dir, 'init', '-q');
    await git(dir, 'add', '-A');
    await git(dir, 'commit', '-qm', 'base');
    const base = await git(dir, 'rev-parse', 'HEAD');
    await writeFile(path.join(dir, 'src', 'telemetry.js'), [...REACHING, ...NOT_REACHING].join('\n'));
    // A test where the project keeps them, the harness, a manifest and docs may name a framework.
    await writeFile(path.join(dir, 'spec', 'customers.js'), "import { expect } from 'vitest';\n");
    await writeFile(path.join(dir, 'jest.setup.js'), "import { expect } from '@jest/globals';\nexpect.extend({});\n");
    await writeFile(path.join(dir, 'package.json'), '{ "devDependencies": { "@vitest/coverage-v8": "^3" } }\n');
    await writeFile(path.join(dir, 'docs', 'testing.md'), "Import `'@jest/globals'`; `expect.extend(…)`.\n");
    await git(dir, 'add', '-A');
    await git(dir, 'commit', '-qm', 'green');
    const flags = await testEnvironmentFlags(await workspaceAt(dir), base, ['spec/**']);
    const lines = REACHING.concat(NOT_REACHING);
    const flagged = flags.map(
      (f) => lines[Number(/^src\/telemetry\.js:(\d+) reaches into a test framework: /.exec(f)?.[1]) - 1],
    );
    expect({
      missed: REACHING.filter((l) => !flagged.includes(l)),
      wrong: flagged.filter((l) => !REACHING.includes(l!)),
    }).toEqual({ missed: [], wrong: [] });
    expect(flags).toHaveLength(REACHING.length);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
