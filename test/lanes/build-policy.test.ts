/** From configuration to the conductor's policy, the roles' prompts and their agents. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseConfigText } from '../../src/config/load.js';
import { defaultConfig } from '../../src/config/schema.js';
import { ROLES } from '../../src/conductor/roles.js';
import {
  agentKeyEnvNames,
  buildPolicy,
  roleInstructions,
  roleReads,
  backendFactory,
} from '../../src/lanes/tdd/policy.js';
import { localAgentBackends } from '../../src/agents/backends.js';

const defaultBackendFactory = backendFactory(localAgentBackends);

describe('the lane policy', () => {
  it('expands {feature}, {tests} and {migrations} in every role scope', () => {
    const config = parseConfigText(
      'migrations:\n  dir: db/migrations\nbuild:\n  tests: [spec/**]\nroles:\n  dba:\n    writes: ["{feature}/db-design.json", "{migrations}/**"]\n',
      'consort.yml',
    );
    const p = buildPolicy(config, '002-orders', 'proxy', 2);
    expect(p).toMatchObject({
      featureDir: '.consort/features/002-orders',
      gateMode: 'proxy',
      experiments: 2,
      tests: ['spec/**', '!db/migrations/**'],
      ignore: [],
    });
    expect(p.writes.navigator).toEqual(['spec/**', '.consort/features/002-orders/reviews/**']);
    expect(p.writes.driver).toEqual(['**', '!spec/**', '!.consort/**', '!.github/**']);
    expect(p.writes.dba).toEqual(['.consort/features/002-orders/db-design.json', 'db/migrations/**']);
    expect(Object.keys(p.writes).sort()).toEqual([...ROLES].sort());
    expect(roleReads(config, '002-orders', 'dba')).toContain('db/migrations/**');
  });

  it("takes a role's prompt from the configuration, then .consort/roles, then the built-in one", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'consort-roles-'));
    try {
      const config = defaultConfig();
      expect(await roleInstructions(dir, config, 'driver')).toMatch(/^# Driver/);
      await mkdir(path.join(dir, '.consort', 'roles'), { recursive: true });
      await writeFile(path.join(dir, '.consort', 'roles', 'driver.md'), '# Our driver\n');
      expect(await roleInstructions(dir, config, 'driver')).toBe('# Our driver\n');
      await writeFile(path.join(dir, 'prompt.md'), '# Configured\n');
      const configured = parseConfigText('roles:\n  driver:\n    instructions: prompt.md\n', 'consort.yml');
      expect(await roleInstructions(dir, configured, 'driver')).toBe('# Configured\n');
      const missing = parseConfigText('roles:\n  driver:\n    instructions: nope.md\n', 'consort.yml');
      await expect(roleInstructions(dir, missing, 'driver')).rejects.toMatchObject({
        code: 'config',
        message: expect.stringContaining('nope.md'),
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('ships a prompt for every role', async () => {
    for (const role of ROLES)
      expect((await roleInstructions(os.tmpdir(), defaultConfig(), role)).length).toBeGreaterThan(200);
  });

  it('gives each role its own agent, else the default; says so when there is none', () => {
    const config = parseConfigText(
      'agents:\n  default: {backend: command, command: run-all}\nroles:\n  driver:\n    agent: {backend: command, command: run-driver, timeout: 5m, model: m1}\n',
      'consort.yml',
    );
    expect(defaultBackendFactory('navigator', config)).toMatchObject({
      model: null,
      timeoutMs: 30 * 60_000,
      backend: { name: 'command' },
    });
    expect(defaultBackendFactory('driver', config)).toMatchObject({ model: 'm1', timeoutMs: 5 * 60_000 });
    expect(() => defaultBackendFactory('driver', defaultConfig())).toThrow(
      expect.objectContaining({ code: 'config', message: 'No agent backend for the driver role.' }),
    );
  });

  it('builds the model backends from config, with API keys read from the environment variable it names', () => {
    const claude = parseConfigText(
      'agents:\n  default: {backend: claude, model: claude-sonnet-4-5, maxTurns: 40, maxCostUsd: 2}\n',
      'consort.yml',
    );
    expect(defaultBackendFactory('dba', claude)).toMatchObject({
      backend: { name: 'claude' },
      model: 'claude-sonnet-4-5',
      maxTurns: 40,
      maxCostUsd: 2,
    });
    expect(
      defaultBackendFactory('dba', parseConfigText('agents:\n  default: {backend: codex}\n', 'consort.yml')),
    ).toMatchObject({ backend: { name: 'codex' } });
    const openai = parseConfigText(
      'agents:\n  default: {backend: openai, baseUrl: "http://127.0.0.1:9/v1", model: m, apiKeyEnv: CONSORT_TEST_OPENAI_KEY}\n',
      'consort.yml',
    );
    delete process.env.CONSORT_TEST_OPENAI_KEY;
    expect(() => defaultBackendFactory('driver', openai)).toThrow(
      expect.objectContaining({ code: 'config', message: expect.stringContaining('CONSORT_TEST_OPENAI_KEY') }),
    );
    process.env.CONSORT_TEST_OPENAI_KEY = 'sk-test';
    try {
      expect(defaultBackendFactory('driver', openai)).toMatchObject({ backend: { name: 'openai' }, model: 'm' });
    } finally {
      delete process.env.CONSORT_TEST_OPENAI_KEY;
    }
    expect(() => parseConfigText('agents:\n  default: {backend: openai, model: m}\n', 'consort.yml')).toThrow(
      /needs "baseUrl" and "model"/,
    );
  });
});

describe('agentKeyEnvNames', () => {
  it('lists the default key variables and every configured apiKeyEnv', () => {
    const config = parseConfigText(
      'agents:\n  default: { backend: claude }\nroles:\n  spec-author:\n    agent: { backend: openai, baseUrl: "https://serving.example.com/v1", model: m, apiKeyEnv: SERVING_TOKEN }\n',
      'consort.yml',
    );
    expect(agentKeyEnvNames(config)).toEqual(['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'SERVING_TOKEN']);
  });
});
