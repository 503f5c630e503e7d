/**
 * What the App needs of GitHub beyond comments, statuses and permissions, added to the local
 * GitHub stand-in (test/helpers/fake-github.ts) with the shapes GitHub documents: the
 * installation token exchange (App JWT → `ghs_` token), check runs (create, update, get one, list a
 * commit's; the
 * documented limits, required fields, status/conclusion/annotation-level lists and the
 * completed-needs-a-conclusion rule enforced with a 422 like GitHub's), the repository tarball at a commit,
 * the merge base of a comparison, and `/meta`.
 */
import type { ExtraReply, ExtraRequest, FakeGitHub } from '../../helpers/fake-github.js';
import { githubComparison, githubGitCommit, githubUser } from '../../helpers/github-shapes.js';
import { gitObject } from './repo.js';

/** The GitHub App check runs are made by (`integration`). */
const APP = {
  id: 4242,
  slug: 'consort',
  node_id: 'A_kwHOAAAAAAAAEJI',
  owner: githubUser({ login: 'consort-dev', id: 77, type: 'Organization' }),
  name: 'Consort',
  description: null,
  external_url: 'https://consort.example',
  html_url: 'https://github.com/apps/consort',
  created_at: '2025-01-01T00:00:00Z',
  updated_at: '2025-01-01T00:00:00Z',
  permissions: { checks: 'write', contents: 'read', pull_requests: 'write', statuses: 'write' },
  events: ['pull_request', 'issue_comment', 'check_suite'],
};

export interface StoredCheckRun {
  id: number;
  name: string;
  headSha: string;
  externalId: string | null;
  status: string;
  conclusion: string | null;
  detailsUrl: string | null;
  output: { title?: string; summary?: string; text?: string; annotations?: { title?: string; message: string }[] };
  updates: number;
  startedAt: string | null;
  completedAt: string | null;
}

export interface AppRoutes {
  checkRuns: Map<number, StoredCheckRun>;
  tarballs: Map<string, Buffer>;
  /** The merge base the compare endpoint answers (default: the base asked for). */
  mergeBase: (base: string, head: string) => string;
  tokens: number;
}

/** The installation token the stand-in hands out (other stand-ins accept it as the App's). */
export const TOKEN = 'ghs_consortfaketoken0000000000000000000';

function invalid(message: string): ExtraReply {
  return {
    status: 422,
    body: {
      message: 'Invalid request.',
      errors: [message],
      documentation_url: 'https://docs.github.com/rest/checks/runs',
      status: '422',
    },
  };
}

const CHECK_STATUSES = ['queued', 'in_progress', 'completed'];
const CHECK_CONCLUSIONS = [
  'action_required',
  'cancelled',
  'failure',
  'neutral',
  'success',
  'skipped',
  'stale',
  'timed_out',
];
const ANNOTATION_LEVELS = ['notice', 'warning', 'failure'];

/**
 * What GitHub's "Create a check run" / "Update a check run" refuse beyond the output's limits: a
 * create without `name` or `head_sha`, a status or conclusion outside their lists, `completed`
 * (or `completed_at`) without a conclusion, an output without `title` or `summary`, an annotation
 * without its required fields or with columns across lines.
 */
function checkRunProblem(body: Record<string, unknown>, creating: boolean): string | null {
  if (creating && (typeof body.name !== 'string' || body.name === '')) return 'name is missing';
  if (creating && typeof body.head_sha !== 'string') return 'head_sha is missing';
  if (body.status !== undefined && !CHECK_STATUSES.includes(String(body.status)))
    return 'status is not included in the list';
  if (body.conclusion !== undefined && !CHECK_CONCLUSIONS.includes(String(body.conclusion)))
    return 'conclusion is not included in the list';
  if ((body.status === 'completed' || body.completed_at !== undefined) && body.conclusion === undefined)
    return 'conclusion is required when status is completed or completed_at is given';
  const o = body.output as Record<string, unknown> | undefined;
  if (o !== undefined && (typeof o.title !== 'string' || typeof o.summary !== 'string'))
    return 'output needs a title and a summary';
  for (const a of (o?.annotations ?? []) as Record<string, unknown>[]) {
    for (const field of ['path', 'start_line', 'end_line', 'annotation_level', 'message'])
      if (a[field] === undefined) return `annotation ${field} is missing`;
    if (!ANNOTATION_LEVELS.includes(String(a.annotation_level))) return 'annotation_level is not included in the list';
    if ((a.start_column !== undefined || a.end_column !== undefined) && a.start_line !== a.end_line)
      return 'start_column and end_column are only allowed when start_line equals end_line';
  }
  return null;
}

/** GitHub refuses output beyond its documented limits; so does the stand-in. */
function checkOutput(o: StoredCheckRun['output'] | undefined): string | null {
  if (!o) return null;
  if ((o.summary ?? '').length > 65_535) return 'output.summary is too long (maximum is 65535 characters)';
  if ((o.text ?? '').length > 65_535) return 'output.text is too long (maximum is 65535 characters)';
  if ((o.annotations ?? []).length > 50) return 'output.annotations: at most 50 per request';
  for (const a of o.annotations ?? []) {
    if ((a.title ?? '').length > 255) return 'annotation title is too long (maximum is 255 characters)';
    if (Buffer.byteLength(a.message, 'utf8') > 65_536) return 'annotation message is too long (maximum is 64 KB)';
  }
  return null;
}

export function installAppRoutes(fake: FakeGitHub, owner: string, repo: string): AppRoutes {
  let nextId = 7_000_000;
  const routes: AppRoutes = { checkRuns: new Map(), tarballs: new Map(), mergeBase: (base) => base, tokens: 0 };
  const at = `/repos/${owner}/${repo}`;
  const authed = (r: ExtraRequest): boolean => r.authorization === `token ${TOKEN}`;
  const unauthorized: ExtraReply = {
    status: 401,
    body: { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' },
  };
  const render = (c: StoredCheckRun) => ({
    id: c.id,
    node_id: `CR_kwDOM_${c.id}`,
    head_sha: c.headSha,
    external_id: c.externalId,
    url: `${fake.url}${at}/check-runs/${c.id}`,
    html_url: `https://github.com/${owner}/${repo}/runs/${c.id}`,
    details_url: c.detailsUrl ?? `https://github.com/${owner}/${repo}/runs/${c.id}`,
    status: c.status,
    conclusion: c.conclusion,
    started_at: c.startedAt,
    completed_at: c.completedAt,
    output: {
      title: c.output.title ?? null,
      summary: c.output.summary ?? null,
      text: c.output.text ?? null,
      annotations_count: (c.output.annotations ?? []).length,
      annotations_url: `${fake.url}${at}/check-runs/${c.id}/annotations`,
    },
    name: c.name,
    check_suite: { id: 5_000_000 },
    app: APP,
    pull_requests: [],
  });
  const repoUrl = `${fake.url}${at}`;
  const commitOf = (sha: string) => {
    const found = gitObject(sha);
    return { sha, tree: found?.kind === 'commit' ? found.tree : sha, parents: [], message: '' };
  };
  const archives = `/_codeload/${owner}/${repo}/legacy.tar.gz/`;

  fake.routes.push((r) => {
    if (r.method === 'GET' && r.path === '/meta')
      return { status: 200, body: { verifiable_password_authentication: false, installed_version: '3.17.0' } };
    if (r.method === 'GET' && r.path.startsWith(archives)) {
      const archive = routes.tarballs.get(r.path.slice(archives.length));
      return archive
        ? { status: 200, raw: archive, headers: { 'content-type': 'application/x-gzip' } }
        : { status: 404, body: { message: 'Not Found' } };
    }
    const token = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(r.path);
    if (token && r.method === 'POST') {
      if (!r.authorization?.startsWith('bearer ') && !r.authorization?.startsWith('Bearer ')) return unauthorized;
      routes.tokens++;
      return {
        status: 201,
        body: {
          token: TOKEN,
          expires_at: new Date(Date.now() + 3_600_000).toISOString(),
          permissions: { checks: 'write', contents: 'read', pull_requests: 'write' },
          repository_selection: 'all',
        },
      };
    }
    if (!r.path.startsWith(`${at}/`)) return undefined;
    if (!authed(r)) return unauthorized;
    const rest = r.path.slice(at.length);
    const body = (r.body ?? {}) as Record<string, unknown>;
    if (rest === '/check-runs' && r.method === 'POST') {
      const problem = checkRunProblem(body, true) ?? checkOutput(body.output as StoredCheckRun['output']);
      if (problem) return invalid(problem);
      const run: StoredCheckRun = {
        id: nextId++,
        name: String(body.name),
        headSha: String(body.head_sha),
        externalId: typeof body.external_id === 'string' ? body.external_id : null,
        status: typeof body.status === 'string' ? body.status : 'queued',
        conclusion: null,
        detailsUrl: null,
        output: (body.output ?? {}) as StoredCheckRun['output'],
        updates: 0,
        startedAt: typeof body.started_at === 'string' ? body.started_at : null,
        completedAt: null,
      };
      routes.checkRuns.set(run.id, run);
      return { status: 201, body: render(run) };
    }
    // "List check runs for a Git reference" (a commit's SHA here): `check_name`, `status`, `filter`
    // (latest: the newest run of each name; all), paged by `per_page` (default 30, at most 100) and `page`.
    const forRef = /^\/commits\/([0-9a-f]{40})\/check-runs$/.exec(rest);
    if (forRef && r.method === 'GET') {
      const filter = r.query.get('filter') ?? 'latest';
      const status = r.query.get('status');
      if (!['latest', 'all'].includes(filter) || (status !== null && !CHECK_STATUSES.includes(status)))
        return invalid('filter or status is not included in the list');
      const name = r.query.get('check_name');
      const matching = [...routes.checkRuns.values()]
        .filter((c) => c.headSha === forRef[1] && (name === null || c.name === name))
        .filter((c) => status === null || c.status === status)
        .sort((x, y) => y.id - x.id);
      const shown =
        filter === 'all' ? matching : matching.filter((c, i) => matching.findIndex((d) => d.name === c.name) === i);
      const perPage = Math.min(100, Math.max(1, Number(r.query.get('per_page') ?? 30) || 30));
      const page = Math.max(1, Number(r.query.get('page') ?? 1) || 1);
      return {
        status: 200,
        body: { total_count: shown.length, check_runs: shown.slice((page - 1) * perPage, page * perPage).map(render) },
      };
    }
    const one = /^\/check-runs\/(\d+)$/.exec(rest);
    if (one && r.method === 'GET') {
      const run = routes.checkRuns.get(Number(one[1]));
      return run ? { status: 200, body: render(run) } : { status: 404, body: { message: 'Not Found' } };
    }
    if (one && r.method === 'PATCH') {
      const run = routes.checkRuns.get(Number(one[1]));
      if (!run) return { status: 404, body: { message: 'Not Found' } };
      const problem = checkRunProblem(body, false) ?? checkOutput(body.output as StoredCheckRun['output']);
      if (problem) return invalid(problem);
      Object.assign(run, {
        status: typeof body.status === 'string' ? body.status : run.status,
        conclusion: typeof body.conclusion === 'string' ? body.conclusion : run.conclusion,
        detailsUrl: typeof body.details_url === 'string' ? body.details_url : run.detailsUrl,
        // GitHub appends an update's annotations to the run's (at most 50 per request).
        output: body.output
          ? {
              ...(body.output as StoredCheckRun['output']),
              annotations: [
                ...(run.output.annotations ?? []),
                ...((body.output as StoredCheckRun['output']).annotations ?? []),
              ],
            }
          : run.output,
        updates: run.updates + 1,
        completedAt: typeof body.completed_at === 'string' ? body.completed_at : run.completedAt,
      });
      return { status: 200, body: render(run) };
    }
    // GitHub answers a tarball with a redirect to codeload, which serves the archive.
    const tarball = /^\/tarball\/([0-9a-f]{40})$/.exec(rest);
    if (tarball && r.method === 'GET')
      return routes.tarballs.has(tarball[1]!)
        ? { status: 302, headers: { location: `${fake.url}${archives}${tarball[1]}` } }
        : { status: 404, body: { message: 'Not Found' } };
    // The Git Trees API (one folder, not recursive: a recursive listing is the dashboard stand's),
    // from the repositories the tarballs were made of; a tree_sha may name a commit, as on GitHub.
    const gitObjectPath = /^\/git\/(commits|trees)\/([0-9a-f]{40})$/.exec(rest);
    if (gitObjectPath && r.method === 'GET' && !r.query.has('recursive')) {
      const [, kind, sha] = gitObjectPath;
      const found = gitObject(sha!);
      if (kind === 'commits' && found?.kind === 'commit')
        return {
          status: 200,
          body: githubGitCommit(repoUrl, `${owner}/${repo}`, { ...commitOf(sha!), message: 'change' }),
        };
      const tree = found?.kind === 'commit' ? gitObject(found.tree) : found;
      if (kind === 'trees' && tree?.kind === 'tree')
        return {
          status: 200,
          body: {
            sha,
            url: `${repoUrl}/git/trees/${sha}`,
            truncated: false,
            tree: tree.entries.map((e) => ({
              path: e.name,
              mode: e.mode,
              type: e.type,
              sha: e.sha,
              url: `${repoUrl}/git/${e.type}s/${e.sha}`,
            })),
          },
        };
    }
    const compare = /^\/compare\/([0-9a-f]{40})\.\.\.([0-9a-f]{40})$/.exec(rest);
    if (compare && r.method === 'GET')
      return {
        status: 200,
        body: githubComparison(repoUrl, `${owner}/${repo}`, {
          base: commitOf(compare[1]!),
          mergeBase: commitOf(routes.mergeBase(compare[1]!, compare[2]!)),
          commits: [commitOf(compare[2]!)],
          head: compare[2]!,
        }),
      };
    return undefined;
  });
  return routes;
}
