/**
 * Who may approve a gate from the App's dashboard: the same rule `/consort approve` applies
 * (approvalRefusal: `gates.approvers`, `gates.selfApproval`), read from where a pull request cannot
 * loosen it — the configuration on the pull request's base branch, never its head — with the
 * author and team memberships asked of GitHub through the App's installation.
 */
import { z } from 'zod';
import { ConsortError } from '../../src/core/errors.js';
import { approvalRefusal, type ApprovalPolicy } from '../../src/conductor/gates.js';
import { CONFIG_FILES, parseConfigText } from '../../src/config/load.js';
import { defaultConfig } from '../../src/config/schema.js';
import { octokitGitHub, type OctokitClient } from '../../src/github/octokit.js';
import type { RepoRef } from '../../src/ports/github.js';

/** What the contents API answers for a path: a folder's listing (an array), or one entry. */
const Entry = z.object({ type: z.string() });
const FileEntry = z.object({ type: z.literal('file'), encoding: z.string(), content: z.string() });

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
    const text = await fileText(client, repo, ref, file, data);
    const config = parseConfigText(text, file);
    return { approvers: config.gates.approvers, selfApproval: config.gates.selfApproval };
  }
  const d = defaultConfig();
  return { approvers: d.gates.approvers, selfApproval: d.gates.selfApproval };
}

/**
 * The configuration file's text from the contents API's answer. A folder, a link leading out of the
 * repository or a submodule at that path is not a configuration (an error that says so, where the
 * lane reading it from git would fail too); a file over 1 MB comes without its content (`encoding:
 * "none"`), and is asked for again in the raw media type, which serves files up to 100 MB.
 */
async function fileText(
  client: OctokitClient,
  repo: RepoRef,
  ref: string,
  file: string,
  data: unknown,
): Promise<string> {
  const where = `${file} on ${ref} of ${repo.owner}/${repo.repo}`;
  const notAFile = (what: string) =>
    new ConsortError(
      'config',
      `${where} is ${what}, not Consort's configuration file: who may approve gates cannot be read from it.`,
      {
        hint: `Make ${file} on ${ref} a file (or remove it to use the defaults); the dashboard reads the approvers from the pull request's base branch.`,
      },
    );
  if (Array.isArray(data)) throw notAFile('a folder');
  const entry = Entry.safeParse(data);
  const odd = (what: string) =>
    new ConsortError('service-error', `GitHub answered the read of ${where} with ${what}.`, {
      hint: 'Try again; if it persists, GitHub (or GitHub Enterprise Server) is answering the contents API differently from its documentation.',
    });
  if (!entry.success) throw odd('something that is not a file entry');
  if (entry.data.type !== 'file') throw notAFile(`a ${entry.data.type}`);
  const found = FileEntry.safeParse(data);
  if (!found.success) throw odd("a file entry without the file's content");
  if (found.data.encoding === 'base64') return Buffer.from(found.data.content, 'base64').toString('utf8');
  const raw = await client.request('GET /repos/{owner}/{repo}/contents/{path}', {
    owner: repo.owner,
    repo: repo.repo,
    path: file,
    ref,
    mediaType: { format: 'raw' },
  });
  // Octokit gives text for a text/* or charset=utf-8 answer (GitHub's for the raw media type), bytes otherwise.
  const body: unknown = raw.data;
  if (typeof body === 'string') return body;
  if (body instanceof ArrayBuffer) return new TextDecoder().decode(body);
  throw odd("something other than the file's text to a raw read");
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
