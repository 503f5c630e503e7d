/**
 * With --json a failing command still gives a script one JSON object on stdout —
 * `{ "error": { code, message, hint, exitCode } }` (docs/cli.md, "JSON output") — with the same exit
 * code as without it, and the error for people on stderr as before. None of these reach a database.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { captureCli } from '../helpers/cli.js';
import { execFileAsync } from '../helpers/exec-file.js';

const env = { PATH: process.env.PATH ?? '', NO_COLOR: '1' };

const cli = (args: string[]) => captureCli(args, env);

let broken: string;
beforeAll(async () => {
  broken = await mkdtemp(path.join(os.tmpdir(), 'consort-json-errors-'));
  await mkdir(path.join(broken, '.github'));
  await writeFile(path.join(broken, '.github', 'consort.yml'), 'database:\n  provider: bogus\n');
});
afterAll(async () => {
  await rm(broken, { recursive: true, force: true });
});

it.each([
  [['branch', 'create', 'x', '--bogus', '--json'], /unknown option '--bogus'/],
  [['branch', 'create', '--json'], /missing required argument 'name'/],
  [['branch', 'pool', 'main', '--size', 'abc', '--json'], /--size takes a whole number/],
  [['branch', 'pool', 'main', '--json', '--size', '1000'], /--size takes a whole number/],
  [['dashboard', '--port', 'abc', '--json'], /--port takes a port number/],
  [['hooks', 'status', '--lines', 'abc', '--json'], /--lines takes a whole number/],
  [['check', '--pr', 'x', '--json', '-'], /--pr must be a positive number/],
  [['check', '--pr', 'x', '--json'], /--pr must be a positive number/],
  [['--json', 'branch', 'list'], /unknown option '--json'/],
  [['brnch', 'list', '--json'], /unknown command 'brnch'/],
])('a usage error with --json is one JSON object on stdout, exit 2: %j', async (args, says) => {
  const r = await cli(args);
  expect(r.code).toBe(2);
  const { error } = JSON.parse(r.stdout) as { error: Record<string, unknown> };
  expect(error).toEqual({
    code: 'invalid-input',
    message: expect.stringMatching(says),
    hint: error.hint === null ? null : expect.any(String),
    exitCode: 2,
  });
  expect(error.message).not.toMatch(/^error: /);
  // People still read it on stderr, as without --json.
  expect(r.stderr).toMatch(says);
});

it.each([
  [['brnch', 'list', '--json'], "unknown command 'brnch'", 'Did you mean branch?'],
  [['branch', 'list', '--jsn', '--json'], "unknown option '--jsn'", 'Did you mean --json?'],
])("a misspelling's suggestion is the JSON hint, not part of the message: %j", async (args, message, hint) => {
  const { error } = JSON.parse((await cli(args)).stdout) as { error: { message: string; hint: string } };
  expect(error.message).toBe(message);
  expect(error.hint).toBe(`${hint} Run the command with --help for usage.`);
});

it('a command that cannot do its work prints the error object with its code and hint, exit 1', async () => {
  const r = await cli(['-C', broken, 'branch', 'list', '--json']);
  expect(r.code).toBe(1);
  const { error } = JSON.parse(r.stdout) as { error: Record<string, unknown> };
  expect(error).toEqual({
    code: 'config',
    message: expect.stringMatching(/Invalid Consort configuration[^]*database\.provider[^]*"bogus"/),
    hint: expect.stringContaining('docs/configuration.md'),
    exitCode: 1,
  });
  expect(r.stderr).toMatch(/^consort: Invalid Consort configuration/);
  expect(r.stderr).not.toMatch(/Initialising|Starting embedded/);
});

it('check --json - that wrote its error report prints nothing more: stdout stays one JSON document', async () => {
  const r = await cli(['-C', broken, 'check', '--json', '-']);
  expect(r.code).toBe(1);
  expect(JSON.parse(r.stdout)).toMatchObject({ conclusion: 'error' });
});

it('check --json <file> writes the error report for an unknown git ref, not for a usage error', async () => {
  const repo = await mkdtemp(path.join(os.tmpdir(), 'consort-json-errors-repo-'));
  try {
    await execFileAsync('git', ['init', '-q', repo], { env });
    const report = path.join(repo, 'report.json');
    const r = await cli(['-C', repo, 'check', '--base', 'no-such-ref', '--json', report]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Unknown git ref "no-such-ref"/);
    expect(JSON.parse(await readFile(report, 'utf8'))).toMatchObject({
      conclusion: 'error',
      error: { message: expect.stringContaining('no-such-ref') },
    });
    const usage = path.join(repo, 'usage.json');
    expect((await cli(['-C', repo, 'check', '--pr', 'x', '--json', usage])).code).toBe(2);
    await expect(readFile(usage, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  } finally {
    await rm(repo, { recursive: true, force: true });
  }
});

it('without --json, or with check --json <file>, stdout stays empty on failure', async () => {
  for (const args of [
    ['branch', 'create', 'x', '--bogus'],
    ['-C', broken, 'branch', 'list'],
    ['check', '--pr', 'x', '--json', path.join(broken, 'report.json')],
  ]) {
    const r = await cli(args);
    expect(r.code).toBeGreaterThan(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).not.toBe('');
  }
});

it('an option value that happens to read "--json" is not a request for JSON', async () => {
  const r = await cli(['feature', 'new', 'x', '--from', '--json']);
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr).toMatch(/Cannot read the feature request/);
});
