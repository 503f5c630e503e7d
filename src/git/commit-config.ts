/**
 * The configuration the in-process commit (commit-objects.ts) reads: the identity, the reflog
 * setting, and every setting that leaves the commit to `git commit`.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { git } from './exec.js';
import { give } from './in-process.js';
import { parseConfigList } from './pinned-config.js';
import { gitEnv } from './safe.js';
import type { GitWorkspace } from './workspace.js';

export interface RepoConfig {
  author: string;
  committer: string;
  logAll: boolean;
}

/** The config keys' values that matter, checked; read by one `git config --list`, kept while its files are unchanged. */
const configs = new Map<string, { signature: string; config: RepoConfig }>();

export async function repoConfig(ws: GitWorkspace, own: string): Promise<RepoConfig> {
  const env = gitEnv();
  const home = env.HOME ?? '';
  const files = [
    path.join(ws.gitDir, 'config'),
    path.join(own, 'config.worktree'),
    ...(env.GIT_CONFIG_GLOBAL
      ? [env.GIT_CONFIG_GLOBAL]
      : [path.join(home, '.gitconfig'), path.join(home, '.config/git/config')]),
  ];
  const signature = [
    ...ws.identity,
    ...files.map((f) => {
      const s = statSync(f, { throwIfNoEntry: false, bigint: true });
      return s === undefined ? `${f}:-` : `${f}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
    }),
  ].join('\0');
  const key = `${ws.gitDir}\0${own}`;
  const known = configs.get(key);
  if (known?.signature === signature) return known.config;
  const listed = await git(ws.top, [...ws.identity, 'config', '--list', '-z']);
  if (listed.code !== 0) give('git config failed');
  const values = new Map<string, string>();
  let includes = false;
  for (const [k, v] of parseConfigList(listed.stdout)) {
    const lower = k.toLowerCase();
    if (lower === 'include.path' || lower.startsWith('includeif.')) includes = true;
    values.set(lower, v);
  }
  const config = checkedConfig(values);
  // A file an include names is not in the signature: read again every time then.
  if (includes) configs.delete(key);
  else configs.set(key, { signature, config });
  return config;
}

function checkedConfig(values: Map<string, string>): RepoConfig {
  for (const key of values.keys()) {
    if (key.startsWith('extensions.') && key !== 'extensions.worktreeconfig') give(`${key} is set`);
    if (/^core\.(sharedrepository|fsync|fsyncobjectfiles|fsyncmethod)$/.test(key)) give(`${key} is set`);
    if (key === 'commit.cleanup') give(`${key} is set`);
  }
  if (!['0', '1', undefined].includes(values.get('core.repositoryformatversion'))) give('repository format');
  const encoding = values.get('i18n.commitencoding')?.toLowerCase();
  if (encoding !== undefined && encoding !== 'utf-8' && encoding !== 'utf8') give('commit encoding');
  const ident = (role: 'author' | 'committer'): string => {
    const name = values.get(`${role}.name`) ?? values.get('user.name');
    const email = values.get(`${role}.email`) ?? values.get('user.email');
    if (name === undefined || email === undefined || !plain(name) || !plain(email)) give(`no plain ${role} identity`);
    return `${name} <${email}>`;
  };
  const logAll = (values.get('core.logallrefupdates') ?? 'true').toLowerCase();
  let log: boolean;
  if (['true', 'yes', 'on', 'always', ''].includes(logAll)) log = logAll !== '';
  else if (['false', 'no', 'off'].includes(logAll)) log = false;
  else if (/^-?\d+$/.test(logAll)) log = Number(logAll) !== 0;
  else return give('core.logAllRefUpdates');
  return { author: ident('author'), committer: ident('committer'), logAll: log };
}

/** A name or email git's ident code would write as it is: no crud at either end, no `<`, `>` or newline. */
export function plain(text: string): boolean {
  if (text === '' || /[<>\n\0]/.test(text)) return false;
  const crud = (c: number): boolean => c <= 32 || '.,:;<>"\\\''.includes(String.fromCharCode(c));
  const bytes = Buffer.from(text);
  return !crud(bytes[0]!) && !crud(bytes[bytes.length - 1]!);
}
