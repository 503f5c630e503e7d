/** The local ProcessRunner as the process tests call it: in `cwd`, the allow-listed environment, 10 s, 64 KiB of output. */
import { childEnv } from '../../src/core/child-env.js';
import type { ProcessRequest } from '../../src/ports/process.js';
import { localProcessRunner } from '../../src/process/runner.js';

export function runnerIn(cwd: () => string) {
  return (command: ProcessRequest['command'], options: Partial<ProcessRequest> = {}) =>
    localProcessRunner.run({
      command,
      cwd: cwd(),
      env: childEnv(),
      timeoutMs: 10_000,
      maxOutputBytes: 64 * 1024,
      ...options,
    });
}
