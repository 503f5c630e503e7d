/**
 * The project configuration (`.github/consort.yml` or `consort.config.json`) as one zod schema.
 * It is the single source of truth: the TypeScript type, the defaults, the editor JSON Schema
 * (`schema/consort.schema.json`) and the "did you mean" key list are all derived from it.
 * Secrets never live here: connection URLs come from the environment (see CONFIG_ENV_VARS).
 */
import path from 'node:path';
import { z } from 'zod';
import { branchNameProblem, MAX_BRANCH_NAME } from '../core/names.js';
import { parseDuration } from '../core/duration.js';
import { redact } from '../core/redact.js';
import { isNeverPassed } from '../core/child-env.js';
import { DEFAULT_DESIGN, DEFAULT_TEST_GLOBS, DESIGN_ROLES, ROLES } from '../conductor/roles.js';
import { OPTIONAL_GATES } from '../conductor/state.js';
import { AGENT_BACKENDS } from '../ports/agent-backend.js';

export const PROVIDERS = ['local', 'postgres', 'lakebase', 'neon'] as const;
export const CHECK_STAGES = ['migrations', 'lint', 'reversibility', 'suite'] as const;
export const LINT_LEVELS = ['error', 'warning', 'none'] as const;
export const MIGRATION_ROLES = ['branch', 'admin'] as const;

export type Provider = (typeof PROVIDERS)[number];
export type CheckStage = (typeof CHECK_STAGES)[number];
export type MigrationRole = (typeof MIGRATION_ROLES)[number];

/** Settings that are deliberately read from the environment, never from the committed file. */
export const CONFIG_ENV_VARS = {
  /** Admin connection URL for the `postgres` provider (it carries a password). */
  postgresUrl: 'CONSORT_POSTGRES_URL',
  /** Where the `local` provider keeps its embedded server's data directory. */
  dataDir: 'CONSORT_DATA_DIR',
} as const;

// For editors only: the refinements below (branchNameProblem) are what Consort enforces.
const BRANCH_PATTERN = '^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$';

// A namespace prefixes every branch name, so it must leave room inside the 63-character limit.
const MAX_NAMESPACE = 24;

function isDuration(text: string): boolean {
  try {
    parseDuration(text);
    return true;
  } catch {
    return false;
  }
}

const DURATION_EXAMPLES = 'such as 90s, 15m, 1h30m or 7d';

const duration = (description: string) =>
  z
    .string({ error: (iss) => `expected a duration such as 15m (a number needs a unit), got ${show(iss.input)}` })
    .refine(isDuration, { error: (iss) => `expected a positive duration ${DURATION_EXAMPLES}, got ${show(iss.input)}` })
    .meta({ description, pattern: '^(\\d+(\\.\\d+)?(ms|s|m|h|d|w))+$', examples: ['15m', '1h30m', '7d'] });

const branchName = (description: string, maxLength: number = MAX_BRANCH_NAME) =>
  z
    .string()
    .max(maxLength, { error: `must be at most ${maxLength} characters` })
    .refine((name) => branchNameProblem(name) === undefined, {
      error: (iss) => `${show(iss.input)} is not a valid branch name: it ${branchNameProblem(String(iss.input))}`,
    })
    .meta({ description, pattern: BRANCH_PATTERN });

const nonEmpty = () => z.string().min(1, { error: 'must not be empty' });

const isRegExp = (pattern: string): boolean => {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
};

/**
 * One spelling for a path relative to the repository root: `/` separators (a `\` is one too, as
 * git and Windows read it), no `.` segments, doubled or trailing slashes (`./db\migrations/` is
 * `db/migrations`; `.` the root itself). Every reader of a configured path — git for a commit, the
 * file system for a working tree, node-pg-migrate — then reads the same folder: on Linux a `\` is
 * an ordinary character in a name, and `migrations\` once named a folder of its own to the working
 * tree while the comparison with the base's `migrations` took it for the same one.
 */
export function normalRepoPath(p: string): string {
  return path.posix.normalize(p.replace(/\\/g, '/')).replace(/\/+$/, '') || '.';
}

// Paths are resolved against the repository root (the App reads them through the GitHub API),
// so absolute paths and `..` would point outside anything Consort can see.
const repoPath = (description: string) =>
  nonEmpty()
    .refine((p) => !p.startsWith('/') && !/^[A-Za-z]:/.test(p) && !p.split(/[\\/]/).includes('..'), {
      error: 'must be a path relative to the repository root, without ".."',
    })
    .overwrite(normalRepoPath)
    .meta({ description });

const uniqueList = <T extends z.ZodType<string>>(item: T) =>
  z
    .array(item)
    .check((ctx) => {
      const seen = new Set<string>();
      const twice = [...new Set(ctx.value.filter((item) => seen.size === seen.add(item).size))];
      if (twice.length > 0)
        ctx.issues.push({
          code: 'custom',
          input: ctx.value,
          message: `lists ${twice.map((t) => JSON.stringify(t)).join(', ')} more than once`,
        });
    })
    .meta({ uniqueItems: true });

export const seedShape = {
  file: repoPath('A SQL file run against the baseline branch.').optional(),
  command: nonEmpty().meta({ description: 'A shell command run with the baseline URL in suite.env.' }).optional(),
};

export type Seed = { kind: 'file'; path: string } | { kind: 'command'; command: string };

const seed = z
  .strictObject(seedShape)
  .refine((s) => (s.file === undefined) !== (s.command === undefined), {
    error: 'set exactly one of "file" or "command"',
  })
  .transform((s): Seed =>
    s.file !== undefined ? { kind: 'file', path: s.file } : { kind: 'command', command: s.command ?? '' },
  )
  // With only two allowed keys, "exactly one property" tells editors "file or command, not both".
  .meta({
    description: 'Data applied once when a baseline branch is built: a SQL file or a command.',
    minProperties: 1,
    maxProperties: 1,
  });

export const databaseShape = {
  provider: z
    .enum(PROVIDERS)
    .default('local')
    .meta({ description: 'Where branches live. Credentials come from the environment.' }),
  parent: branchName('The branch every PR and test branch is forked from.').default('main'),
  namespace: branchName(
    'postgres provider: prefix of the branch databases, so repositories can share a server (default: CONSORT_NAMESPACE, else the project folder name).',
    MAX_NAMESPACE,
  ).optional(),
  ttl: duration('Branches older than this are removed by gc (default: kept until their PR closes).').optional(),
  seed: seed.optional(),
  promote: z.boolean().default(false).meta({
    description:
      "GitHub App: when a PR is merged into the repository's default branch, apply its migrations to the parent branch, keeping a pre-merge snapshot branch if that fails.",
  }),
};

// node-pg-migrate puts these names between double quotes (and in string literals) unescaped, so
// only plain identifiers are safe to hand it; the case a name is written in is kept.
const sqlIdentifier = (dotted: string) =>
  z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, {
    error: (iss) =>
      `must be a plain SQL identifier (letters, digits, "_"; at most 63)${String(iss.input).includes('.') ? `; ${dotted}` : ''}`,
  });

// A schema name: a plain identifier PostgreSQL lets a user create ("pg_" names are its own).
const schemaName = () =>
  sqlIdentifier('name one schema, without a table').refine((name) => !/^pg_/i.test(name), {
    error: (iss) =>
      `${show(iss.input)} is not a schema a project can use: names starting with "pg_" are PostgreSQL's own`,
  });

export const migrationsShape = {
  dir: repoPath('Directory of versioned migrations (node-pg-migrate).').default('migrations'),
  table: sqlIdentifier('put the schema in migrations.migrationsSchema instead')
    .default('pgmigrations')
    .meta({ description: 'Table node-pg-migrate records applied migrations in.' }),
  schema: z
    .union(
      [
        schemaName(),
        z
          .array(schemaName())
          .min(1, { error: 'list at least one schema, or leave schema out' })
          .meta({ uniqueItems: true }),
      ],
      { error: 'expected a schema name or a list of schema names' },
    )
    .transform((s) => (typeof s === 'string' ? [s] : s))
    // Checked once a list (inside the union, its message would give way to the union's).
    .pipe(uniqueList(z.string()))
    .meta({
      description:
        "node-pg-migrate's --schema: the search_path while migrating (a list: the first is where unqualified names are created). Default: the connection's own (public).",
    })
    .optional(),
  createSchema: z.boolean().default(false).meta({
    description: "node-pg-migrate's --create-schema: create each schema of `schema` if it does not exist.",
  }),
  migrationsSchema: schemaName()
    .meta({
      description:
        "node-pg-migrate's --migrations-schema: the schema of the migrations table. Default: the first of `schema`, else public.",
    })
    .optional(),
  createMigrationsSchema: z.boolean().default(false).meta({
    description:
      "node-pg-migrate's --create-migrations-schema: create migrationsSchema if it does not exist (only when migrationsSchema is set, as in node-pg-migrate).",
  }),
  decamelize: z.boolean().default(false).meta({
    description:
      "node-pg-migrate's --decamelize: the names a migration gives node-pg-migrate's builder (pgm.createTable('userAccounts', { firstName: … })) are turned into snake_case (user_accounts.first_name), as the project deploys with it.",
  }),
  checkOrder: z.boolean().default(true).meta({
    description:
      'false for projects that deploy with --no-check-order: a new migration ordered before an applied one is a warning, not a plan failure.',
  }),
  ignorePattern: nonEmpty()
    .refine(isRegExp, {
      error: (iss) =>
        `${show(iss.input)} is not a valid regular expression (JavaScript syntax, as --ignore-pattern takes)`,
    })
    .default('\\..*')
    .meta({
      description:
        "node-pg-migrate's ignorePattern (--ignore-pattern): a regular expression matched against whole file names in migrations.dir; matching files are not migrations. Default: names starting with a dot.",
    }),
  timeout: duration(
    "How long the check lets the pull request's migrations run on one branch (the PR branch, the suite's copy, each of reversibility's steps): past it their statements are cancelled, a JavaScript migration's process is ended, and the migrations stage fails naming the migration that was running.",
  ).default('30m'),
};

export const suiteShape = {
  command: nonEmpty().default('npm test').meta({ description: 'The command that runs the project tests.' }),
  env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'must be an environment variable name (letters, digits, "_")' })
    .default('DATABASE_URL')
    .meta({ description: 'Environment variable that receives the branch connection URL.' }),
  reports: z
    .union([nonEmpty(), z.array(nonEmpty())], { error: 'expected a glob or a list of globs' })
    .transform((r) => (typeof r === 'string' ? [r] : r))
    .default([])
    .meta({ description: 'JUnit XML report glob(s) the suite writes, for per-test results.' }),
  timeout: duration('The suite is stopped after this long.').default('15m'),
  passEnv: uniqueList(
    z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'must be an environment variable name (letters, digits, "_")' })
      .refine((name) => !isNeverPassed(name), {
        error: (issue) =>
          `${String(issue.input)} is a credential of the runner, the GitHub App, Consort or its providers: it never reaches a project's code`,
      }),
  )
    .default([])
    .meta({
      description:
        "Credential-looking variables (JWT_SECRET, STRIPE_TEST_KEY…) of the environment Consort runs in that the suite, the seed and the migrations receive; others (*_SECRET, *_TOKEN, *_API_KEY…) are withheld. In the TDD lane, the only variables besides the basics they receive. In a check, the base branch's list counts.",
    }),
};

export const lintShape = {
  rules: uniqueList(z.string().regex(/^[a-z][a-z0-9-]*$/, { error: 'must be a rule name such as "ban-drop-column"' }))
    .default([])
    .meta({ description: 'Squawk rules to exclude (turn off).' }),
  failOn: z.enum(LINT_LEVELS).default('error').meta({
    description:
      "Lowest finding level that fails the lint stage. Read from the base branch's configuration in a check, never the pull request's.",
  }),
  severity: z
    .record(
      z.string().regex(/^[a-z][a-z0-9-]*$/, { error: 'must be a rule name such as "ban-drop-column"' }),
      z.enum(['error', 'warning']),
    )
    .default({})
    .meta({
      description:
        'Per-rule level, over the defaults (rules that lock or break production, such as adding-required-field, are errors; the rest warnings).',
    }),
};

export const reversibilityShape = {
  enabled: z.boolean().default(true).meta({
    description: 'Prove every migration reverses (up, down, up again, on the PR branch or a throwaway copy).',
  }),
  requireDown: z.boolean().default(false).meta({
    description:
      'A migration declared irreversible (down = false, -- consort: irreversible) fails the stage instead of being reported as declared.',
  }),
};

export const checkShape = {
  blocking: uniqueList(z.enum(CHECK_STAGES))
    .default([...CHECK_STAGES])
    .meta({
      description:
        "Stages whose failure fails the merge-gate check; the rest only report. Read from the base branch's configuration in a check, never the pull request's.",
    }),
  migrationsRole: z.enum(MIGRATION_ROLES).default('branch').meta({
    description:
      "Who applies a pull request's migrations in the check: branch (a role confined to the branch database) or admin (the provider's admin, for migrations that need a superuser). Read only from the base branch's configuration, never the pull request's; the suite and the seed always get the confined role.",
  }),
};

// Globs are matched against paths relative to the repository root: no absolute paths, no "..".
const glob = () =>
  nonEmpty()
    .refine((g) => !g.replace(/^!/, '').startsWith('/') && !g.split(/[\\/]/).includes('..'), {
      error: 'must be a glob relative to the repository root, without ".."',
    })
    .meta({ description: 'A path glob (*, **, ?, {a,b}, [abc]); a leading ! excludes.' });

export const agentShape = {
  backend: z.enum(AGENT_BACKENDS).meta({
    description:
      'Which agent runs the turns: command (any CLI or script), claude (Claude Agent SDK), codex (Codex SDK) or openai (any OpenAI-compatible chat endpoint).',
  }),
  command: nonEmpty()
    .meta({ description: 'command backend: the shell command run in the workspace for each turn.' })
    .optional(),
  model: nonEmpty()
    .meta({ description: 'The model, for backends that take one (passed to a command as CONSORT_MODEL).' })
    .optional(),
  timeout: duration('A turn is stopped after this long (default: build.turnTimeout).').optional(),
  maxCostUsd: z
    .number()
    .positive()
    .meta({
      description:
        'Model backends: the most a single turn may cost (claude enforces it; codex and openai report no cost).',
    })
    .optional(),
  maxTurns: z
    .number()
    .int()
    .positive()
    .meta({ description: 'Model backends: the most tool-loop steps in one turn.' })
    .optional(),
  baseUrl: z
    .url({ error: 'must be a URL, e.g. https://api.openai.com/v1' })
    .meta({
      description:
        'openai backend: the endpoint base URL, up to where /chat/completions follows (https://api.openai.com/v1; Databricks model serving: https://<workspace>/serving-endpoints; a local gateway).',
    })
    .optional(),
  apiKeyEnv: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'must be an environment variable name' })
    .meta({
      description:
        'Name of the environment variable that holds the API key (never the key itself). Defaults: OPENAI_API_KEY (openai, codex), ANTHROPIC_API_KEY (claude).',
    })
    .optional(),
};

const agent = z
  .strictObject(agentShape)
  .refine((a) => a.backend !== 'command' || a.command !== undefined, {
    error: 'the command backend needs "command"',
    path: ['command'],
  })
  .refine((a) => a.backend !== 'openai' || (a.baseUrl !== undefined && a.model !== undefined), {
    error: 'the openai backend needs "baseUrl" and "model"',
    path: ['baseUrl'],
  })
  .meta({ description: 'An agent backend and its settings.' });

export const roleShape = {
  instructions: repoPath(
    'The role prompt (markdown); default .consort/roles/<role>.md if present, else the built-in prompt.',
  ).optional(),
  reads: uniqueList(glob())
    .meta({ description: "What the role's context pack may include. Placeholders: {feature}, {tests}, {migrations}." })
    .optional(),
  writes: uniqueList(glob())
    .meta({ description: "What the role's turns may change; anything else is refused and reverted." })
    .optional(),
  agent: agent.optional(),
};

const rolesShape = Object.fromEntries(ROLES.map((r) => [r, z.strictObject(roleShape).optional()])) as Record<
  (typeof ROLES)[number],
  z.ZodOptional<z.ZodObject<typeof roleShape, z.core.$strict>>
>;

export const agentsShape = {
  default: agent.optional().meta({ description: 'The agent for every role that does not set its own.' }),
};

export const gatesShape = {
  optional: uniqueList(z.enum(OPTIONAL_GATES))
    .default([])
    .meta({ description: 'Gates to add to the always-on spec and merge gates: plan, test_list, deploy.' }),
  mode: z.enum(['human', 'proxy']).default('human').meta({
    description:
      'human: a named person approves (consort approve); proxy: valid artifacts are approved automatically, and logged.',
  }),
  approvers: uniqueList(
    z.string().regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\/[A-Za-z0-9._-]{1,100})?$/, {
      error: 'must be a GitHub login or a team as "org/team-slug"',
    }),
  )
    .default([])
    .meta({
      description:
        'Who may approve gates with /consort approve: GitHub logins and teams ("org/team-slug"). Empty: anyone with write access.',
    }),
  selfApproval: z.boolean().default(false).meta({
    description:
      "Whether a pull request's author may approve its gates with /consort approve (default false: a second person approves).",
  }),
};

export const buildShape = {
  tests: uniqueList(glob())
    .default([...DEFAULT_TEST_GLOBS])
    .meta({ description: 'Where tests live: only the navigator may change these, and only in RED.' }),
  design: uniqueList(z.enum(DESIGN_ROLES))
    .default([...DEFAULT_DESIGN])
    .meta({ description: 'The design roles, in order (the ux-designer joins user-facing features).' }),
  rejectBornGreen: z
    .boolean()
    .default(true)
    .meta({ description: 'Reject a new test that passes before any implementation.' }),
  retries: z
    .number()
    .int({ error: 'must be a whole number' })
    .min(0, { error: 'must not be negative' })
    .max(5, { error: 'must be at most 5' })
    .default(1)
    .meta({ description: 'Informed retries after a refused, failed or incomplete turn, before a human is asked.' }),
  repairRounds: z
    .number()
    .int({ error: 'must be a whole number' })
    .min(0, { error: 'must not be negative' })
    .max(10, { error: 'must be at most 10' })
    .default(3)
    .meta({ description: 'GREEN/REFACTOR repair rounds after a red suite, before a human is asked.' }),
  turnTimeout: duration('An agent turn is stopped after this long.').default('30m'),
  experiments: z
    .number()
    .int({ error: 'must be a whole number' })
    .min(1, { error: 'must be at least 1' })
    .max(8, { error: 'must be at most 8' })
    .default(1)
    .meta({
      description:
        'Competing GREEN attempts per item, each in its own git worktree and database branches; the green one with the fewest changed lines wins.',
    }),
  branchPool: z
    .number()
    .int({ error: 'must be a whole number' })
    .min(0, { error: 'must not be negative' })
    .max(8, { error: 'must be at most 8' })
    .default(2)
    .meta({
      description:
        "Ready copies of the run's baseline branch kept in a warm pool (local and postgres providers), so a turn's or a proof's branch is handed out instead of copied; 0 turns the pool off. Dropped at the end of the run.",
    }),
};

// Where `consort pair` (and its git hook and editor extension) puts the paired branch's URL.
export const pairingShape = {
  envFile: repoPath(
    'The dotenv file that receives the paired branch URL (written atomically; other lines untouched).',
  ).default('.env'),
  envKey: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'must be an environment variable name (letters, digits, "_")' })
    .default('DATABASE_URL')
    .meta({ description: 'The variable in envFile that holds the paired branch URL.' }),
  writeEnv: z.boolean().default(true).meta({
    description:
      'Write the URL into envFile on every pairing (false: only print it, e.g. for eval "$(consort pair --export)").',
  }),
  rootGitBranches: uniqueList(nonEmpty())
    .default(['main', 'master'])
    .meta({ description: 'Git branches paired with database.parent itself instead of a branch of their own.' }),
};

const sections = {
  database: databaseShape,
  migrations: migrationsShape,
  suite: suiteShape,
  lint: lintShape,
  reversibility: reversibilityShape,
  check: checkShape,
  roles: rolesShape,
  agents: agentsShape,
  gates: gatesShape,
  build: buildShape,
  pairing: pairingShape,
};

// `prefault` (not `default`) so an absent section is parsed from `{}` and gets its inner defaults.
export const ConsortConfigSchema = z
  .strictObject({
    $schema: z.string().optional().meta({ description: 'JSON Schema reference for editors; ignored by Consort.' }),
    database: z.strictObject(databaseShape).prefault({}),
    migrations: z
      .strictObject(migrationsShape)
      // node-pg-migrate's --decamelize turns the migrations table's names into snake_case where it
      // creates and reads the table, not where it looks it up and records a run: any other name fails there.
      .superRefine((m, ctx) => {
        if (!m.decamelize) return;
        for (const key of ['table', 'migrationsSchema'] as const) {
          const name = m[key];
          if (name !== undefined && /[A-Z]/.test(name))
            ctx.addIssue({
              code: 'custom',
              path: [key],
              message: `with decamelize, node-pg-migrate needs it in snake_case (${JSON.stringify(name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase())}): it decamelizes the name in some of its statements and not in others`,
            });
        }
      })
      .prefault({}),
    suite: z.strictObject(suiteShape).prefault({}),
    lint: z.strictObject(lintShape).prefault({}),
    reversibility: z.strictObject(reversibilityShape).prefault({}),
    check: z.strictObject(checkShape).prefault({}),
    roles: z.strictObject(rolesShape).prefault({}).meta({ description: 'TDD lane: per-role prompt, scope and agent.' }),
    agents: z.strictObject(agentsShape).prefault({}).meta({ description: 'TDD lane: the default agent backend.' }),
    gates: z.strictObject(gatesShape).prefault({}).meta({ description: 'TDD lane: approval gates.' }),
    build: z
      .strictObject(buildShape)
      .prefault({})
      .meta({ description: 'TDD lane: tests, design roles, retries and repairs.' }),
    pairing: z
      .strictObject(pairingShape)
      .prefault({})
      .meta({ description: 'Git ↔ database branch pairing: consort pair, its git hooks and the VS Code extension.' }),
  })
  .meta({ title: 'Consort configuration', description: 'Settings for .github/consort.yml or consort.config.json.' });

/** The configuration after parsing: every defaulted key is present. */
export type ConsortConfig = z.output<typeof ConsortConfigSchema>;
/** What a user may write in the file: everything optional. */
export type ConsortConfigInput = z.input<typeof ConsortConfigSchema>;

/** A fresh, fully defaulted configuration (fresh so callers cannot mutate a shared one). */
export function defaultConfig(): ConsortConfig {
  return ConsortConfigSchema.parse({});
}

/** Every key a file may contain, dotted (`suite.command`), for "did you mean" suggestions. */
export const KNOWN_KEYS: readonly string[] = [
  '$schema',
  ...Object.entries(sections).flatMap(([section, shape]) => [
    section,
    ...Object.keys(shape).map((key) => `${section}.${key}`),
  ]),
  ...Object.keys(seedShape).map((key) => `database.seed.${key}`),
  ...ROLES.flatMap((role) => [
    ...Object.keys(roleShape).map((key) => `roles.${role}.${key}`),
    ...Object.keys(agentShape).map((key) => `roles.${role}.agent.${key}`),
  ]),
  ...Object.keys(agentShape).map((key) => `agents.default.${key}`),
];

/**
 * A value as it appears in messages: lists and maps named, not dumped; strings quoted, shortened
 * and with URL passwords masked, since a value typed under the wrong key may well be a secret.
 */
export function show(value: unknown): string {
  if (value === null || value === undefined) return 'an empty value';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  if (typeof value === 'string') {
    const masked = redact(value);
    return JSON.stringify(masked.length > 60 ? `${masked.slice(0, 57)}...` : masked);
  }
  return `${typeof value} ${String(value)}`;
}
