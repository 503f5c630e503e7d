import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { defaultConfig } from '../../src/config/schema.js';
import { isConsortError } from '../../src/core/errors.js';

let root: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'consort-config-'));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function put(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(path.join(root, file)), { recursive: true });
  await writeFile(path.join(root, file), text);
}

async function loadError(options?: { path?: string }): Promise<unknown> {
  try {
    await loadConfig(root, options);
  } catch (e) {
    return e;
  }
  throw new Error('expected loadConfig to fail');
}

describe('loadConfig', () => {
  it('returns the defaults and no source when there is no config file', async () => {
    await expect(loadConfig(root)).resolves.toEqual({ config: defaultConfig(), source: null });
  });

  it.each([
    ['.github/consort.yml', 'suite:\n  command: make check\n'],
    ['.github/consort.yaml', 'suite:\n  command: make check\n'],
    ['consort.config.json', '{ "suite": { "command": "make check" } }\n'],
  ])('reads %s', async (file, text) => {
    await put(file, text);
    const { config, source } = await loadConfig(root);
    expect(source).toBe(file);
    expect(config.suite.command).toBe('make check');
    expect(config.migrations.dir).toBe('migrations');
  });

  it('ignores a directory with a config file name', async () => {
    await mkdir(path.join(root, 'consort.config.json'));
    await expect(loadConfig(root)).resolves.toMatchObject({ source: null });
  });

  it.each([
    [['.github/consort.yml', 'consort.config.json'], 'Found 2 config files: .github/consort.yml, consort.config.json.'],
    [
      ['.github/consort.yml', '.github/consort.yaml'],
      'Found 2 config files: .github/consort.yml, .github/consort.yaml.',
    ],
  ])('refuses more than one config file (%j)', async (files, message) => {
    for (const file of files) await put(file, file.endsWith('.json') ? '{}' : '');
    const error = await loadError();
    expect(isConsortError(error, 'config')).toBe(true);
    expect((error as Error).message).toContain(message);
    expect((error as ConfigError).hint).toContain('not merged');
  });

  it('reads an explicit path instead of searching, even when the usual files exist', async () => {
    await put('.github/consort.yml', 'lint:\n  failOn: none\n');
    await put('ci/consort.yml', 'lint:\n  failOn: warning\n');
    const { config, source } = await loadConfig(root, { path: 'ci/consort.yml' });
    expect(source).toBe('ci/consort.yml');
    expect(config.lint.failOn).toBe('warning');
  });

  it('accepts an absolute explicit path and reports it relative to the root', async () => {
    await put('ci/settings.json', '{ "reversibility": { "enabled": false } }');
    const { config, source } = await loadConfig(root, { path: path.join(root, 'ci/settings.json') });
    expect(source).toBe('ci/settings.json');
    expect(config.reversibility.enabled).toBe(false);
  });

  it('fails clearly when an explicit path does not exist', async () => {
    const error = await loadError({ path: 'nope.yml' });
    expect(isConsortError(error, 'config')).toBe(true);
    expect((error as Error).message).toBe('Config file nope.yml not found.');
  });

  it('names the file, line and column of each problem', async () => {
    const text = '# settings\nsuite:\n  command: npm test\n\nlint:\n  rules: []\n  failOn: fatal\n';
    await put('.github/consort.yml', text);
    const error = await loadError();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain(
      '\n.github/consort.yml:7:3 lint.failOn: expected one of error|warning|none, got "fatal"',
    );
    expect((error as ConfigError).problems).toEqual([
      {
        file: '.github/consort.yml',
        line: 7,
        column: 3,
        key: 'lint.failOn',
        message: 'lint.failOn: expected one of error|warning|none, got "fatal"',
      },
    ]);
  });
});
