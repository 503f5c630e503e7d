/**
 * Settings a pull request must not be able to grant itself — today `check.migrationsRole`, which
 * lets the PR's migrations run as the admin — are read from the base side's own configuration
 * file (the trusted side: what is already merged), never from the head's. The base is a commit
 * (`consort check`, the Action: read with git, without a checkout) or a checked-out tree (the App).
 * A base without a valid file gets the defaults: the confined role.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CONFIG_FILES, checkConfigText, formatProblem } from '../../config/load.js';
import type { MigrationRole } from '../../config/schema.js';
import type { GitRepo } from '../../ports/git.js';

export interface SideSettings {
  migrationsRole: MigrationRole;
  /** The configuration file they were read from, relative to the repository root; null: none. */
  source: string | null;
  /** Why the file's settings were not used (it is invalid, several files, a path outside the repository). */
  problem?: string;
}

/** No configuration on the side (an empty base, a side that was not read): the confined role. */
export const DEFAULT_SIDE_SETTINGS: SideSettings = { migrationsRole: 'branch', source: null };

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

async function settingsFrom(root: string, configPath: string | undefined, read: Reader): Promise<SideSettings> {
  if (configPath !== undefined) {
    const relative = path.relative(root, path.resolve(root, configPath));
    if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative))
      return {
        ...DEFAULT_SIDE_SETTINGS,
        problem: `${configPath} is outside the repository, so the base has no copy of it`,
      };
    const file = relative.split(path.sep).join('/');
    const text = await read(file);
    return text === null ? DEFAULT_SIDE_SETTINGS : parse(text, file);
  }
  const found: { file: string; text: string }[] = [];
  for (const file of CONFIG_FILES) {
    const text = await read(file);
    if (text !== null) found.push({ file, text });
  }
  if (found.length > 1)
    return {
      ...DEFAULT_SIDE_SETTINGS,
      problem: `the base has ${found.length} configuration files (${found.map((f) => f.file).join(', ')})`,
    };
  return found[0] ? parse(found[0].text, found[0].file) : DEFAULT_SIDE_SETTINGS;
}

function parse(text: string, file: string): SideSettings {
  const checked = checkConfigText(text, file);
  if (!checked.ok)
    return {
      ...DEFAULT_SIDE_SETTINGS,
      source: file,
      problem: `the base's ${file} is invalid (${checked.problems.map(formatProblem).join('; ')})`,
    };
  return { migrationsRole: checked.config.check.migrationsRole, source: file };
}
