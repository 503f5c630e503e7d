/**
 * A repository at a commit, on disk: its tarball downloaded through the API (GitHub serves the
 * exact tree of the SHA, without history) and unpacked with the system `tar` into a temporary
 * directory that is removed afterwards. Both sides are whole trees: base's migrations may import
 * base's code, and its seed is base's.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ConsortConfig } from '../src/config/schema.js';
import { childEnv } from '../src/core/child-env.js';
import { ConsortError } from '../src/core/errors.js';
import { EVERY_FILE, readMigrationSet } from '../src/migrations/files.js';
import type { MigrationEntry } from '../src/migrations/files.js';
import type { GitHubPort, RepoRef } from '../src/ports/github.js';
import { localProcessRunner } from '../src/process/runner.js';

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
    const filter =
      members.length > 0 ? ['--wildcards', '--no-wildcards-match-slash', ...members.map((m) => `*/${m}`)] : [];
    const r = await localProcessRunner.run({
      command: ['tar', '-xzf', file, '-C', into, '--strip-components=1', '--no-same-owner', ...filter],
      cwd: into,
      env: childEnv(),
      maxOutputBytes: 16 * 1024 * 1024,
    });
    if (r.exitCode === 0) return;
    // A member pattern that matches nothing: the directory does not exist at that commit.
    if (members.length > 0 && /Not found in archive/.test(r.output)) return;
    throw new ConsortError(
      'internal',
      `Could not unpack the repository tarball: ${r.output.trim() || (r.notFound ? 'tar is not installed' : `tar exited with ${r.exitCode ?? r.signal}`)}`,
    );
  } finally {
    await rm(file, { force: true });
  }
}

function checkSize(tarball: Buffer, options: WorkspaceOptions, what: string): void {
  const max = options.maxBytes ?? 512 * 1024 * 1024;
  if (tarball.length > max) {
    throw new ConsortError(
      'invalid-input',
      `The repository tarball at ${what} is ${Math.round(tarball.length / 1048576)} MiB, over the App's limit.`,
      {
        hint: 'Raise CONSORT_APP_MAX_TARBALL_MB, or run Consort as a GitHub Action on this repository instead.',
      },
    );
  }
}

/** The whole repository at `sha`. */
/** The App's settings for checkouts (where, and how large a tarball may be). */
export function workspaceOptions(settings: { maxTarballBytes: number; workspaceRoot?: string }): WorkspaceOptions {
  return { maxBytes: settings.maxTarballBytes, ...(settings.workspaceRoot ? { root: settings.workspaceRoot } : {}) };
}

export async function checkoutCommit(
  gh: GitHubPort,
  repo: RepoRef,
  sha: string,
  options: WorkspaceOptions = {},
): Promise<Workspace> {
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

/**
 * A checked-out commit as one side of a check: its migrations (none when the directory does not
 * exist there), its seed file (null when it has none) and the tree itself, so migrations that
 * import project code run where their imports resolve and the baseline is seeded as base has it.
 */
export async function treeSide(
  dir: string,
  config: Pick<ConsortConfig, 'migrations' | 'database'>,
): Promise<{ migrations: MigrationEntry[]; seed?: string | null; tree: { kind: 'dir'; dir: string } }> {
  // Every file: which of them are migrations is the base's migrations.ignorePattern's to say (the
  // check's migrationSets), never the pull request's own configuration.
  const files = await readMigrationSet(path.join(dir, config.migrations.dir), {
    relativeTo: dir,
    missingOk: true,
    ignorePattern: EVERY_FILE,
  });
  const migrations = files.map((f) => ({ file: f.file, content: f.content }));
  const seed = config.database.seed;
  if (seed?.kind !== 'file') return { migrations, tree: { kind: 'dir', dir } };
  const text = await readFile(path.join(dir, seed.path), 'utf8').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return null;
    throw e;
  });
  return { migrations, seed: text, tree: { kind: 'dir', dir } };
}
