/**
 * Where a project's Consort configuration lives: the names looked for, and the one advice should
 * name (the file the project has, else the one to create). No parsing here, so hints raised far from
 * the configuration (the migrations' folder, the TDD lane's policy) can name the file cheaply.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';

/** Looked for in this order; more than one present is an error, since they would not be merged. */
export const CONFIG_FILES = ['.github/consort.yml', '.github/consort.yaml', 'consort.config.json'] as const;

/** The file to create when a project has none. */
export const DEFAULT_CONFIG_FILE = CONFIG_FILES[0];

/** The configuration files present in `root`, in CONFIG_FILES' order. */
export async function configFilesIn(root: string): Promise<string[]> {
  const found: string[] = [];
  for (const candidate of CONFIG_FILES) {
    const info = await stat(path.join(root, candidate)).catch(() => undefined);
    if (info?.isFile()) found.push(candidate);
  }
  return found;
}

/**
 * The file a hint should tell the user to edit: the configuration `root` has (the first, if it has
 * several, which loading refuses anyway), else the default one to create.
 */
export async function configFileToEdit(root: string): Promise<string> {
  return (await configFilesIn(root).catch(() => []))[0] ?? DEFAULT_CONFIG_FILE;
}
