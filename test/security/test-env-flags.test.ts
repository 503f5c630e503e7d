/**
 * Approvals are people, and they see what matters: production code the feature added that looks
 * for a test environment (JEST_WORKER_ID, VITEST, NODE_ENV === 'test') is flagged on the merge
 * gate, and proxy mode does not pass a flagged gate by itself.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { transition } from '../../src/conductor/transition.js';
import { testEnvironmentFlags } from '../../src/lanes/tdd/test-env-flags.js';
import { action, gateChecked, playUntil, policy } from '../conductor/fixtures.js';
import { workspaceAt } from '../helpers/tdd.js';

const exec = promisify(execFile);
const git = (cwd: string, ...args: string[]) =>
  exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd }).then((r) =>
    r.stdout.trim(),
  );

it('flags added production lines that look for a test environment, not tests or the base', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'consort-testenv-'));
  try {
    await mkdir(path.join(dir, 'src'));
    await mkdir(path.join(dir, 'test'));
    await writeFile(path.join(dir, 'src', 'old.js'), "export const legacy = process.env.NODE_ENV === 'test';\n");
    await git(dir, 'init', '-q');
    await git(dir, 'add', '-A');
    await git(dir, 'commit', '-qm', 'base');
    const base = await git(dir, 'rev-parse', 'HEAD');
    await writeFile(
      path.join(dir, 'src', 'total.js'),
      [
        'export function total(items) {',
        '  if (process.env.JEST_WORKER_ID) return 42;',
        "  if (process.env['NODE_ENV'] === 'test') return 42;",
        '  if (import.meta.env?.VITEST) return 42;',
        '  return items.reduce((a, b) => a + b, 0);',
        '}',
      ].join('\n'),
    );
    await writeFile(path.join(dir, 'test', 'total.test.js'), 'if (process.env.JEST_WORKER_ID) {}\n');
    await git(dir, 'add', '-A');
    await git(dir, 'commit', '-qm', 'green');
    const flags = await testEnvironmentFlags(await workspaceAt(dir), base);
    expect(flags.map((f) => f.split(' ')[0])).toEqual(['src/total.js:2', 'src/total.js:3', 'src/total.js:4']);
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
  expect(flagged.effects).toContainEqual(
    expect.objectContaining({
      type: 'surface-gate',
      gate: 'merge',
      problems: [expect.stringMatching(/^flag: src\/total\.js:2 looks for a test environment/)],
    }),
  );
});
