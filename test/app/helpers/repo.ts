/**
 * Repositories for App tests: the example shop as a real git repository (src/demo/scenarios.ts),
 * more commits on top, and the tarball GitHub would serve for a commit (`git archive`, with the
 * `<owner>-<repo>-<sha7>/` directory GitHub wraps the tree in).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execFileAsync } from '../../helpers/exec-file.js';

const exec = execFileAsync;
const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Consort test',
  GIT_AUTHOR_EMAIL: 'test@consort.invalid',
  GIT_COMMITTER_NAME: 'Consort test',
  GIT_COMMITTER_EMAIL: 'test@consort.invalid',
};

/** Commit `files` on top of `from` (default: the current HEAD); returns the new commit's SHA. */
export async function commit(
  dir: string,
  files: Record<string, string>,
  message = 'change',
  from?: string,
): Promise<string> {
  if (from !== undefined) await exec('git', ['checkout', '-q', '--detach', from], { cwd: dir, env });
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), content);
  }
  await exec('git', ['add', '-A'], { cwd: dir, env });
  await exec('git', ['-c', 'commit.gpgsign=false', 'commit', '-qm', message, '--allow-empty'], { cwd: dir, env });
  return (await exec('git', ['rev-parse', 'HEAD'], { cwd: dir, env })).stdout.trim();
}

export async function tarballOf(dir: string, sha: string, owner = 'Codertocat', repo = 'Hello-World'): Promise<Buffer> {
  const { stdout } = await exec(
    'git',
    ['archive', '--format=tar.gz', `--prefix=${owner}-${repo}-${sha.slice(0, 7)}/`, sha],
    { cwd: dir, encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout;
}

/** A Consort config whose suite is a plain shell command (the App's workspace has no node_modules). */
export function appConfig(suite: string, extra = ''): string {
  return [
    'database:',
    '  seed:',
    '    file: seed.sql',
    'migrations:',
    '  dir: migrations',
    'suite:',
    `  command: ${JSON.stringify(suite)}`,
    '  timeout: 2m',
    extra,
  ].join('\n');
}
