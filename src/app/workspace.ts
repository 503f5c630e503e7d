/**
 * A repository at a commit, on disk: its tarball downloaded through the API (GitHub serves the
 * exact tree of the SHA, without history) and unpacked with the system `tar` into a temporary
 * directory that is removed afterwards. The base side only needs its migrations, so only that
 * directory is unpacked from the base tarball.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ConsortError } from '../core/errors.js';
import { readMigrationSet } from '../migrations/files.js';
import type { MigrationEntry } from '../migrations/files.js';
import type { GitHubPort, RepoRef } from '../ports/github.js';

const exec = promisify(execFile);

export interface Workspace {
  dir: string;
  dispose(): Promise<void>;
}

export interface WorkspaceOptions {
  /** Parent of the temporary directories (default: the system temp dir). */
  root?: string;
  /** Refuse tarballs larger than this (default 512 MiB). */
  maxBytes?: number;
}

async function unpack(tarball: Buffer, into: string, members: string[] = []): Promise<void> {
  const file = `${into}.tar.gz`;
  await writeFile(file, tarball);
  try {
    // GitHub wraps the tree in one `<owner>-<repo>-<sha>/` directory. --no-same-owner: files
    // belong to the App's user whatever the archive says; GNU tar refuses `..` and absolute members.
    const filter = members.length > 0 ? ['--wildcards', '--no-wildcards-match-slash', ...members.map((m) => `*/${m}`)] : [];
    await exec('tar', ['-xzf', file, '-C', into, '--strip-components=1', '--no-same-owner', ...filter], { maxBuffer: 16 * 1024 * 1024 });
  } catch (e) {
    const stderr = (e as { stderr?: string }).stderr ?? '';
    // A member pattern that matches nothing: the directory does not exist at that commit.
    if (members.length > 0 && /Not found in archive/.test(stderr)) return;
    throw new ConsortError('internal', `Could not unpack the repository tarball: ${stderr.trim() || (e as Error).message}`, { cause: e });
  } finally {
    await rm(file, { force: true });
  }
}

function checkSize(tarball: Buffer, options: WorkspaceOptions, what: string): void {
  const max = options.maxBytes ?? 512 * 1024 * 1024;
  if (tarball.length > max) {
    throw new ConsortError('invalid-input', `The repository tarball at ${what} is ${Math.round(tarball.length / 1048576)} MiB, over the App's limit.`, {
      hint: 'Raise CONSORT_APP_MAX_TARBALL_MB, or run Consort as a GitHub Action on this repository instead.',
    });
  }
}

/** The whole repository at `sha`. */
/** The App's settings for checkouts (where, and how large a tarball may be). */
export function workspaceOptions(settings: { maxTarballBytes: number; workspaceRoot?: string }): WorkspaceOptions {
  return { maxBytes: settings.maxTarballBytes, ...(settings.workspaceRoot ? { root: settings.workspaceRoot } : {}) };
}

export async function checkoutCommit(gh: GitHubPort, repo: RepoRef, sha: string, options: WorkspaceOptions = {}): Promise<Workspace> {
  const tarball = await gh.tarball(repo, sha);
  checkSize(tarball, options, sha);
  const root = options.root ?? os.tmpdir();
  await mkdir(root, { recursive: true });
  const dir = await mkdtemp(path.join(root, 'consort-app-'));
  try {
    await unpack(tarball, dir);
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  return { dir, dispose: () => rm(dir, { recursive: true, force: true }) };
}

/** The migration files under `migrationsDir` at `sha` (none when the directory does not exist there). */
export async function migrationsAt(gh: GitHubPort, repo: RepoRef, sha: string, migrationsDir: string, options: WorkspaceOptions = {}): Promise<MigrationEntry[]> {
  const tarball = await gh.tarball(repo, sha);
  checkSize(tarball, options, sha);
  const root = options.root ?? os.tmpdir();
  await mkdir(root, { recursive: true });
  const dir = await mkdtemp(path.join(root, 'consort-app-base-'));
  try {
    const clean = migrationsDir.replace(/^\.\/+/, '').replace(/\/+$/, '');
    await unpack(tarball, dir, [clean]);
    const files = await readMigrationSet(path.join(dir, clean), { relativeTo: dir, missingOk: true });
    return files.map((f) => ({ file: f.file, content: f.content }));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
