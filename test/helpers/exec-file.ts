/**
 * `promisify(execFile)` for the tests, started by the product's launcher (src/process/launcher.ts):
 * a jest worker holds 200–400 MB, and on the CI machine fork() costs ~0.08 ms per MB of its caller
 * (docs/benchmarks.md, bench:spawn), so every `git init` a test ran from the worker cost it 15–30 ms.
 * Same promise as Node's: `{ stdout, stderr }` (strings, or Buffers with `encoding: 'buffer'`); a
 * non-zero exit, a signal, a timeout or an output over `maxBuffer` rejects with an Error carrying
 * `code`, `signal`, `killed`, `stdout`, `stderr` and `cmd`. Without `env`, the worker's environment.
 */
import { startChild } from '../../src/process/launcher.js';

export interface ExecOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Milliseconds before the child's process group gets SIGTERM (0: none). */
  timeout?: number;
  /** Bytes of stdout or stderr (default 1 MiB, as Node's). */
  maxBuffer?: number;
}

export interface ExecError extends Error {
  code?: number | string;
  signal?: NodeJS.Signals | null;
  killed?: boolean;
  cmd?: string;
  stdout?: string | Buffer;
  stderr?: string | Buffer;
}

export function execFileAsync(
  file: string,
  args: readonly string[],
  options: ExecOptions & { encoding: 'buffer' },
): Promise<{ stdout: Buffer; stderr: Buffer }>;
export function execFileAsync(
  file: string,
  args?: readonly string[],
  options?: ExecOptions & { encoding?: BufferEncoding },
): Promise<{ stdout: string; stderr: string }>;
export function execFileAsync(
  file: string,
  args: readonly string[] = [],
  options: ExecOptions & { encoding?: BufferEncoding | 'buffer' } = {},
): Promise<{ stdout: string | Buffer; stderr: string | Buffer }> {
  const maxBuffer = options.maxBuffer ?? 1024 * 1024;
  const cmd = [file, ...args].join(' ');
  return new Promise((resolve, reject) => {
    const child = startChild({
      file,
      args,
      cwd: options.cwd ?? process.cwd(),
      env: options.env ?? process.env,
    });
    const chunks = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
    const sizes = { stdout: 0, stderr: 0 };
    let killed = false;
    let overflow = false;
    let spawnError: NodeJS.ErrnoException | undefined;
    let exit: { code: number | null; signal: NodeJS.Signals | null } = { code: null, signal: null };
    const kill = (): void => {
      killed = true;
      if (child.pid !== undefined)
        try {
          process.kill(-child.pid, 'SIGTERM');
        } catch {
          // gone already
        }
    };
    child.on('spawn', () => {
      if (killed) kill();
    });
    const timer = options.timeout ? setTimeout(kill, options.timeout) : undefined;
    child.on('data', (name: 'stdout' | 'stderr', chunk: Buffer) => {
      sizes[name] += chunk.length;
      if (sizes[name] > maxBuffer) {
        overflow = true;
        kill();
        return;
      }
      chunks[name].push(chunk);
    });
    child.on('error', (e: NodeJS.ErrnoException) => {
      spawnError ??= e;
    });
    child.on('exit', (code: number | null, signal: NodeJS.Signals | null) => {
      exit = { code, signal };
    });
    child.on('close', () => {
      clearTimeout(timer);
      const text = (b: Buffer[]): string | Buffer =>
        options.encoding === 'buffer' ? Buffer.concat(b) : Buffer.concat(b).toString(options.encoding ?? 'utf8');
      const stdout = text(chunks.stdout);
      const stderr = text(chunks.stderr);
      if (spawnError === undefined && exit.code === 0 && !overflow) {
        resolve({ stdout, stderr });
        return;
      }
      const error: ExecError = spawnError ?? new Error(`Command failed: ${cmd}\n${stderr.toString()}`);
      if (overflow) error.message = `stdout or stderr maxBuffer length exceeded: ${cmd}`;
      if (spawnError === undefined) {
        error.code = exit.code ?? undefined;
        error.signal = exit.signal;
      }
      error.killed = killed;
      error.cmd = cmd;
      error.stdout = stdout;
      error.stderr = stderr;
      reject(error);
    });
  });
}
