/**
 * The check's suite stage on a project whose default `npm test` has nothing to run: a failure that
 * says so and what to do (it read `exit 1` over npm's output tail), never a skip — a pull request
 * that removed the project's test script must not pass the merge gate.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { defaultConfig } from '../../src/config/schema.js';
import { missingTestScript, suiteStage } from '../../src/lanes/check/suite-stage.js';
import { testPorts } from '../helpers/check-ports.js';

const config = defaultConfig();
const URL_ = 'postgres://u:secret@127.0.0.1:5432/db';

async function runIn(pkg: object) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'consort-suite-'));
  try {
    await writeFile(path.join(dir, 'package.json'), JSON.stringify(pkg));
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir };
    return await suiteStage(config, dir, URL_, env, testPorts.processes, testPorts.clock, undefined);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

it('a project without a test script: the default `npm test` fails, saying what to set', async () => {
  expect(config.suite.command).toBe('npm test');
  const stage = await runIn({ name: 'p', version: '1.0.0' });
  expect(stage).toMatchObject({
    status: 'failed',
    summary:
      'package.json has no `test` script, so `npm test` ran no tests: add the script, or set suite.command in the Consort configuration to the command that runs your tests',
  });
});

it('a project with no package.json at all (another language, left on the default): says to set suite.command', async () => {
  // npm's own words were all the user got ("exit 254", "Could not read package.json").
  const dir = await mkdtemp(path.join(os.tmpdir(), 'consort-suite-'));
  try {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir };
    const stage = await suiteStage(config, dir, URL_, env, testPorts.processes, testPorts.clock, undefined);
    expect(stage).toMatchObject({
      status: 'failed',
      summary:
        'there is no package.json, so `npm test` ran no tests: set suite.command in the Consort configuration to the command that runs your tests',
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  // npm 6's wording too.
  expect(
    missingTestScript('npm test', "npm ERR! enoent ENOENT: no such file or directory, open '/p/package.json'\n"),
  ).toMatch(/^there is no package\.json/);
  expect(missingTestScript('make test', 'npm error enoent Could not read package.json\n')).toBeNull();
});

it("npm init's placeholder test script is named as such", async () => {
  const stage = await runIn({ name: 'p', scripts: { test: 'echo "Error: no test specified" && exit 1' } });
  expect(stage.status).toBe('failed');
  expect(stage.summary).toMatch(/^package\.json's `test` script is npm init's placeholder/);
});

it('a real test script that fails keeps its own summary', async () => {
  // It prints what npm would, but not as npm: only npm's own line counts.
  const stage = await runIn({ name: 'p', scripts: { test: 'echo \'Missing script: "test"\' && exit 3' } });
  expect(stage).toMatchObject({ status: 'failed', summary: 'exit 3' });
  expect(missingTestScript('npm test', 'npm error Missing script: "test"\n')).not.toBeNull();
  expect(missingTestScript('npm test', 'npm ERR! Missing script: "test"\n')).not.toBeNull();
  // Another command is never read this way.
  expect(missingTestScript('npx jest', 'npm error Missing script: "test"\n')).toBeNull();
});
