/**
 * From the project's configuration to what the conductor and the driver need: the conductor's
 * policy (scopes, gates, budgets), each role's prompt and reads, and its agent backend.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConsortConfig } from '../../config/schema.js';
import { migrationPlacement } from '../../migrations/placement.js';
import {
  DEFAULT_HARNESS,
  expandGlobs,
  type Placeholders,
  ROLE_DEFAULTS,
  ROLES,
  type Role,
} from '../../conductor/roles.js';
import { CONFIG_FILES } from '../../config/load.js';
import type { Policy } from '../../conductor/state.js';
import { parseDuration } from '../../core/duration.js';
import { ConsortError } from '../../core/errors.js';
import { findPackageRoot } from '../../core/package-root.js';
import type { AgentBackend, AgentBackends } from '../../ports/agent-backend.js';
import { featureDirOf } from './store.js';

/** The built-in prompts: `roles/<role>.md` at the package root, or next to the bundled Action (dist/roles/). */
const PACKAGE_ROLES = path.join(findPackageRoot() ?? '.', 'roles');
export const BUILTIN_ROLES_DIR =
  [PACKAGE_ROLES, fileURLToPath(new URL('./roles/', import.meta.url))].find((dir) =>
    existsSync(path.join(dir, 'spec-author.md')),
  ) ?? PACKAGE_ROLES;

export function placeholders(config: ConsortConfig, feature: string): Placeholders {
  return { feature: featureDirOf(feature), tests: config.build.tests, migrations: config.migrations.dir };
}

export function buildPolicy(
  config: ConsortConfig,
  feature: string,
  gateMode?: 'human' | 'proxy',
  experiments?: number,
): Policy {
  const p = placeholders(config, feature);
  const writes = Object.fromEntries(
    ROLES.map((r) => [r, expandGlobs(config.roles[r]?.writes ?? ROLE_DEFAULTS[r].writes, p)]),
  ) as Record<Role, string[]>;
  return {
    featureDir: p.feature,
    design: [...config.build.design],
    optionalGates: [...config.gates.optional],
    gateMode: gateMode ?? config.gates.mode,
    rejectBornGreen: config.build.rejectBornGreen,
    retries: config.build.retries,
    repairRounds: config.build.repairRounds,
    // Nothing in the migrations directory is a test, whatever its name (`migrations/…_x.test.sql` is
    // applied as a migration): the navigator may not write it in RED and it is never frozen as a test.
    tests: [...expandGlobs(config.build.tests, p), ...expandGlobs(['!{migrations}/**'], p)],
    writes,
    ignore: [...config.suite.reports],
    experiments: experiments ?? config.build.experiments,
    harness: [...DEFAULT_HARNESS],
    // Migrations already on the base join this list when a run starts (lockedMigrations).
    locked: [
      ...CONFIG_FILES,
      '.consort/roles/**',
      // A role's prompt the configuration names elsewhere (`docs/roles/navigator.md`): read afresh by
      // every turn of that role, so the driver's `**` would let it write the next navigator's instructions.
      ...ROLES.flatMap((r) => config.roles[r]?.instructions ?? []),
      ...(config.database.seed?.kind === 'file' ? [config.database.seed.path] : []),
    ],
  };
}

export function roleReads(config: ConsortConfig, feature: string, role: Role): string[] {
  return expandGlobs(config.roles[role]?.reads ?? ROLE_DEFAULTS[role].reads, placeholders(config, feature));
}

/** The role's prompt: the configured file, else `.consort/roles/<role>.md`, else the built-in one. */
export async function roleInstructions(workspace: string, config: ConsortConfig, role: Role): Promise<string> {
  const configured = config.roles[role]?.instructions;
  const candidates = [
    ...(configured ? [path.join(workspace, configured)] : []),
    path.join(workspace, '.consort', 'roles', `${role}.md`),
    path.join(BUILTIN_ROLES_DIR, `${role}.md`),
  ];
  for (const file of candidates) {
    const text = await readFile(file, 'utf8').catch(() => null);
    if (text !== null) return text;
    if (file === candidates[0] && configured) {
      throw new ConsortError('config', `The ${role}'s instructions file ${configured} cannot be read.`, {
        hint: `Fix roles.${role}.instructions in the configuration.`,
      });
    }
  }
  throw new ConsortError('internal', `No prompt for the ${role} role (looked in ${candidates.join(', ')}).`, {
    hint: 'Reinstall Consort: its roles/ folder is missing.',
  });
}

export interface RoleAgent {
  backend: AgentBackend;
  model: string | null;
  timeoutMs: number;
  maxCostUsd?: number;
  maxTurns?: number;
}

const DEFAULT_KEY_ENV = { openai: 'OPENAI_API_KEY', codex: 'OPENAI_API_KEY', claude: 'ANTHROPIC_API_KEY' } as const;

/** A model backend's API key, from the environment variable the configuration names. */
function apiKey(
  env: NodeJS.ProcessEnv,
  backend: keyof typeof DEFAULT_KEY_ENV,
  envName: string | undefined,
  role: Role,
  required: boolean,
): string | undefined {
  const name = envName ?? DEFAULT_KEY_ENV[backend];
  const value = env[name];
  if (required && !value) {
    throw new ConsortError(
      'config',
      `The ${backend} agent of the ${role} role needs an API key in ${name}, which is not set.`,
      {
        hint: `Export ${name} (in the Action, from a repository secret), or set agent.apiKeyEnv to the variable that holds it.`,
      },
    );
  }
  return value || undefined;
}

/** `env` is the agents' environment (process.env unless the caller narrowed it). */
/** The variables that hold the configured agents' API keys (for keeping them from the project's suite). */
export function agentKeyEnvNames(config: ConsortConfig): string[] {
  const agents = [config.agents.default, ...Object.values(config.roles).map((r) => r?.agent)];
  const names = new Set<string>(Object.values(DEFAULT_KEY_ENV));
  for (const a of agents) if (a?.apiKeyEnv) names.add(a.apiKeyEnv);
  return [...names].sort();
}

export type BackendFactory = (role: Role, config: ConsortConfig, env?: NodeJS.ProcessEnv) => RoleAgent;

/** The agent a role uses: its own `agent`, else `agents.default`, built by the shell's backends. */
export const backendFactory =
  (backends: AgentBackends): BackendFactory =>
  (role, config, env = process.env) => {
    const agent = config.roles[role]?.agent ?? config.agents.default;
    if (agent === undefined) {
      throw new ConsortError('config', `No agent backend for the ${role} role.`, {
        hint: 'Set agents.default (or roles.<role>.agent) in the Consort configuration (.github/consort.yml or consort.config.json), e.g. agents: { default: { backend: command, command: "node agents/run.mjs" } }.',
      });
    }
    const timeoutMs = parseDuration(agent.timeout ?? config.build.turnTimeout);
    const settings = {
      model: agent.model ?? null,
      timeoutMs,
      ...(agent.maxCostUsd === undefined ? {} : { maxCostUsd: agent.maxCostUsd }),
      ...(agent.maxTurns === undefined ? {} : { maxTurns: agent.maxTurns }),
    };
    const urlVars = [config.suite.env];
    switch (agent.backend) {
      case 'command':
        // A scripted or wrapped CLI agent may call a model: it gets the configured key variable (or the defaults), nothing else secret.
        return {
          backend: backends.command({
            command: agent.command ?? '',
            urlVars,
            env,
            keys: agent.apiKeyEnv ? [agent.apiKeyEnv] : [...new Set(Object.values(DEFAULT_KEY_ENV))],
          }),
          ...settings,
        };
      case 'openai':
        return {
          backend: backends.openai({
            baseUrl: agent.baseUrl!,
            model: agent.model!,
            apiKey: apiKey(env, 'openai', agent.apiKeyEnv, role, true)!,
            suite: {
              command: config.suite.command,
              env: config.suite.env,
              migrations: { dir: config.migrations.dir, placement: migrationPlacement(config.migrations) },
            },
          }),
          ...settings,
        };
      case 'claude': {
        const key = apiKey(env, 'claude', agent.apiKeyEnv, role, false);
        return {
          backend: backends.claude({
            ...(agent.model ? { model: agent.model } : {}),
            ...(key ? { apiKey: key } : {}),
            urlVars,
            env,
          }),
          ...settings,
        };
      }
      case 'codex': {
        const key = apiKey(env, 'codex', agent.apiKeyEnv, role, false);
        return {
          backend: backends.codex({
            ...(agent.model ? { model: agent.model } : {}),
            ...(key ? { apiKey: key } : {}),
            urlVars,
            env,
          }),
          ...settings,
        };
      }
    }
  };
