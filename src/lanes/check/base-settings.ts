/**
 * Settings a pull request must not be able to grant itself — `check.migrationsRole`, which lets
 * the PR's migrations run as the admin, and the settings that decide the merge gate's verdict
 * (`VerdictSettings`) — are read from the base side's own configuration file (the trusted side:
 * what is already merged), never from the head's. The base is a commit
 * (`consort check`, the Action: read with git, without a checkout) or a checked-out tree (the App).
 * A base without a valid file gets the defaults: the confined role.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CONFIG_FILES, checkConfigText, formatProblem } from '../../config/load.js';
import { defaultConfig, type ConsortConfig, type MigrationRole } from '../../config/schema.js';
import type { GitRepo } from '../../ports/git.js';

/**
 * What decides the check's verdict, apart from the project's own suite: which stages block, the
 * lint policy, whether reversibility is proven, the migration order rule, which files are
 * migrations (`migrations.ignorePattern`), where they run and are recorded (`migrations.table`,
 * `schema`, `migrationsSchema`…), the branch every
 * check copies (and so whose data the pull request's code reads) and the seed that fills its copy. A pull request that could set
 * them could turn its own gate green (`check.blocking: []`), so the base's values count.
 */
export interface VerdictSettings {
  blocking: ConsortConfig['check']['blocking'];
  lint: ConsortConfig['lint'];
  reversibility: ConsortConfig['reversibility'];
  checkOrder: boolean;
  /** Which files in the migrations directory are migrations: a change could hide its own otherwise. */
  ignorePattern: string;
  /**
   * Where the migrations run and are recorded (`migrations.table`, `schema`, `createSchema`,
   * `migrationsSchema`, `createMigrationsSchema`), and what names they make (`decamelize`): they decide which of the parent's applied
   * migrations the baseline finds, and in whose tables the change's migrations land. A change that
   * set `schema: sandbox` ran its migrations on fresh empty tables there instead of on the parent's
   * populated ones, and passed where the deploy would fail.
   */
  placement: MigrationPlacementSettings;
  parent: string;
  /**
   * `database.seed`: it runs on the baseline before the PR branch is copied from it, as a role that
   * owns its tables, so it can rewrite the parent's rows the change's migrations must apply on. A
   * change whose seed "fixed" the null its `SET NOT NULL` fails on passed where the deploy fails.
   */
  seed: ConsortConfig['database']['seed'];
  /**
   * `suite.passEnv`: the credential-looking variables the change's code (suite, seed, migrations)
   * receives. Not the verdict, but as much the base's to grant: a change that listed its runner's
   * `AWS_SECRET_ACCESS_KEY` would be given it.
   */
  passEnv: string[];
}

export type MigrationPlacementSettings = Pick<
  ConsortConfig['migrations'],
  'table' | 'schema' | 'createSchema' | 'migrationsSchema' | 'createMigrationsSchema' | 'decamelize'
>;

/** The placement keys as `migrations.*` spells them, in the order the reference lists them. */
export const PLACEMENT_KEYS = [
  'table',
  'schema',
  'createSchema',
  'migrationsSchema',
  'createMigrationsSchema',
  'decamelize',
] as const;

function placementOf(m: ConsortConfig['migrations']): MigrationPlacementSettings {
  return {
    table: m.table,
    ...(m.schema !== undefined ? { schema: [...m.schema] } : {}),
    createSchema: m.createSchema,
    ...(m.migrationsSchema !== undefined ? { migrationsSchema: m.migrationsSchema } : {}),
    createMigrationsSchema: m.createMigrationsSchema,
    decamelize: m.decamelize,
  };
}

export function verdictSettings(config: ConsortConfig): VerdictSettings {
  return {
    blocking: [...config.check.blocking],
    lint: { ...config.lint, rules: [...config.lint.rules], severity: { ...config.lint.severity } },
    reversibility: { ...config.reversibility },
    checkOrder: config.migrations.checkOrder,
    ignorePattern: config.migrations.ignorePattern,
    placement: placementOf(config.migrations),
    parent: config.database.parent,
    seed: config.database.seed === undefined ? undefined : { ...config.database.seed },
    passEnv: [...config.suite.passEnv],
  };
}

export interface SideSettings {
  migrationsRole: MigrationRole;
  /**
   * The side's own `migrations.dir` (absent: the side has no valid configuration, or it is a file
   * outside the repository): where the base's migrations are read, so a change that points the
   * check at another folder sees the base's migrations as deleted.
   */
  migrationsDir?: string;
  /**
   * The side's `migrations.timeout` (the default when it has no valid configuration; absent when
   * the file lies outside the repository): the limit on the base's own migrations as the baseline
   * applies them, which a pull request must not be able to lift or tighten.
   */
  migrationsTimeout?: string;
  /**
   * The verdict's settings (the defaults when the side has no valid configuration); absent when
   * the configuration file lies outside the repository (`--config ../x.yml`), where no pull
   * request can change it: then the file as given counts.
   */
  verdict?: VerdictSettings;
  /** The configuration file they were read from, relative to the repository root; null: none. */
  source: string | null;
  /** Why the file's settings were not used (it is invalid, several files, a path outside the repository). */
  problem?: string;
}

/** No configuration on the side (an empty base, a side that was not read): the confined role. */
export const DEFAULT_SIDE_SETTINGS: SideSettings = {
  migrationsRole: 'branch',
  verdict: verdictSettings(defaultConfig()),
  source: null,
};

type Reader = (file: string) => Promise<string | null>;

/** The settings of the configuration committed at `sha` (`configPath`: the file named with `--config`). */
export function settingsAtCommit(
  git: Pick<GitRepo, 'filesAt'>,
  root: string,
  sha: string,
  configPath?: string,
): Promise<SideSettings> {
  return settingsFrom(root, configPath, async (file) => {
    const found = (await git.filesAt(root, sha, file)).find((f) => f.file === file);
    return found?.content ?? null;
  });
}

/** The settings of the configuration in a checked-out tree (the App's checkout of the base). */
export function settingsInDir(dir: string, configPath?: string): Promise<SideSettings> {
  return settingsFrom(dir, configPath, (file) =>
    readFile(path.join(dir, file), 'utf8').catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT' || e.code === 'ENOTDIR') return null;
      throw e;
    }),
  );
}

/** The base's configuration as read: null (defaults) when it has none, or none that can be used (`problem`). */
interface BaseConfig {
  config: ConsortConfig | null;
  source: string | null;
  problem?: string;
  /** The file is outside the repository: the repository has no say in it. */
  outside?: true;
}

async function configFrom(root: string, configPath: string | undefined, read: Reader): Promise<BaseConfig> {
  if (configPath !== undefined) {
    const relative = path.relative(root, path.resolve(root, configPath));
    if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative))
      return {
        config: null,
        source: null,
        problem: `${configPath} is outside the repository, so the base has no copy of it`,
        outside: true,
      };
    const file = relative.split(path.sep).join('/');
    const text = await read(file);
    return text === null ? { config: null, source: null } : parse(text, file);
  }
  const found: { file: string; text: string }[] = [];
  for (const file of CONFIG_FILES) {
    const text = await read(file);
    if (text !== null) found.push({ file, text });
  }
  if (found.length > 1)
    return {
      config: null,
      source: null,
      problem: `the base has ${found.length} configuration files (${found.map((f) => f.file).join(', ')})`,
    };
  return found[0] ? parse(found[0].text, found[0].file) : { config: null, source: null };
}

function parse(text: string, file: string): BaseConfig {
  const checked = checkConfigText(text, file);
  if (!checked.ok)
    return {
      config: null,
      source: file,
      problem: `the base's ${file} is invalid (${checked.problems.map(formatProblem).join('; ')})`,
    };
  return { config: checked.config, source: file };
}

async function settingsFrom(root: string, configPath: string | undefined, read: Reader): Promise<SideSettings> {
  const { config, source, problem, outside } = await configFrom(root, configPath, read);
  return {
    migrationsRole: config?.check.migrationsRole ?? DEFAULT_SIDE_SETTINGS.migrationsRole,
    ...(outside
      ? {}
      : {
          verdict: verdictSettings(config ?? defaultConfig()),
          migrationsTimeout: (config ?? defaultConfig()).migrations.timeout,
          // No valid file: where the base keeps its migrations is not known (a repository adopting
          // Consort in this change), so the change's folder is read on both sides.
          ...(config ? { migrationsDir: config.migrations.dir } : {}),
        }),
    source,
    ...(problem !== undefined ? { problem } : {}),
  };
}

/**
 * Who may approve a pull request's gates and whether proxy mode approves them (`gates.mode`,
 * `gates.approvers`, `gates.selfApproval`): the TDD lane on a pull request reads them from the
 * base branch's commit, never from the branch under review, so a pull request cannot approve its
 * own gates by changing the configuration it carries. A base without a valid file gets the
 * defaults: a person approves, anyone with write access but the author.
 */
export interface TrustedGates {
  mode: ConsortConfig['gates']['mode'];
  approvers: string[];
  selfApproval: boolean;
  /** The configuration file they were read from; null: none (defaults). */
  source: string | null;
  problem?: string;
}

export async function gatesAtCommit(
  git: Pick<GitRepo, 'filesAt'>,
  root: string,
  sha: string,
  configPath?: string,
): Promise<TrustedGates> {
  const { config, source, problem } = await configFrom(root, configPath, async (file) => {
    const found = (await git.filesAt(root, sha, file)).find((f) => f.file === file);
    return found?.content ?? null;
  });
  const gates = config?.gates ?? defaultConfig().gates;
  return {
    mode: gates.mode,
    approvers: [...gates.approvers],
    selfApproval: gates.selfApproval,
    source,
    ...(problem !== undefined ? { problem } : {}),
  };
}
