/** From configuration to the conductor's policy, the roles' prompts and their agents. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseConfigText } from '../../src/config/load.js';
import { defaultConfig } from '../../src/config/schema.js';
import { ROLES } from '../../src/conductor/roles.js';
import { buildPolicy, defaultBackendFactory, roleInstructions, roleReads } from '../../src/lanes/build/policy.js';

describe('the lane policy', () => {
  it('expands {feature}, {tests} and {migrations} in every role scope', () => {
    const config = parseConfigText('migrations:\n  dir: db/migrations\nbuild:\n  tests: [spec/**]\nroles:\n  dba:\n    writes: ["{feature}/db-design.json", "{migrations}/**"]\n', 'consort.yml');
    const p = buildPolicy(config, '002-orders', 'proxy', 2);
    expect(p).toMatchObject({ featureDir: '.consort/features/002-orders', gateMode: 'proxy', experiments: 2, tests: ['spec/**'], ignore: [] });
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
      await expect(roleInstructions(dir, missing, 'driver')).rejects.toMatchObject({ code: 'config', message: expect.stringContaining('nope.md') });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('ships a prompt for every role', async () => {
    for (const role of ROLES) expect((await roleInstructions(os.tmpdir(), defaultConfig(), role)).length).toBeGreaterThan(200);
  });

  it("gives each role its own agent, else the default; says so when there is none", () => {
    const config = parseConfigText('agents:\n  default: {backend: command, command: run-all}\nroles:\n  driver:\n    agent: {backend: command, command: run-driver, timeout: 5m, model: m1}\n', 'consort.yml');
    expect(defaultBackendFactory('navigator', config)).toMatchObject({ model: null, timeoutMs: 30 * 60_000, backend: { name: 'command' } });
    expect(defaultBackendFactory('driver', config)).toMatchObject({ model: 'm1', timeoutMs: 5 * 60_000 });
    expect(() => defaultBackendFactory('driver', defaultConfig())).toThrow(expect.objectContaining({ code: 'config', message: 'No agent backend for the driver role.' }));
    const claude = parseConfigText('agents:\n  default: {backend: claude}\n', 'consort.yml');
    expect(() => defaultBackendFactory('dba', claude)).toThrow(/claude agent backend is not available/);
  });
});
