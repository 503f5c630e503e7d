/**
 * Who may approve a gate from the App's dashboard: the same rule `/consort approve` applies
 * (approvalRefusal: `gates.approvers`, `gates.selfApproval`), read from where a pull request cannot
 * loosen it — the configuration on the pull request's base branch, never its head — with the
 * author and team memberships asked of GitHub through the App's installation.
 */
import { z } from 'zod';
import { approvalRefusal, type ApprovalPolicy } from '../../src/conductor/gates.js';
import { CONFIG_FILES, parseConfigText } from '../../src/config/load.js';
import { defaultConfig } from '../../src/config/schema.js';
import { octokitGitHub, type OctokitClient } from '../../src/github/octokit.js';
import type { RepoRef } from '../../src/ports/github.js';

const Contents = z.object({ content: z.string(), encoding: z.literal('base64') });

const statusOf = (e: unknown): number =>
  typeof e === 'object' && e !== null && 'status' in e && typeof e.status === 'number' ? e.status : 0;

/** The approval policy of the configuration at `ref` (the first of Consort's config files there, else the defaults). */
export async function approvalPolicyAt(client: OctokitClient, repo: RepoRef, ref: string): Promise<ApprovalPolicy> {
  for (const file of CONFIG_FILES) {
    let data: unknown;
    try {
      ({ data } = await client.request('GET /repos/{owner}/{repo}/contents/{path}', {
        owner: repo.owner,
        repo: repo.repo,
        path: file,
        ref,
      }));
    } catch (e) {
      if (statusOf(e) === 404) continue;
      throw e;
    }
    const { content } = Contents.parse(data);
    const config = parseConfigText(Buffer.from(content, 'base64').toString('utf8'), file);
    return { approvers: config.gates.approvers, selfApproval: config.gates.selfApproval };
  }
  const d = defaultConfig();
  return { approvers: d.gates.approvers, selfApproval: d.gates.selfApproval };
}

/** Why `login` may not approve gates of pull request `pr` (undefined: they may), as `/consort approve` decides it. */
export async function dashboardApprovalRefusal(
  client: OctokitClient,
  repo: RepoRef,
  pr: number,
  login: string,
): Promise<string | undefined> {
  const gh = octokitGitHub(client);
  const pull = await gh.pull(repo, pr);
  const policy = await approvalPolicyAt(client, repo, pull.base.ref);
  const teams: string[] = [];
  for (const entry of policy.approvers.filter((a) => a.includes('/'))) {
    const [org = '', team = ''] = entry.split('/');
    if (await gh.teamMember(org, team, login)) teams.push(entry);
  }
  return approvalRefusal(policy, { login, teams }, pull.author || null);
}
