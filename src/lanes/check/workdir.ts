/**
 * Migration sets written to a scratch directory for node-pg-migrate, which loads files from disk.
 * Inside the workspace's node_modules/.cache when there is one, so JS migrations that import
 * packages resolve them exactly as in the project; the system temp directory otherwise.
 */
import { randomBytes } from 'node:crypto';
import { access, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { MigrationFile } from '../../migrations/files.js';

export interface Workdir {
  root: string;
  /** Write a migration set; returns the directory to hand to the runner and the base for reported paths. */
  write(side: string, migrationsDir: string, files: readonly MigrationFile[]): Promise<{ dir: string; relativeTo: string }>;
  dispose(): Promise<void>;
}

export async function createWorkdir(workspace: string): Promise<Workdir> {
  const modules = path.join(workspace, 'node_modules');
  const base = await access(modules).then(() => path.join(modules, '.cache', 'consort'), () => path.join(os.tmpdir(), 'consort'));
  const root = path.join(base, `check-${randomBytes(4).toString('hex')}`);
  await mkdir(root, { recursive: true });
  return {
    root,
    async write(side, migrationsDir, files) {
      const relativeTo = path.join(root, side);
      const dir = path.join(relativeTo, migrationsDir);
      await mkdir(dir, { recursive: true });
      for (const f of files) await writeFile(path.join(dir, path.posix.basename(f.file)), f.content);
      return { dir, relativeTo };
    },
    dispose: () => rm(root, { recursive: true, force: true }),
  };
}
