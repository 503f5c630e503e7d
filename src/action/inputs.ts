/**
 * The Action's inputs (action.yml), read once into one typed object. GitHub passes every input as
 * a string, '' when unset; '' becomes undefined here and nowhere else. An invalid input fails the
 * step with a message that names it. Secret inputs are never echoed back.
 */
import { z } from 'zod';
import { parseDuration } from '../core/duration.js';
import { ConsortError } from '../core/errors.js';
import { WRITE_PACING, type WritePacing } from '../github/client.js';

export const INPUT = {
  mode: 'mode',
  githubToken: 'github-token',
  githubWritePacing: 'github-write-pacing',
  config: 'config',
  provider: 'provider',
  databaseUrl: 'database-url',
  suiteCommand: 'suite-command',
  comment: 'comment',
  commentKey: 'comment-key',
  failOn: 'fail-on',
  rebuildBaseline: 'rebuild-baseline',
  databricksHost: 'databricks-host',
  databricksToken: 'databricks-token',
  databricksClientId: 'databricks-client-id',
  databricksClientSecret: 'databricks-client-secret',
  lakebaseProject: 'lakebase-project',
  lakebaseDatabase: 'lakebase-database',
  neonApiKey: 'neon-api-key',
  neonProjectId: 'neon-project-id',
  neonApiHost: 'neon-api-host',
  neonDatabase: 'neon-database',
  neonRole: 'neon-role',
  feature: 'feature',
  pullRequest: 'pull-request',
  buildLabel: 'build-label',
  maxTurns: 'max-turns',
  maxCostUsd: 'max-cost-usd',
  timeLimit: 'time-limit',
  anthropicApiKey: 'anthropic-api-key',
  openaiApiKey: 'openai-api-key',
  reflink: 'reflink',
} as const;
export type InputName = (typeof INPUT)[keyof typeof INPUT];

/** What the Action can do: the PR lane (check, cleanup) and the TDD lane (build, approve). */
export const MODES = ['check', 'cleanup', 'build', 'approve'] as const;
export type ActionMode = (typeof MODES)[number];

/** Masked before anything else is read, so no later message can reveal them. */
export const SECRET_INPUTS: readonly InputName[] = [
  INPUT.githubToken,
  INPUT.databaseUrl,
  INPUT.databricksToken,
  INPUT.databricksClientSecret,
  INPUT.neonApiKey,
  INPUT.anthropicApiKey,
  INPUT.openaiApiKey,
];

/** Model API keys: each input becomes the variable the agent backends read (agents.*.apiKeyEnv defaults). */
export const AGENT_INPUT_ENV: Readonly<Partial<Record<InputName, string>>> = {
  [INPUT.anthropicApiKey]: 'ANTHROPIC_API_KEY',
  [INPUT.openaiApiKey]: 'OPENAI_API_KEY',
};

/**
 * Cloud provider settings: each input becomes the environment variable the provider reads
 * (docs/providers.md), so the Action, the CLI and the App configure Lakebase and Neon alike.
 */
export const CLOUD_INPUT_ENV: Readonly<Partial<Record<InputName, string>>> = {
  [INPUT.databricksHost]: 'DATABRICKS_HOST',
  [INPUT.databricksToken]: 'DATABRICKS_TOKEN',
  [INPUT.databricksClientId]: 'DATABRICKS_CLIENT_ID',
  [INPUT.databricksClientSecret]: 'DATABRICKS_CLIENT_SECRET',
  [INPUT.lakebaseProject]: 'CONSORT_LAKEBASE_PROJECT',
  [INPUT.lakebaseDatabase]: 'CONSORT_LAKEBASE_DATABASE',
  [INPUT.neonApiKey]: 'NEON_API_KEY',
  [INPUT.neonProjectId]: 'NEON_PROJECT_ID',
  [INPUT.neonApiHost]: 'NEON_API_HOST',
  [INPUT.neonDatabase]: 'NEON_DATABASE',
  [INPUT.neonRole]: 'NEON_ROLE',
};

const ACTION_PROVIDERS = ['local', 'postgres', 'lakebase', 'neon'] as const;
const COMMENT_MODES = ['sticky', 'off'] as const;
const FAIL_ON = ['error', 'warning'] as const;
/** `false`: the runner's own disk; `auto`: a loop-mounted reflink XFS when the runner allows it; `true`: that or fail. */
export const REFLINK = ['false', 'auto', 'true'] as const;
export type ReflinkInput = (typeof REFLINK)[number];

export interface ActionInputs {
  mode: ActionMode;
  githubToken: string | undefined;
  /** `github`: GitHub's spacing between API writes; `none`: no spacing (GHES without rate limits). */
  githubWritePacing: WritePacing;
  /** Config file path relative to the workspace; default: discovered (.github/consort.yml, …). */
  config: string | undefined;
  /** Default: the config's database.provider, or postgres when a database URL is given. */
  provider: (typeof ACTION_PROVIDERS)[number] | undefined;
  databaseUrl: string | undefined;
  /** Replaces the config's suite.command. */
  suiteCommand: string | undefined;
  comment: (typeof COMMENT_MODES)[number];
  /** Names this job's sticky comment apart from other jobs' on the same pull request (src/action/comment-key.ts). */
  commentKey: string | undefined;
  /** Replaces the config's lint.failOn: `warning` makes lint warnings fail the check too. */
  failOn: (typeof FAIL_ON)[number] | undefined;
  /** check: build the baseline from base alone when the parent has migrations base does not know (`--rebuild-baseline`). */
  rebuildBaseline: boolean;
  /** Environment for the lakebase/neon providers, from their inputs (empty when none are set). */
  cloudEnv: Record<string, string>;
  /** local provider: put its data directory on a loop-mounted reflink XFS (src/action/reflink.ts). */
  reflink: ReflinkInput;
  /** The TDD lane (modes build and approve). */
  lane: LaneInputs;
}

export interface LaneInputs {
  /** The feature to build when the trigger does not name one (workflow_dispatch, label). */
  feature: string | undefined;
  /** The pull request a workflow_dispatch run works on. */
  pullRequest: number | undefined;
  /** Adding this label to a pull request starts the lane. */
  buildLabel: string;
  /** Agent turns per run. */
  maxTurns: number;
  /** USD per run, as the backends report it (codex reports none: bound it with max-turns). */
  maxCostUsd: number | undefined;
  /** Wall-clock limit per run in ms: no action starts after it, so the state is saved and pushed before the job's timeout. */
  timeLimitMs: number;
  /** ANTHROPIC_API_KEY / OPENAI_API_KEY for the agents, from their inputs. */
  agentEnv: Record<string, string>;
}

const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: (iss) => `must be one of ${values.join(', ')} (got ${JSON.stringify(String(iss.input))})` });

/** A boolean input as core.getBooleanInput reads one (YAML 1.2's core schema). */
const booleanInput = (fallback: 'true' | 'false') =>
  z
    .string()
    .default(fallback)
    .transform((text, c) => {
      if (['true', 'True', 'TRUE'].includes(text)) return true;
      if (['false', 'False', 'FALSE'].includes(text)) return false;
      c.addIssue({ code: 'custom', message: `must be true or false (got ${JSON.stringify(text)})` });
      return z.NEVER;
    });

const Schema = z.object({
  [INPUT.mode]: oneOf(MODES).default('check'),
  [INPUT.githubToken]: z.string().optional(),
  [INPUT.githubWritePacing]: oneOf(WRITE_PACING).default('github'),
  [INPUT.config]: z.string().optional(),
  [INPUT.provider]: oneOf(ACTION_PROVIDERS).optional(),
  // Never show the value: it carries a password.
  [INPUT.databaseUrl]: z
    .string()
    .regex(/^postgres(?:ql)?:\/\//, { error: 'must be a postgres:// or postgresql:// connection string' })
    .optional(),
  [INPUT.suiteCommand]: z.string().optional(),
  [INPUT.comment]: oneOf(COMMENT_MODES).default('sticky'),
  [INPUT.commentKey]: z
    .string()
    .regex(/^[A-Za-z0-9._/@:+=-]{1,100}$/, {
      error: 'must be 1 to 100 letters, digits and . _ / @ : + = - (e.g. services/api or pg-17)',
    })
    .optional(),
  [INPUT.failOn]: oneOf(FAIL_ON).optional(),
  [INPUT.rebuildBaseline]: booleanInput('false'),
  [INPUT.reflink]: oneOf(REFLINK).default('false'),
  [INPUT.feature]: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,47}$/, {
      error: 'must be a feature slug (lowercase letters, digits and "-") or number',
    })
    .optional(),
  [INPUT.pullRequest]: z.coerce.number().int().positive({ error: 'must be a pull request number' }).optional(),
  [INPUT.buildLabel]: z.string().default('consort:build'),
  [INPUT.maxTurns]: z.coerce
    .number()
    .int()
    .min(1, { error: 'must be a whole number of turns, at least 1' })
    .default(12),
  [INPUT.maxCostUsd]: z.coerce.number().positive({ error: 'must be a positive amount in US dollars' }).optional(),
  [INPUT.timeLimit]: z
    .string()
    .default('45m')
    .transform((text, c) => {
      try {
        return parseDuration(text);
      } catch {
        c.addIssue({ code: 'custom', message: 'must be a duration such as 45m or 1h30m' });
        return z.NEVER;
      }
    }),
  ...Object.fromEntries(Object.keys(AGENT_INPUT_ENV).map((name) => [name, z.string().optional()])),
  ...Object.fromEntries(Object.keys(CLOUD_INPUT_ENV).map((name) => [name, z.string().optional()])),
});

function envFrom(map: Readonly<Partial<Record<InputName, string>>>, values: object): Record<string, string> {
  return Object.fromEntries(
    Object.entries(map).flatMap(([input, env]) => {
      const value = (values as Record<string, unknown>)[input];
      return typeof value === 'string' ? [[env, value]] : [];
    }),
  );
}

/** `read` is core.getInput in the Action (it trims), a record lookup in tests. */
export function parseInputs(read: (name: InputName) => string): ActionInputs {
  const raw: Partial<Record<InputName, string>> = {};
  for (const name of Object.values(INPUT)) {
    const value = read(name);
    if (value !== '') raw[name] = value;
  }
  const parsed = Schema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `input "${String(i.path[0])}" ${i.message}`);
    throw new ConsortError('invalid-input', `Invalid ${problems.join('; ')}.`, {
      hint: 'See the inputs table in the README (GitHub Action section).',
    });
  }
  const v = parsed.data;
  if (v[INPUT.provider] === 'local' && v[INPUT.databaseUrl] !== undefined) {
    throw new ConsortError(
      'invalid-input',
      'Invalid input "database-url": it is only used with provider: postgres, and provider is local.',
      {
        hint: 'Remove database-url, or set provider: postgres.',
      },
    );
  }
  const provider = v[INPUT.provider] ?? (v[INPUT.databaseUrl] !== undefined ? 'postgres' : undefined);
  if (v[INPUT.reflink] === 'true' && provider !== undefined && provider !== 'local') {
    throw new ConsortError(
      'invalid-input',
      `Invalid input "reflink": it puts the local provider's data directory on a loop-mounted XFS, and provider is ${provider}.`,
      { hint: 'Remove reflink, or set provider: local.' },
    );
  }
  return {
    mode: v[INPUT.mode],
    githubToken: v[INPUT.githubToken],
    githubWritePacing: v[INPUT.githubWritePacing],
    config: v[INPUT.config],
    provider,
    databaseUrl: v[INPUT.databaseUrl],
    suiteCommand: v[INPUT.suiteCommand],
    comment: v[INPUT.comment],
    commentKey: v[INPUT.commentKey],
    failOn: v[INPUT.failOn],
    rebuildBaseline: v[INPUT.rebuildBaseline],
    cloudEnv: envFrom(CLOUD_INPUT_ENV, v),
    reflink: v[INPUT.reflink],
    lane: {
      feature: v[INPUT.feature],
      pullRequest: v[INPUT.pullRequest],
      buildLabel: v[INPUT.buildLabel],
      maxTurns: v[INPUT.maxTurns],
      maxCostUsd: v[INPUT.maxCostUsd],
      timeLimitMs: v[INPUT.timeLimit],
      agentEnv: envFrom(AGENT_INPUT_ENV, v),
    },
  };
}
