/**
 * Starting a child process, as every lane and adapter needs it: a user's command (a suite, a seed,
 * an agent), git, a tool. The environment is explicit and complete — whatever the request's `env`
 * holds is all the child sees, and the runner never reads its own process's environment — so build
 * it with `childEnv()` (src/core/child-env.ts), never from a copy of `process.env`. The adapter is
 * src/process/runner.ts (a process group per child, bounded output, optional PID-namespace isolation).
 */

export interface ProcessRequest {
  /**
   * Shell text, run as `/bin/sh -c command` so users can write pipes, `&&` and `VAR=x cmd`; or an
   * argv (the program and its arguments, no shell) for Consort's own calls (git, tar).
   */
  command: string | readonly [string, ...string[]];
  cwd: string;
  /** The child's complete environment (build it with childEnv()). */
  env: NodeJS.ProcessEnv;
  /** Written to the child's stdin, which is then closed (default: no stdin at all). */
  input?: string | Buffer;
  /**
   * Untrusted code (an agent's turn, a proof's suite): run it in a PID namespace where available,
   * so nothing it starts outlives it and it cannot read its ancestors' environments (src/process/isolate.ts).
   * Shell commands only.
   */
  isolate?: boolean;
  /** With `isolate`: folders bound read-only (and writable ones inside them) where bubblewrap is used. */
  readOnly?: readonly string[];
  writable?: readonly string[];
  /**
   * With `isolate`: `source` shown at `target` (read-only unless `writable`), in order, after the
   * folders above. Only where `ProcessRunner.canBind()` says so: elsewhere the request is refused.
   */
  binds?: readonly Bind[];
  /**
   * With `isolate`: paths shown empty, after everything above — a folder as an empty one, a file as
   * an empty file (a proof's suite sees no git history and no Consort records). Only where
   * `ProcessRunner.canBind()` says so: elsewhere the request is refused.
   */
  masks?: readonly string[];
  /** With `masks`: paths inside them shown again, read-only (what the command needs from a masked folder). */
  reshown?: readonly string[];
  /** Stopped (the whole process group) after this long; default: no time limit. */
  timeoutMs?: number;
  /** Bound on `output`; the head and the tail are kept because errors show up in both. */
  maxOutputBytes: number;
  /**
   * Keep stdout apart, whole, in `stdout` (data a caller parses: git's listings, blobs); `output`
   * then holds stderr alone. Default: stdout and stderr share `output`.
   */
  captureStdout?: boolean;
  /** Time between SIGTERM and SIGKILL. Default 2000 ms. */
  killGraceMs?: number;
  signal?: AbortSignal;
  /** Every chunk as it arrives (unbounded), for progress streaming. */
  onOutput?: (chunk: string, stream: 'stdout' | 'stderr') => void;
}

export interface Bind {
  source: string;
  target: string;
  writable?: boolean;
}

export interface ProcessResult {
  exitCode: number | null;
  /** The signal that ended the command's shell, e.g. `SIGTERM` after a timeout. */
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
  /** Combined stdout and stderr in arrival order; a marker line stands where bytes were dropped. */
  output: string;
  droppedBytes: number;
  /** stdout alone, when the request set `captureStdout`. */
  stdout?: Buffer;
  /** The shell could not find the command (exit 127), or the argv's program does not exist. */
  notFound: boolean;
}

export interface ProcessRunner {
  run(request: ProcessRequest): Promise<ProcessResult>;
  /**
   * Bind these paths read-only into every isolated command of this process (this runner's and the
   * migration child's) until the returned release: the TDD lane's git directory during a run.
   * Absent where nothing can be bound; the lane's `.git` guard still compares them.
   */
  protect?(paths: readonly string[]): () => void;
  /**
   * Cover `dir` with an empty folder for every command this process isolates from now on, except
   * one given it (in `writable`), until the returned release: a proof's own temporary folder.
   * Absent where nothing can be hidden.
   */
  hide?(dir: string): () => void;
  /**
   * Cover a proof's tree for every command this process isolates from now on but its own suite (given
   * it in `writable`) and the migration child, until the returned release. Absent where nothing can be hidden.
   */
  hideProofTree?(dir: string): () => void;
  /** Whether isolated commands can be given `binds` (bubblewrap); absent: they cannot. */
  canBind?(): boolean;
}
