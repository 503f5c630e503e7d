/**
 * `npm install` of exact package versions into a private tools directory, serialized across
 * processes by a lock on that directory (matrix jobs on one self-hosted runner share it).
 * Install scripts are not run: the packages Consort installs this way only need what their
 * `afterInstall` hook does, and no third-party script runs with the job's credentials.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readSync, realpathSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import lockfile from 'proper-lockfile';
import { ConsortError } from '../core/errors.js';
import { hostProgram } from '../process/host-programs.js';

const INSTALL_TIMEOUT_MS = 10 * 60_000;

export const NPM_INSTALL_FLAGS = [
  '--no-save',
  '--no-package-lock',
  '--no-audit',
  '--no-fund',
  '--ignore-scripts',
  '--no-progress',
  '--loglevel=error',
] as const;

export async function withToolsLock<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  await mkdir(dir, { recursive: true });
  // npm may take minutes on a slow network; the lock is refreshed while held, so a waiting
  // process only breaks it when its holder died.
  const release = await lockfile.lock(dir, {
    retries: { retries: 1200, minTimeout: 250, maxTimeout: 1000 },
    stale: 60_000,
  });
  try {
    return await fn();
  } finally {
    await release();
  }
}

/**
 * npm as PATH named it when Consort started (host-programs.ts). npm is a Node script
 * (`#!/usr/bin/env node`): started itself, it would run on the first `node` of the child's PATH,
 * found at that moment, so a `node` a suite planted in `~/.local/bin` since would be what runs. So
 * a Node script is run by this Node, the one running Consort.
 */
function npmCommand(env: NodeJS.ProcessEnv, args: string[]): [string, string[]] {
  const npm = hostProgram('npm', env.PATH ?? '');
  try {
    const script = realpathSync(npm);
    const fd = openSync(script, 'r');
    const bytes = Buffer.alloc(256);
    const length = (() => {
      try {
        return readSync(fd, bytes, 0, bytes.length, 0);
      } finally {
        closeSync(fd);
      }
    })();
    const head = bytes.toString('utf8', 0, length).split('\n', 1)[0]!;
    if (/^#!.*\bnode\b/.test(head)) return [process.execPath, [script, ...args]];
  } catch {
    // Not found, or not readable: started as it is (and fails as it would).
  }
  return [npm, args];
}

export async function npmInstall(dir: string, packages: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const args = ['install', ...NPM_INSTALL_FLAGS, '--prefix', dir, ...packages];
  const windows = process.platform === 'win32';
  // Not the ProcessRunner: on Windows npm is npm.cmd, which needs a shell, and the runner is POSIX-only
  // (/bin/sh, process groups); this runs before any project code, with the caller's environment.
  const result = await new Promise<{ code: number | null; output: string; error?: Error }>((resolve) => {
    const [program, argv] = windows ? ['npm.cmd', args] : npmCommand(env, args);
    const child = spawn(program, argv, {
      cwd: dir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      shell: windows,
    });
    let output = '';
    const append = (d: Buffer) => {
      output = (output + d.toString()).slice(-4000);
    };
    child.stdout.on('data', append);
    child.stderr.on('data', append);
    const timer = setTimeout(() => child.kill('SIGKILL'), INSTALL_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, output, error });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
  if (result.code === 0) return;
  const why = result.error
    ? `npm could not be started (${result.error.message})`
    : `npm install exited with ${result.code ?? 'a signal'}`;
  throw new ConsortError(
    'tools-unavailable',
    `${why} while installing ${packages.join(', ')}: ${result.output.trim().split('\n').slice(-6).join(' | ')}`,
    {
      hint: `Check the runner's access to the npm registry (NPM_CONFIG_REGISTRY for a mirror), or pre-install them: npm install --no-save --prefix ${dir} ${packages.join(' ')}.`,
      ...(result.error ? { cause: result.error } : {}),
    },
  );
}
