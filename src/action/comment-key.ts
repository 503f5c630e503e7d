/**
 * Which sticky comment a check job writes. Two jobs that check one pull request — a monorepo's
 * projects, each with its own configuration file, or a matrix over one — would otherwise find
 * and overwrite each other's comment on every push. The `comment-key` input names it; without
 * one, a `config` input other than the default files does, so a monorepo's jobs get a comment
 * each with no setting, and a repository with one job keeps the one unkeyed comment it had.
 */
import path from 'node:path';
import { CONFIG_FILES } from '../config/files.js';
import type { ActionInputs } from './inputs.js';

export function commentKey(inputs: Pick<ActionInputs, 'commentKey' | 'config'>): string | undefined {
  if (inputs.commentKey !== undefined) return inputs.commentKey;
  if (inputs.config === undefined) return undefined;
  const file = path.posix.normalize(inputs.config.replace(/\\/g, '/')).replace(/^(\.\/)+/, '');
  return (CONFIG_FILES as readonly string[]).includes(file) ? undefined : file;
}
