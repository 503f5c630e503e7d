/**
 * How the project's own scripts run node-pg-migrate on the check's migrations folder, next to how
 * the check applies them: the settings that decide where a migration's objects go and where its
 * record is kept (`--schema`, `--migrations-table`, …), which files are migrations and whether order
 * is checked. A deploy that sets one the configuration does not (or sets it otherwise) is applied
 * one way in production and another on the check's branches; the plan warns and names the key to
 * set. The scripts and configuration files are the repository's: read as data (scripted-dirs.ts),
 * never run.
 */
import path from 'node:path';
import { ConsortConfigSchema, type ConsortConfig } from '../config/schema.js';
import { readsSections, scriptedCommands, type ScriptedCommand } from './scripted-dirs.js';
import { migrationsPackage } from './project-packages.js';

type Migrations = ConsortConfig['migrations'];
type Value = string | boolean | string[];

/** A node-pg-migrate setting, by its long flag (also its key in a configuration file). */
interface Spec {
  arg: string;
  alias?: string;
  type: 'string' | 'boolean' | 'list';
  /** The configuration key that matches it; null: the check has none and applies without it. */
  key: Exclude<keyof Migrations, 'dir' | 'timeout'> | null;
  /** node-pg-migrate's own default. */
  fallback: Value;
}

const SPECS: readonly Spec[] = [
  { arg: 'migrations-table', alias: 't', type: 'string', key: 'table', fallback: 'pgmigrations' },
  { arg: 'schema', alias: 's', type: 'list', key: 'schema', fallback: ['public'] },
  // Its default follows the schema (deployValue, checkValue): this fallback is never compared.
  { arg: 'migrations-schema', type: 'string', key: 'migrationsSchema', fallback: '' },
  { arg: 'create-schema', type: 'boolean', key: 'createSchema', fallback: false },
  { arg: 'create-migrations-schema', type: 'boolean', key: 'createMigrationsSchema', fallback: false },
  { arg: 'check-order', type: 'boolean', key: 'checkOrder', fallback: true },
  { arg: 'ignore-pattern', type: 'string', key: 'ignorePattern', fallback: '\\..*' },
  { arg: 'decamelize', type: 'boolean', key: 'decamelize', fallback: false },
  { arg: 'use-glob', type: 'boolean', key: null, fallback: false },
];

export interface DeploySetting {
  /** Where the deploy's value is set: the manifest holding the script, or the configuration file. */
  file: string;
  /** The manifest and script that run node-pg-migrate. */
  manifest: string;
  script: string;
  /** The shell script file the script runs node-pg-migrate in (`utils/migrate.sh`); none: the script itself. */
  via?: string;
  /** The configuration key (`migrations.table`), or node-pg-migrate's flag when the check has none (`--use-glob`). */
  setting: string;
  /** The deploy's value, as YAML would write it. */
  deploy: string;
  /** The check's value, as YAML would write it; null: the check has no such setting. */
  configured: string | null;
  /** How the deploy sets it: the flag as the script spells it, or the file's key (`migrations-table` in config/default.json, section db). */
  how: string;
}

const camel = (arg: string): string => arg.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
const isBoolWord = (w: string | undefined): w is 'true' | 'false' => w === 'true' || w === 'false';

/** The value the command's flags give a setting (the last one wins; a list gathers them), and how it was spelled. */
function fromFlags(args: readonly string[], spec: Spec): { value: Value; how: string } | undefined {
  const names = new Set([`--${spec.arg}`, `--${camel(spec.arg)}`, ...(spec.alias ? [`-${spec.alias}`] : [])]);
  const negated = new Set([`--no-${spec.arg}`, `--no-${camel(spec.arg)}`]);
  let value: Value | undefined;
  const spelled: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const word = args[i]!;
    if (spec.type === 'boolean' && negated.has(word)) {
      value = false;
      spelled.push(word);
      continue;
    }
    const eq = /^(-{1,2}[\w-]+)=(.*)$/.exec(word);
    const name = eq ? eq[1]! : word;
    if (!names.has(name)) continue;
    let given = eq ? eq[2] : undefined;
    const next = args[i + 1];
    if (
      given === undefined &&
      (spec.type === 'boolean' ? isBoolWord(next) : next !== undefined && !next.startsWith('-'))
    )
      given = args[++i];
    if (spec.type === 'boolean') {
      value = given === undefined ? true : given !== 'false';
      spelled.push(eq || given === undefined ? word : `${word} ${given}`);
    } else if (given !== undefined) {
      // yargs's arrays are greedy: `-s app public` is both, up to the next flag.
      const more: string[] = [];
      if (spec.type === 'list') while (i + 1 < args.length && !args[i + 1]!.startsWith('-')) more.push(args[++i]!);
      value = spec.type === 'list' ? [...(Array.isArray(value) ? value : []), given, ...more] : given;
      spelled.push([eq ? word : `${name} ${given}`, ...more].join(' '));
    }
  }
  return value === undefined ? undefined : { value, how: spelled.join(' ') };
}

/** The value a configuration file gives a setting, when node-pg-migrate would take it (its own type checks). */
function fromFile(data: Record<string, unknown>, spec: Spec): Value | undefined {
  if (!(spec.arg in data)) return undefined;
  const v = data[spec.arg];
  if (spec.type === 'boolean') return typeof v === 'boolean' ? v : undefined;
  if (spec.type === 'list') {
    if (typeof v === 'string' && v.length > 0) return [v];
    return Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : undefined;
  }
  return typeof v === 'string' ? v : undefined;
}

/** What one command sets, explicitly, by flag or configuration file (node-pg-migrate's precedence). */
function commandSettings(
  c: ScriptedCommand,
  specs: readonly Spec[] = SPECS,
): Map<string, { value: Value; file: string; how: string }> {
  const out = new Map<string, { value: Value; file: string; how: string }>();
  for (const spec of specs) {
    const flag = fromFlags(c.args, spec);
    if (flag) out.set(spec.arg, { value: flag.value, file: c.via ?? c.manifest, how: flag.how });
    for (const source of c.sources) {
      const value = fromFile(source.data, spec);
      if (value !== undefined)
        out.set(spec.arg, {
          value,
          file: source.file,
          how: `${spec.arg}: ${yaml(value)} from ${source.file}${source.section ? ` (section ${source.section})` : ''}`,
        });
    }
  }
  return out;
}

/** A value as the configuration file (YAML) would write it. */
function yaml(value: Value): string {
  if (Array.isArray(value)) return value.length === 1 ? yaml(value[0]!) : `[${value.map(yaml).join(', ')}]`;
  if (typeof value === 'boolean') return String(value);
  return /^[A-Za-z_][\w]*$/.test(value) && !/^(true|false|null|yes|no|on|off)$/i.test(value)
    ? value
    : `'${value.replace(/'/g, "''")}'`;
}

const same = (a: Value, b: Value): boolean => yaml(a) === yaml(b);

/** The check's value for a setting; for migrationsSchema, node-pg-migrate's default (the first schema). */
function checkValue(m: Migrations, spec: Spec): Value {
  switch (spec.key) {
    case 'schema':
      return m.schema ?? ['public'];
    case 'migrationsSchema':
      return m.migrationsSchema ?? m.schema?.[0] ?? 'public';
    case null:
      return spec.fallback;
    default:
      return m[spec.key];
  }
}

/** A command's whole value for a setting: what it sets, else node-pg-migrate's default. */
function deployValue(set: Map<string, { value: Value }>, spec: Spec): Value {
  if (spec.arg === 'migrations-schema') {
    const schema = set.get('schema')?.value;
    return set.get(spec.arg)?.value ?? (Array.isArray(schema) ? schema[0]! : 'public');
  }
  return set.get(spec.arg)?.value ?? spec.fallback;
}

/**
 * The project's node-pg-migrate commands, its scripts read as the node-pg-migrate that applies
 * reads a --config-file, with those of the package that owns `dir` even when it is no workspace.
 */
async function ownCommands(root: string, dir: string, engineVersion: string | undefined): Promise<ScriptedCommand[]> {
  const owner = await migrationsPackage(root, dir);
  return scriptedCommands(root, { sections: readsSections(engineVersion), owner: owner.dir });
}

const normal = (dir: string): string => path.posix.normalize(dir.replace(/\\/g, '/')).replace(/\/$/, '');

/**
 * The commands of the project's scripts that apply `dir` (relative to the root): those that run
 * node-pg-migrate on that folder, `create` commands left out (they make files).
 */
export async function folderCommands(
  root: string,
  dir: string,
  engineVersion: string | undefined,
): Promise<ScriptedCommand[]> {
  const want = normal(dir);
  return (await ownCommands(root, dir, engineVersion)).filter(
    (c) => c.dir !== undefined && normal(c.dir) === want && !c.args.includes('create'),
  );
}

/**
 * The settings the project's scripts run node-pg-migrate with on `migrations.dir` that the check
 * does not apply with. Only where every such command agrees (a `migrate:test` with its own table
 * next to `migrate` says nothing about the deploy); `create` commands make files and are left out.
 * A migrations schema that differs only because the schema does is said once, with the schema.
 */

export async function deploySettings(
  root: string,
  migrations: Migrations,
  engineVersion?: string,
): Promise<DeploySetting[]> {
  const commands = await folderCommands(root, migrations.dir, engineVersion);
  if (commands.length === 0) return [];
  const settings = commands.map((c) => ({ c, set: commandSettings(c) }));
  // A configuration that cannot be read here may set the key: the deploy's value is unknown.
  const unknown = (arg: string): boolean => commands.some((c) => c.unknown === 'all' || c.unknown.includes(arg));
  const out: DeploySetting[] = [];
  for (const spec of SPECS) {
    if (unknown(spec.arg) || (spec.arg === 'migrations-schema' && unknown('schema'))) continue;
    const values = settings.map(({ set }) => deployValue(set, spec));
    if (!values.every((v) => same(v, values[0]!))) continue;
    const deploy = values[0]!;
    const configured = checkValue(migrations, spec);
    if (same(deploy, configured) && spec.key !== null) continue;
    if (spec.key === null && same(deploy, spec.fallback)) continue;
    // The check creating a schema the deploy does not (CREATE SCHEMA IF NOT EXISTS) changes nothing where
    // the schema exists, and lets a baseline built from nothing run: not a setting to take back.
    if ((spec.key === 'createSchema' || spec.key === 'createMigrationsSchema') && deploy === false) continue;
    // A value the configuration cannot hold (a table named `meta.versions`, which node-pg-migrate
    // keeps in the schema as one name): no key to advise setting.
    if (spec.key !== null && !ConsortConfigSchema.safeParse({ migrations: { [spec.key]: deploy } }).success) continue;
    if (spec.key === 'migrationsSchema' && migrations.migrationsSchema === undefined) {
      const explicit = settings.some(({ set }) => set.has(spec.arg));
      if (!explicit) continue; // follows the schema, said there
    }
    const first = settings.find(({ set }) => set.has(spec.arg)) ?? settings[0]!;
    const origin = first.set.get(spec.arg);
    out.push({
      file: origin?.file ?? first.c.manifest,
      manifest: first.c.manifest,
      script: first.c.script,
      ...(first.c.via === undefined ? {} : { via: first.c.via }),
      setting: spec.key === null ? `--${spec.arg}` : `migrations.${spec.key}`,
      deploy: yaml(deploy),
      configured: spec.key === null ? null : yaml(configured),
      how: origin?.how ?? `no --${spec.arg} (its default: ${yaml(deploy)})`,
    });
  }
  return out;
}

/** node-pg-migrate's CLI runs every pending migration in one transaction unless told `--no-single-transaction`. */
const SINGLE_TRANSACTION: Spec = { arg: 'single-transaction', type: 'boolean', key: null, fallback: true };

/** How the project's scripts apply `migrations.dir`: in one transaction, and the script that says so. */
export interface DeployTransaction {
  single: boolean;
  manifest: string;
  script: string;
  /** The shell script file the script runs node-pg-migrate in; none: the script itself. */
  via?: string;
}

/**
 * Whether the project's scripts apply `migrations.dir` in one transaction, as node-pg-migrate's CLI
 * does by default (`--single-transaction`; a configuration file's `single-transaction`): then a
 * migration that uses what an earlier one of the same deploy made uncommitted (an enum value added
 * by `ALTER TYPE … ADD VALUE`, which PostgreSQL refuses to use before it commits) fails the deploy,
 * and the check must apply them that way too. Undefined when no script runs node-pg-migrate on the
 * folder (a deploy calling its runner(), whose default is a transaction per migration), when the
 * scripts disagree, or when a configuration that cannot be read may set it.
 */
export async function deployTransaction(
  root: string,
  migrations: Migrations,
  engineVersion?: string,
): Promise<DeployTransaction | undefined> {
  const commands = await folderCommands(root, migrations.dir, engineVersion);
  if (commands.length === 0) return undefined;
  if (commands.some((c) => c.unknown === 'all' || c.unknown.includes(SINGLE_TRANSACTION.arg))) return undefined;
  const values = commands.map((c) => deployValue(commandSettings(c, [SINGLE_TRANSACTION]), SINGLE_TRANSACTION));
  if (!values.every((v) => v === values[0])) return undefined;
  const [first] = commands;
  return {
    single: values[0] === true,
    manifest: first!.manifest,
    script: first!.script,
    ...(first!.via === undefined ? {} : { via: first!.via }),
  };
}
