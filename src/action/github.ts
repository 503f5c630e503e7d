/**
 * The Action's GitHubPort: the one adapter (src/github/octokit.ts) on @actions/github's Octokit with
 * the throttling and retry plugins (src/github/client.ts); rate-limit waits become warnings.
 */
import * as core from '@actions/core';
import { VERSION } from '../cli/version.js';
import { createOctokitClient, type WritePacing } from '../github/client.js';
import { octokitGitHub } from '../github/octokit.js';
import type { GitHubPort } from '../ports/github.js';
import type { ActionContext } from './context.js';

export const USER_AGENT = `consort-action/${VERSION}`;

export function actionGitHub(token: string, ctx: Pick<ActionContext, 'apiUrl'>, writePacing: WritePacing): GitHubPort {
  return octokitGitHub(
    createOctokitClient({
      token,
      apiUrl: ctx.apiUrl,
      userAgent: USER_AGENT,
      onLimit: (m) => core.warning(m),
      writePacing,
    }),
  );
}
