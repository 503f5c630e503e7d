/**
 * Pairing's own state, kept inside the repository's git directory (never committed, shared by
 * worktrees): the last URL each git branch was paired with — what lets the hook update `.env` in a
 * few milliseconds before the background job checks the branch — and the hook log.
 */
import { appendFile, mkdir, readFile, rename, rm, stat, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { formatEnvValue } from './env-file.js';

export interface CachedPairing {
  name: string;
  url: string;
  pairedAt: string;
}
export interface PairCache {
  envFile: string;
  envKey: string;
  writeEnv: boolean;
  branches: Record<string, CachedPairing>;
}

const isString = (v: unknown): v is string => typeof v === 'string';

/**
 * Checked by hand rather than with zod: this runs in the hook's fast path, where importing zod
 * would double Node's start-up cost (~130 ms of CPU measured here). A file that does not match is
 * ignored (the background job rewrites it).
 */
export function parseCache(value: unknown): PairCache | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (!isString(v.envFile) || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(String(v.envKey)) || typeof v.writeEnv !== 'boolean')
    return undefined;
  if (typeof v.branches !== 'object' || v.branches === null) return undefined;
  if (path.isAbsolute(v.envFile) || v.envFile.split(/[\\/]/).includes('..')) return undefined;
  const branches: Record<string, CachedPairing> = {};
  for (const [k, b] of Object.entries(v.branches as Record<string, unknown>)) {
    const e = b as Record<string, unknown> | null;
    if (e && isString(e.name) && isString(e.url) && /^postgres(ql)?:\/\//.test(e.url) && isString(e.pairedAt))
      branches[k] = { name: e.name, url: e.url, pairedAt: e.pairedAt };
  }
  return { envFile: v.envFile, envKey: String(v.envKey), writeEnv: v.writeEnv, branches };
}

export const stateDir = (gitDir: string): string => path.join(gitDir, 'consort');
export const cacheFile = (gitDir: string): string => path.join(stateDir(gitDir), 'pairs.json');
export const logFile = (gitDir: string): string => path.join(stateDir(gitDir), 'hooks.log');

const MAX_LOG_BYTES = 256 * 1024;

export async function readCache(gitDir: string): Promise<PairCache | undefined> {
  try {
    return parseCache(JSON.parse(await readFile(cacheFile(gitDir), 'utf8')));
  } catch {
    return undefined;
  }
}

export async function recordPairing(
  gitDir: string,
  settings: Pick<PairCache, 'envFile' | 'envKey' | 'writeEnv'>,
  gitBranch: string,
  entry: { name: string; url: string },
): Promise<void> {
  const current = await readCache(gitDir);
  const next: PairCache = {
    ...settings,
    branches: { ...(current?.branches ?? {}), [gitBranch]: { ...entry, pairedAt: new Date().toISOString() } },
  };
  await mkdir(stateDir(gitDir), { recursive: true });
  const temp = `${cacheFile(gitDir)}.${process.pid}.tmp`;
  await writeFile(temp, JSON.stringify(next, null, 2), { mode: 0o600 });
  await rename(temp, cacheFile(gitDir));
  // The hook's sh fast path reads this: the dotenv file, the key and the exact line to put there.
  const line = lineFile(gitDir, gitBranch);
  if (!settings.writeEnv) return rm(line, { force: true });
  await mkdir(path.dirname(line), { recursive: true });
  await writeFile(
    `${line}.${process.pid}.tmp`,
    `${settings.envFile}\n${settings.envKey}\n${settings.envKey}=${formatEnvValue(entry.url)}\n`,
    { mode: 0o600 },
  );
  await rename(`${line}.${process.pid}.tmp`, line);
}

/** Where the fast path finds a git branch's dotenv line (git branch names are valid relative paths). */
export const lineFile = (gitDir: string, gitBranch: string): string =>
  path.join(stateDir(gitDir), 'pairs', `${gitBranch}.env`);

/** Append to the hook log; a log past 256 KiB is emptied first (it is a diagnostic, not a record). */
export async function appendLog(gitDir: string, text: string): Promise<void> {
  await mkdir(stateDir(gitDir), { recursive: true });
  const size = await stat(logFile(gitDir)).then(
    (s) => s.size,
    () => 0,
  );
  if (size > MAX_LOG_BYTES) await truncate(logFile(gitDir), 0);
  await appendFile(logFile(gitDir), text.endsWith('\n') ? text : `${text}\n`);
}

export async function readLogTail(gitDir: string, lines: number): Promise<string[]> {
  const text = await readFile(logFile(gitDir), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .slice(-lines);
}
