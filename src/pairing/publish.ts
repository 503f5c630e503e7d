/**
 * Where a pairing's URL goes: the configured dotenv file (with a warning when git would commit it)
 * and the pairing cache the hook reads for its fast path.
 */
import path from 'node:path';
import type { ConsortConfig } from '../config/schema.js';
import { writeEnvValue, type EnvWrite } from './env-file.js';
import { commonGitDir, currentGitBranch, isIgnored, isTracked } from './git.js';
import { recordPairing } from './state.js';

export interface EnvReport {
  /** Relative to the repository root, as configured. */
  file: string;
  key: string;
  /** `skipped`: pairing.writeEnv is false, or HEAD moved on while the branch was prepared. */
  status: EnvWrite | 'skipped';
  ignored: boolean;
  warning: string | null;
}

export async function envWarning(root: string, file: string): Promise<{ ignored: boolean; warning: string | null }> {
  const tracked = await isTracked(root, file);
  if (tracked)
    return {
      ignored: false,
      warning: `${file} is tracked by git: the database URL would be committed. Run \`git rm --cached ${file}\` and add it to .gitignore.`,
    };
  const ignored = await isIgnored(root, file);
  return {
    ignored,
    warning: ignored
      ? null
      : `${file} is not git-ignored: the database URL could be committed. Add "${file}" to .gitignore.`,
  };
}

export interface PublishRequest {
  root: string;
  config: ConsortConfig;
  gitBranch: string;
  name: string;
  url: string;
  /** Write the file only if `gitBranch` is still checked out (the hook's background job). */
  onlyIfHead: boolean;
}

export async function publishPairing(request: PublishRequest): Promise<EnvReport> {
  const { root, config } = request;
  const settings = {
    envFile: config.pairing.envFile,
    envKey: config.pairing.envKey,
    writeEnv: config.pairing.writeEnv,
  };
  const gitDir = await commonGitDir(root).catch(() => undefined);
  if (gitDir !== undefined)
    await recordPairing(gitDir, settings, request.gitBranch, { name: request.name, url: request.url });
  const headMoved = request.onlyIfHead && (await currentGitBranch(root)) !== request.gitBranch;
  const status =
    !config.pairing.writeEnv || headMoved
      ? 'skipped'
      : await writeEnvValue(path.join(root, settings.envFile), settings.envKey, request.url);
  const { ignored, warning } =
    gitDir === undefined ? { ignored: false, warning: null } : await envWarning(root, settings.envFile);
  return {
    file: settings.envFile,
    key: settings.envKey,
    status,
    ignored,
    warning: status === 'skipped' ? null : warning,
  };
}
