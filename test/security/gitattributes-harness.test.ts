/**
 * A proof checks the commit out afresh, and git applies the commit's own `.gitattributes` as it
 * writes each file — `eol`, `text`, `working-tree-encoding` and `ident` need no configuration. The
 * frozen tests are hashed byte for byte in the proof's tree, but what they read is not: until
 * 2026-12-04 a driver's GREEN turn that committed `test/expected.txt eol=crlf` had the proof check
 * out the frozen test's expected text with the committed bug's CRLF line ends, and the proof was
 * green. `.gitattributes` is test harness now (DEFAULT_HARNESS): only the navigator changes it, in RED.
 */
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { checkScope } from '../../src/conductor/scope.js';
import { changesSince, openWorkspace, workspaceHead, type GitWorkspace } from '../../src/git/workspace.js';
import { bindWorkspace } from '../../src/git/local-workspace.js';
import { snapshotDependencies, type Dependencies } from '../../src/lanes/tdd/clean-tree.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { policy } from '../conductor/fixtures.js';
import { git, proveHead, sumRepo, testStates } from '../helpers/sum-repo.js';

/** The frozen test: the lines the code renders, against the expected text committed beside it. */
const LINES_TEST = `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { lines } from '../src/lines.js';
test('renders', () => { assert.equal(lines(), readFileSync('test/expected.txt', 'utf8')); });
`;

let dir: string;
let ws: GitWorkspace;
let deps: Dependencies;

beforeEach(async () => {
  dir = await sumRepo('consort-gitattributes-', {
    before: async (d) => {
      await rm(path.join(d, 'test', 'sum.test.js'));
      await writeFile(path.join(d, 'test', 'lines.test.js'), LINES_TEST);
      await writeFile(path.join(d, 'test', 'expected.txt'), 'a\nb\n');
      // The bug: Windows line ends.
      await writeFile(path.join(d, 'src', 'lines.js'), "export const lines = () => 'a\\r\\nb\\r\\n';\n");
    },
  });
  ws = await openWorkspace(dir);
  deps = await snapshotDependencies(bindWorkspace(ws), localProcessRunner);
});

afterEach(async () => {
  await deps?.dispose();
  await rm(dir, { recursive: true, force: true });
});

const proveAtHead = async () => testStates(await proveHead(dir, ws, deps));

it('the cheat is real: an eol rule for the expected text makes the proof of the bug green', async () => {
  expect(await proveAtHead()).toEqual(['test::renders failed']);
  await writeFile(path.join(dir, '.gitattributes'), 'test/expected.txt eol=crlf\n');
  await git(dir, 'add', '.gitattributes');
  await git(dir, 'commit', '-qm', 'green');
  expect(await proveAtHead()).toEqual(['test::renders passed']);
}, 120_000);

it('the driver cannot change .gitattributes, at the root or in a folder', async () => {
  const base = await workspaceHead(ws);
  await writeFile(path.join(dir, '.gitattributes'), 'test/expected.txt eol=crlf\n');
  await writeFile(path.join(dir, 'src', '.gitattributes'), '*.js ident\n');
  const refused = checkScope({
    policy: policy(),
    role: 'driver',
    step: 'green',
    item: 'T1',
    changes: await changesSince(ws, base),
    frozen: {},
    hashes: {},
  });
  expect(refused.map((r) => `${r.path}: ${r.why}`)).toEqual([
    '.gitattributes: the test harness (test-owned: only the navigator changes it, in RED)',
    'src/.gitattributes: the test harness (test-owned: only the navigator changes it, in RED)',
  ]);
}, 60_000);
