/**
 * Runners keep caches in the temporary folder: jest its transformed modules and haste map under
 * `os.tmpdir()/jest_*`, keyed by what it read — the file's source, its path, the config (the
 * project's root among it) — and checked only against a checksum of their own text. An agent's
 * turn shares that folder with the proofs (the sandbox shares the file system), and under
 * bubblewrap the worktree begun ahead for the next proof is listed by name: the agent copies the
 * tree to that path in its own view (an empty tmpfs), runs jest there once with the proof's
 * environment, and rewrites the cached transform of the frozen test into one that passes, with its
 * checksum. Until 2026-12-04 the proof's jest then ran the cached, weakened test: the proof of the
 * committed bug — a commit the driver did not even change — was green (played with the real jest).
 * Each proof's suite now gets an empty temporary folder of its own as TMPDIR, hidden from every
 * other isolated command while it lives and removed after.
 */
import { createHash } from 'node:crypto';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bindWorkspace } from '../../src/git/local-workspace.js';
import { openWorkspace, type GitWorkspace } from '../../src/git/workspace.js';
import { snapshotDependencies, type Dependencies } from '../../src/lanes/tdd/clean-tree.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { execFileAsync } from '../helpers/exec-file.js';
import { proveHead, sumRepo, testStates } from '../helpers/sum-repo.js';

const JEST = path.resolve('node_modules/jest/bin/jest.js');
let dir: string;
let scratch: string;
let ws: GitWorkspace;
let deps: Dependencies;

/** A jest reporter, outside the repository, that writes the JUnit report the proof reads. */
const REPORTER = `module.exports = class { onRunComplete(_c, results) {
  const cases = results.testResults.flatMap((f) => f.testResults.map((t) => '<testcase classname="sum" name="' + t.title + '">' + (t.status === 'failed' ? '<failure message="failed">failed</failure>' : '') + '</testcase>'));
  require('fs').writeFileSync('junit.xml', '<?xml version="1.0"?><testsuites><testsuite name="jest">' + cases.join('') + '</testsuite></testsuites>');
} };
`;

beforeEach(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'consort-temp-cache-'));
  await mkdir(path.join(scratch, 'tmp'));
  await writeFile(path.join(scratch, 'reporter.cjs'), REPORTER);
  dir = await sumRepo('consort-temp-cache-repo-', {
    suiteCommand: `node ${JEST} --ci --rootDir . --reporters=${path.join(scratch, 'reporter.cjs')}`,
    before: async (d) => {
      await writeFile(path.join(d, 'package.json'), '{ "name": "app", "private": true }\n');
      await writeFile(path.join(d, 'src', 'sum.js'), 'module.exports = (a, b) => a - b;\n');
      await writeFile(
        path.join(d, 'test', 'sum.test.js'),
        "const sum = require('../src/sum.js');\ntest('adds', () => { expect(sum(1, 2)).toBe(3); });\n",
      );
    },
  });
  ws = await openWorkspace(dir);
  deps = await snapshotDependencies(bindWorkspace(ws), localProcessRunner);
});

afterEach(async () => {
  await deps.dispose();
  await rm(dir, { recursive: true, force: true });
  await rm(scratch, { recursive: true, force: true });
});

async function files(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
  const nested = await Promise.all(
    entries.map((e) => (e.isDirectory() ? files(path.join(folder, e.name)) : [path.join(folder, e.name)])),
  );
  return nested.flat();
}

it("an agent's poisoned jest cache in the temporary folder does not reach the proof", async () => {
  // The temporary folder Consort (and so every agent and suite) was started with.
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: path.join(scratch, 'tmp') };
  const next = `${dir}-consort-proof-next`;
  // The agent: the tree at the next proof's path, jest run there once as the proof runs it …
  await cp(dir, next, { recursive: true, filter: (s) => path.basename(s) !== '.git' });
  await execFileAsync(process.execPath, [JEST, '--ci', '--rootDir', '.'], {
    cwd: next,
    env: { ...env, CI: 'true' },
  }).catch(() => undefined);
  // … then the cached transform of the test rewritten to one that passes, with its checksum.
  let poisoned = 0;
  for (const file of await files(path.join(scratch, 'tmp'))) {
    if (!path.basename(file).startsWith('sumtest_') || file.endsWith('.map')) continue;
    const code = (await readFile(file, 'utf8')).slice(33).replace('toBe(3)', 'toBe(-1)');
    await writeFile(file, `${createHash('sha1').update(code).digest('hex').slice(0, 32)}\n${code}`);
    poisoned++;
  }
  expect(poisoned).toBe(1);
  await rm(next, { recursive: true, force: true });
  expect(testStates(await proveHead(dir, ws, deps, { tree: next, env }))).toEqual(['sum::adds failed']);
}, 120_000);
