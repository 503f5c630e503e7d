/**
 * GitHub's REST answers in full, as its OpenAPI description requires them (every required field,
 * the URL fields GitHub fills in), for the local stand-ins (test/helpers/fake-github.ts,
 * test/app/helpers/app-routes.ts, test/dashboard/github-oauth.ts): a user, a repository, a commit
 * as the comparison lists it, a Git commit, a Git ref. test/github/openapi.test.ts holds the
 * stand-ins' answers against the description, so a field left out here fails there.
 */

export interface UserRef {
  login: string;
  id: number;
  type: 'Bot' | 'User' | 'Organization';
}

/** `simple-user`: `api` is the REST API's root (the stand-in's URL). */
export function githubUser(u: UserRef, api = 'https://api.github.com') {
  const at = `${api}/users/${encodeURIComponent(u.login)}`;
  return {
    login: u.login,
    id: u.id,
    node_id: `${u.type === 'Bot' ? 'MDM6Qm90' : 'MDQ6VXNlcj'}${u.id}`,
    avatar_url: `https://avatars.githubusercontent.com/u/${u.id}?v=4`,
    gravatar_id: '',
    url: at,
    html_url: `https://github.com/${u.login}`,
    followers_url: `${at}/followers`,
    following_url: `${at}/following{/other_user}`,
    gists_url: `${at}/gists{/gist_id}`,
    starred_url: `${at}/starred{/owner}{/repo}`,
    subscriptions_url: `${at}/subscriptions`,
    organizations_url: `${at}/orgs`,
    repos_url: `${at}/repos`,
    events_url: `${at}/events{/privacy}`,
    received_events_url: `${at}/received_events`,
    type: u.type,
    site_admin: false,
  };
}

/** `public-user` (GET /user with a person's token). */
export function githubPublicUser(u: UserRef, api = 'https://api.github.com') {
  return {
    ...githubUser(u, api),
    user_view_type: 'public',
    name: null,
    company: null,
    blog: '',
    location: null,
    email: null,
    hireable: null,
    bio: null,
    public_repos: 2,
    public_gists: 0,
    followers: 1,
    following: 0,
    created_at: '2020-01-01T00:00:00Z',
    updated_at: '2025-01-01T00:00:00Z',
  };
}

/** `repository`, owned by a user; `fork` when it is not the upstream. */
export function githubRepository(fullName: string, o: { api?: string; id?: number; fork?: boolean } = {}) {
  const api = o.api ?? 'https://api.github.com';
  const [login = '', name = ''] = fullName.split('/');
  const at = `${api}/repos/${fullName}`;
  const url = (path: string) => `${at}/${path}`;
  return {
    id: o.id ?? 1296269,
    node_id: 'MDEwOlJlcG9zaXRvcnkxMjk2MjY5',
    name,
    full_name: fullName,
    owner: githubUser({ login, id: 1, type: 'User' }, api),
    private: false,
    html_url: `https://github.com/${fullName}`,
    description: null,
    fork: o.fork ?? false,
    url: at,
    archive_url: url('{archive_format}{/ref}'),
    assignees_url: url('assignees{/user}'),
    blobs_url: url('git/blobs{/sha}'),
    branches_url: url('branches{/branch}'),
    collaborators_url: url('collaborators{/collaborator}'),
    comments_url: url('comments{/number}'),
    commits_url: url('commits{/sha}'),
    compare_url: url('compare/{base}...{head}'),
    contents_url: url('contents/{+path}'),
    contributors_url: url('contributors'),
    deployments_url: url('deployments'),
    downloads_url: url('downloads'),
    events_url: url('events'),
    forks_url: url('forks'),
    git_commits_url: url('git/commits{/sha}'),
    git_refs_url: url('git/refs{/sha}'),
    git_tags_url: url('git/tags{/sha}'),
    git_url: `git://github.com/${fullName}.git`,
    issue_comment_url: url('issues/comments{/number}'),
    issue_events_url: url('issues/events{/number}'),
    issues_url: url('issues{/number}'),
    keys_url: url('keys{/key_id}'),
    labels_url: url('labels{/name}'),
    languages_url: url('languages'),
    merges_url: url('merges'),
    milestones_url: url('milestones{/number}'),
    notifications_url: url('notifications{?since,all,participating}'),
    pulls_url: url('pulls{/number}'),
    releases_url: url('releases{/id}'),
    ssh_url: `git@github.com:${fullName}.git`,
    stargazers_url: url('stargazers'),
    statuses_url: url('statuses/{sha}'),
    subscribers_url: url('subscribers'),
    subscription_url: url('subscription'),
    tags_url: url('tags'),
    teams_url: url('teams'),
    trees_url: url('git/trees{/sha}'),
    clone_url: `https://github.com/${fullName}.git`,
    mirror_url: null,
    hooks_url: url('hooks'),
    svn_url: `https://github.com/${fullName}`,
    homepage: null,
    language: null,
    forks: 0,
    forks_count: 0,
    stargazers_count: 0,
    watchers_count: 0,
    watchers: 0,
    size: 108,
    default_branch: 'main',
    open_issues: 1,
    open_issues_count: 1,
    has_issues: true,
    has_projects: true,
    has_wiki: true,
    has_pages: false,
    has_downloads: true,
    archived: false,
    disabled: false,
    license: null,
    pushed_at: '2025-05-04T09:00:00Z',
    created_at: '2020-01-01T00:00:00Z',
    updated_at: '2025-05-04T09:00:00Z',
  };
}

/** A commit's author or committer in Git (`git-user`, and the Git commit's). */
const gitPerson = (name: string, date: string) => ({
  name,
  email: `${name.toLowerCase().replace(/\W+/g, '')}@users.noreply.github.com`,
  date,
});

/** `git-commit` (GET and POST /repos/{owner}/{repo}/git/commits). */
export function githubGitCommit(
  repoUrl: string,
  fullName: string,
  c: { sha: string; tree: string; parents: string[]; message: string; author?: string; date?: string },
) {
  const date = c.date ?? '2025-05-04T09:00:00Z';
  return {
    sha: c.sha,
    node_id: `C_${c.sha.slice(0, 20)}`,
    url: `${repoUrl}/git/commits/${c.sha}`,
    html_url: `https://github.com/${fullName}/commit/${c.sha}`,
    author: gitPerson(c.author ?? 'Octocat', date),
    committer: gitPerson('GitHub', date),
    tree: { sha: c.tree, url: `${repoUrl}/git/trees/${c.tree}` },
    message: c.message,
    parents: c.parents.map((p) => ({
      sha: p,
      url: `${repoUrl}/git/commits/${p}`,
      html_url: `https://github.com/${fullName}/commit/${p}`,
    })),
    verification: { verified: false, reason: 'unsigned', signature: null, payload: null, verified_at: null },
  };
}

/** `commit`, as a comparison's base and merge base (and its `commits`). */
export function githubCommit(
  repoUrl: string,
  fullName: string,
  c: { sha: string; tree: string; parents: string[]; message: string },
) {
  const date = '2025-05-04T09:00:00Z';
  return {
    url: `${repoUrl}/commits/${c.sha}`,
    sha: c.sha,
    node_id: `C_${c.sha.slice(0, 20)}`,
    html_url: `https://github.com/${fullName}/commit/${c.sha}`,
    comments_url: `${repoUrl}/commits/${c.sha}/comments`,
    commit: {
      url: `${repoUrl}/git/commits/${c.sha}`,
      author: gitPerson('Octocat', date),
      committer: gitPerson('GitHub', date),
      message: c.message,
      comment_count: 0,
      tree: { sha: c.tree, url: `${repoUrl}/git/trees/${c.tree}` },
    },
    author: null,
    committer: null,
    parents: c.parents.map((p) => ({
      sha: p,
      url: `${repoUrl}/commits/${p}`,
      html_url: `https://github.com/${fullName}/commit/${p}`,
    })),
  };
}

/** `commit-comparison` of `base...head`; `commits` are the head's side. */
export function githubComparison(
  repoUrl: string,
  fullName: string,
  c: {
    base: Parameters<typeof githubCommit>[2];
    mergeBase: Parameters<typeof githubCommit>[2];
    commits: Parameters<typeof githubCommit>[2][];
    files?: { filename: string; additions: number; deletions: number; sha: string | null }[];
    head: string;
  },
) {
  return {
    url: `${repoUrl}/compare/${c.base.sha}...${c.head}`,
    html_url: `https://github.com/${fullName}/compare/${c.base.sha}...${c.head}`,
    permalink_url: `https://github.com/${fullName}/compare/${fullName.split('/')[0]}:${c.base.sha.slice(0, 7)}...${fullName.split('/')[0]}:${c.head.slice(0, 7)}`,
    diff_url: `https://github.com/${fullName}/compare/${c.base.sha}...${c.head}.diff`,
    patch_url: `https://github.com/${fullName}/compare/${c.base.sha}...${c.head}.patch`,
    base_commit: githubCommit(repoUrl, fullName, c.base),
    merge_base_commit: githubCommit(repoUrl, fullName, c.mergeBase),
    status: c.commits.length === 0 ? 'identical' : c.mergeBase.sha === c.base.sha ? 'ahead' : 'diverged',
    ahead_by: c.commits.length,
    behind_by: 0,
    total_commits: c.commits.length,
    commits: c.commits.map((x) => githubCommit(repoUrl, fullName, x)),
    ...(c.files
      ? {
          files: c.files.map((f) => ({
            sha: f.sha,
            filename: f.filename,
            status: 'modified',
            additions: f.additions,
            deletions: f.deletions,
            changes: f.additions + f.deletions,
            blob_url: `https://github.com/${fullName}/blob/${c.head}/${f.filename}`,
            raw_url: `https://github.com/${fullName}/raw/${c.head}/${f.filename}`,
            contents_url: `${repoUrl}/contents/${f.filename}?ref=${c.head}`,
          })),
        }
      : {}),
  };
}

/** `git-ref` of a branch. */
export function githubRef(repoUrl: string, ref: string, sha: string) {
  return {
    ref,
    node_id: `REF_${Buffer.from(ref).toString('base64url')}`,
    url: `${repoUrl}/git/${ref}`,
    object: { type: 'commit', sha, url: `${repoUrl}/git/commits/${sha}` },
  };
}
