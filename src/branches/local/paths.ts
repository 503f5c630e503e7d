/**
 * Where the embedded server of a project lives. One server per project, keyed by the project
 * root's real path, outside the repository (nothing of it can be committed by accident).
 *
 *   non-root:  $XDG_CACHE_HOME/consort/<name>-<hash>  (default ~/.cache; macOS ~/Library/Caches)
 *   root:      /var/cache/consort/<name>-<hash>       (/root is not traversable by the postgres user)
 *   override:  CONSORT_DATA_DIR=<dir>                 (used exactly as given)
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import os from 'node:os';
import { gitEnv, SAFE_GIT_ARGS } from '../../git/safe.js';
import { hostProgram } from '../../process/host-programs.js';
import path from 'node:path';

export function projectRoot(cwd: string = process.cwd()): string {
  try {
    // Synchronous (a path is needed before anything async runs), so not src/git/exec.ts; the same flags and environment.
    return execFileSync(hostProgram('git'), [...SAFE_GIT_ARGS, 'rev-parse', '--show-toplevel'], {
      cwd,
      env: gitEnv(),
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .toString()
      .trim();
  } catch {
    return cwd;
  }
}

export function projectKey(root: string): string {
  const real = realpathSync(root);
  const base =
    path
      .basename(real)
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 32) || 'project';
  return `${base}-${createHash('sha256').update(real).digest('hex').slice(0, 10)}`;
}

export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (process.getuid?.() === 0) return '/var/cache/consort';
  if (env.XDG_CACHE_HOME) return path.join(env.XDG_CACHE_HOME, 'consort');
  if (process.platform === 'darwin') return path.join(os.homedir(), 'Library', 'Caches', 'consort');
  return path.join(os.homedir(), '.cache', 'consort');
}

export function serverDir(root: string, env: NodeJS.ProcessEnv = process.env): string {
  return env.CONSORT_DATA_DIR ? path.resolve(env.CONSORT_DATA_DIR) : path.join(defaultCacheDir(env), projectKey(root));
}
