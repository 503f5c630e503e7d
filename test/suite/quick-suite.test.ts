/**
 * The quick stand-in for jest that the conductor tests run their proofs with
 * (test/fixtures/quick-suite/run.mjs, see test/helpers/shop-agent.ts): what it reports must read as
 * jest's own report would, or those tests would prove nothing. A passing test passes, a failed
 * assertion is a failure the conductor takes as an assertion, a thrown TypeError is an exception,
 * a file that does not load is a load error, hooks run in jest's order, and the exit code follows.
 */
import { copyFile, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { failureException } from '../../src/conductor/failure-kind.js';
import { readJUnitReports } from '../../src/suite/junit.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'consort-quick-suite-'));
  await mkdir(path.join(dir, 'test'));
  await symlink(root('node_modules'), path.join(dir, 'node_modules'), 'dir');
  await writeFile(path.join(dir, 'package.json'), '{"type":"module"}\n');
  await copyFile(root('examples/shop/test/junit-reporter.js'), path.join(dir, 'test/junit-reporter.js'));
  await writeFile(
    path.join(dir, 'test/a.test.js'),
    `import { afterEach, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
const log = [];
describe('outer', () => {
  beforeAll(() => log.push('beforeAll'));
  beforeEach(() => log.push('beforeEach'));
  afterEach(() => log.push('afterEach'));
  test('passes', () => expect(1 + 1).toBe(2));
  test('fails an assertion', async () => {
    await expect(Promise.resolve('call me')).resolves.toMatch(/^\\+?[0-9]/);
  });
  test('throws', () => {
    const customers = {};
    customers.setCustomerPhone();
  });
  describe('inner', () => {
    test('saw the hooks in order', () =>
      expect(log).toEqual(['beforeAll', ...Array(3).fill(['beforeEach', 'afterEach']).flat(), 'beforeEach']));
  });
});
`,
  );
  await writeFile(
    path.join(dir, 'test/c.test.js'),
    `import { beforeAll, describe, expect, test } from '@jest/globals';
describe('broken setup', () => {
  beforeAll(() => {
    throw new Error('no database');
  });
  describe('inner', () => {
    test('never runs', () => expect(true).toBe(true));
  });
});
`,
  );
  await writeFile(
    path.join(dir, 'test/b.test.js'),
    "import { test } from '@jest/globals';\ntest('T2', () => {\n  expect(\n});\n",
  );
}, 30_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

it('reports passes, assertion failures, exceptions and load errors as jest does, and exits 1', async () => {
  const run = await exec('node', [root('test/fixtures/quick-suite/run.mjs')], { cwd: dir }).then(
    () => ({ code: 0 }),
    (e: { code: number; stdout: string }) => e,
  );
  expect(run.code).toBe(1);
  const tests = (await readJUnitReports('junit.xml', dir)).suites.flatMap((s) => s.tests);
  const byName = Object.fromEntries(tests.map((t) => [t.name, t]));
  expect(Object.keys(byName).sort()).toEqual(
    [
      'outer fails an assertion',
      'outer inner saw the hooks in order',
      'outer passes',
      'outer throws',
      'broken setup inner never runs',
      'test/b.test.js',
    ].sort(),
  );
  expect(byName['outer passes']).toMatchObject({ state: 'passed', file: 'test/a.test.js' });
  expect(byName['outer inner saw the hooks in order']).toMatchObject({ state: 'passed' });
  expect(byName['outer fails an assertion']).toMatchObject({ state: 'failed', type: 'AssertionError' });
  expect(failureException(byName['outer fails an assertion']!)).toBeNull();
  expect(byName['outer throws']).toMatchObject({ state: 'failed', type: 'TypeError' });
  expect(failureException(byName['outer throws']!)).toBe('TypeError');
  expect(byName['broken setup inner never runs']).toMatchObject({ state: 'failed', message: 'Error: no database' });
  expect(byName['test/b.test.js']).toMatchObject({
    state: 'errored',
    loadError: true,
    message: expect.stringMatching(/SyntaxError/),
  });
});

it('exits 0 when every test passes', async () => {
  await rm(path.join(dir, 'test/b.test.js'));
  await rm(path.join(dir, 'test/c.test.js'));
  await writeFile(
    path.join(dir, 'test/a.test.js'),
    "import { expect, test } from '@jest/globals';\ntest('ok', () => expect([1]).toEqual([1]));\n",
  );
  const { stdout } = await exec('node', [root('test/fixtures/quick-suite/run.mjs')], { cwd: dir });
  expect(stdout).toMatch(/^PASS test\/a\.test\.js/);
  expect((await readJUnitReports('junit.xml', dir)).totals).toMatchObject({ passed: 1, failed: 0 });
});
