/**
 * The one way the extension does anything: the consort CLI as a child process, with `--json`.
 * The extension holds no logic of its own beyond showing what the CLI returns, so the editor,
 * the git hooks and the shell always agree. The child's environment is built from an allow-list.
 */
import { execFile } from 'node:child_process';
import * as vscode from 'vscode';
import { resolveCli } from './cli-path';

const BASICS = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'TZ',
  'TMPDIR',
  'TERM',
  'XDG_CACHE_HOME',
  'XDG_CONFIG_HOME',
  'SYSTEMROOT',
];
const PREFIXES = ['CONSORT_', 'DATABRICKS_', 'LAKEBASE_', 'NEON_', 'PG'];

export function childEnv(): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && (BASICS.includes(k) || PREFIXES.some((p) => k.startsWith(p)))) out[k] = v;
  }
  const extra = vscode.workspace.getConfiguration('consort').get<Record<string, string>>('env') ?? {};
  for (const [k, v] of Object.entries(extra)) if (typeof v === 'string') out[k] = v;
  return out;
}

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    readonly stdout: string,
  ) {
    super(message);
  }
}

/**
 * How to start the CLI in `cwd`: the program, and the arguments before the command's own (the
 * project's own install when `consort.cli` keeps its default: cli-path.ts).
 */
export function cliCommand(cwd: string | undefined): { file: string; prefix: string[] } {
  const config = vscode.workspace.getConfiguration('consort');
  return resolveCli({ cli: config.get<string>('cli'), node: config.get<string>('node') }, cwd);
}

/** Run `consort <args>` in `cwd`; resolves to stdout. A non-zero exit rejects with stderr's message (stdout kept). */
export function runCli(cwd: string, args: string[], output?: vscode.OutputChannel): Promise<string> {
  const { file, prefix } = cliCommand(cwd);
  output?.appendLine(`$ consort ${args.join(' ')}`);
  return new Promise((resolve, reject) => {
    execFile(
      file,
      [...prefix, ...args],
      { cwd, env: childEnv(), maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (stderr.trim()) output?.appendLine(stderr.trimEnd());
        if (!err) return resolve(stdout);
        const code = typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1;
        const message =
          stderr
            .trim()
            .split('\n')
            .filter((l) => l.startsWith('consort:'))
            .pop() ??
          (stderr.trim() || err.message);
        reject(new CliError(message.replace(/^consort:\s*/, ''), code, stdout));
      },
    );
  });
}

export async function runJson<T>(cwd: string, args: string[], output?: vscode.OutputChannel): Promise<T> {
  try {
    return JSON.parse(await runCli(cwd, [...args, '--json'], output)) as T;
  } catch (e) {
    // `pair` exits 1 when a migration failed but still prints the pairing.
    if (e instanceof CliError && e.stdout.trim().startsWith('{')) return JSON.parse(e.stdout) as T;
    throw e;
  }
}
