/**
 * Whether the project's deploy resolves TypeScript path aliases (`compilerOptions.paths`) in its
 * migrations, read from the scripts that run node-pg-migrate on `migrations.dir` (deploy-settings.ts
 * reads them the same way): Node's resolution never reads `paths`, so a migration importing
 * `api/database/tables` loads only where the deploy registers `tsconfig-paths` before
 * node-pg-migrate (`ts-node -r tsconfig-paths/register node_modules/.bin/node-pg-migrate up`,
 * `NODE_OPTIONS='-r tsconfig-paths/register'`) or runs node-pg-migrate 9 with `--tsconfig-paths`
 * (its jiti resolves them). The check then does the same (ts-loader.ts decides with what,
 * ts-register.ts and runner.ts do it); otherwise the migration fails as it would in the deploy, and
 * path-alias.ts says why. The scripts are the repository's: read as data, never run.
 */
import path from 'node:path';
import { folderCommands } from './deploy-settings.js';
import type { ScriptedCommand } from './scripted-dirs.js';

export interface DeployPathAliases {
  /**
   * `register`: the scripts load `tsconfig-paths/register` before node-pg-migrate (Node's `-r`, in
   * NODE_OPTIONS too); `runner`: node-pg-migrate 9's `--tsconfig-paths` (its runner option).
   */
  via: 'register' | 'runner';
  /**
   * The tsconfig they name, relative to the root with `/` separators (`TS_NODE_PROJECT=…`, read by
   * tsconfig-paths; `--tsconfig-paths <path>`); undefined: the one nearest the migrations' package
   * (tree-settings.ts), which they find from where the deploy runs.
   */
  tsconfig?: string;
  /** How the scripts say it: `-r tsconfig-paths/register in package.json's script "migrate"`. */
  how: string;
}

/** What a command says: paths resolved (and how), none, or what cannot be known here. */
type Said = { via: DeployPathAliases['via']; tsconfig?: string; spelled: string } | 'none' | 'unknown';

const REGISTER = /^tsconfig-paths\/register(?:\.js)?$/;
const PRELOAD = /^(?:-r|--require|--import)$/;
const PRELOAD_EQ = /^(?:-r|--require|--import)=(.*)$/;

/** The words of a command before node-pg-migrate that register tsconfig-paths, as spelled; undefined: none. */
function registration(words: readonly string[]): string | undefined {
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const env = /^NODE_OPTIONS=(.*)$/s.exec(w);
    if (env) {
      const inner = registration(env[1]!.split(/\s+/).filter(Boolean));
      if (inner !== undefined) return `NODE_OPTIONS='${env[1]}'`;
      continue;
    }
    const eq = PRELOAD_EQ.exec(w);
    if (eq && REGISTER.test(eq[1]!)) return w;
    if (PRELOAD.test(w) && REGISTER.test(words[i + 1] ?? '')) return `${w} ${words[i + 1]}`;
  }
  return undefined;
}

/** A path a command names (relative to where it runs, `cwd` relative to the root), as a path inside the root; undefined outside it. */
function inside(cwd: string, named: string): string | undefined {
  if (path.posix.isAbsolute(named) || path.win32.isAbsolute(named)) return undefined;
  const joined = path.posix.normalize(path.posix.join(cwd, named.replace(/\\/g, '/'))).replace(/\/$/, '');
  return joined === '..' || joined.startsWith('../') ? undefined : joined;
}

/** node-pg-migrate 9's `--tsconfig-paths` value (the last one given), as its CLI parses it: '' when bare. */
function runnerFlag(args: readonly string[]): { value: string; spelled: string } | undefined {
  let found: { value: string; spelled: string } | undefined;
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const eq = /^--(?:tsconfig-paths|tsconfigPaths)=(.*)$/.exec(w);
    if (eq) found = { value: eq[1]!, spelled: w };
    else if (w === '--tsconfig-paths' || w === '--tsconfigPaths') {
      const next = args[i + 1];
      found =
        next !== undefined && !next.startsWith('-')
          ? { value: next, spelled: `${w} ${args[++i]}` }
          : { value: '', spelled: w };
    }
  }
  return found;
}

/** What one command does with path aliases (`engineMajor`: the node-pg-migrate that applies). */
export function commandPathAliases(c: ScriptedCommand, engineMajor: number | undefined): Said {
  const registered = registration(c.before);
  if (registered !== undefined) {
    const project = c.before.map((w) => /^TS_NODE_PROJECT=(.+)$/.exec(w)?.[1]).findLast((p) => p !== undefined);
    if (project === undefined) return { via: 'register', spelled: registered };
    const tsconfig = inside(c.cwd, project);
    return tsconfig === undefined
      ? 'unknown'
      : { via: 'register', tsconfig, spelled: `TS_NODE_PROJECT=${project} ${registered}` };
  }
  // node-pg-migrate 9's option: older versions do not know it (their deploy resolves no alias).
  if (engineMajor !== undefined && engineMajor < 9) return 'none';
  if (c.unknown === 'all' || c.unknown.includes('tsconfig-paths')) return 'unknown';
  let value: string | boolean | undefined;
  let spelled = '';
  const flag = runnerFlag(c.args);
  if (flag) [value, spelled] = [flag.value, flag.spelled];
  // A configuration file's key wins over the flag, as in node-pg-migrate's CLI.
  for (const source of c.sources) {
    const v = source.data['tsconfig-paths'];
    if (typeof v === 'string' || typeof v === 'boolean')
      [value, spelled] = [v, `tsconfig-paths: ${v} in ${source.file}`];
  }
  // The CLI's parsing: 'true' looks for a tsconfig, 'false' and a bare flag ('') turn it off.
  if (value === undefined || value === false || value === 'false' || value === '') return 'none';
  if (value === true || value === 'true') return { via: 'runner', spelled };
  const tsconfig = inside(c.cwd, value);
  return tsconfig === undefined ? 'unknown' : { via: 'runner', tsconfig, spelled };
}

/**
 * How the project's scripts resolve path aliases in `migrationsDir` (relative to the root), when
 * every command that applies it agrees (a `migrate:test` without the registration says the deploy
 * is not known); undefined otherwise, and when none does.
 */
export async function deployPathAliases(
  root: string,
  migrationsDir: string,
  engineVersion: string | undefined,
): Promise<DeployPathAliases | undefined> {
  const commands = await folderCommands(root, migrationsDir, engineVersion);
  const major = engineVersion === undefined ? undefined : Number(engineVersion.split('.')[0]);
  const said = commands.map((c) => commandPathAliases(c, Number.isNaN(major) ? undefined : major));
  const first = said[0];
  if (first === undefined || typeof first === 'string') return undefined;
  const key = (s: Said) => (typeof s === 'string' ? s : `${s.via}\0${s.tsconfig ?? ''}`);
  if (!said.every((s) => key(s) === key(first))) return undefined;
  const c = commands[0]!;
  return {
    via: first.via,
    ...(first.tsconfig === undefined ? {} : { tsconfig: first.tsconfig }),
    how: `${first.spelled} in ${c.via === undefined ? '' : `${c.via}, run by `}${c.manifest}'s script "${c.script}"`,
  };
}
