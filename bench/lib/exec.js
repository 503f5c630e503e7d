/** Child processes: run a command to completion, collecting output; tracked for cleanup. */
import { spawn } from 'node:child_process';
import { track } from './cleanup.js';

export function run(cmd, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = track(spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options }));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve({ stdout, stderr });
      else {
        const err = new Error(`${cmd} ${signal ? `killed by ${signal}` : `exited with ${code}`}: ${(stderr || stdout).trim().slice(0, 800)}`);
        err.code = code;
        err.stdout = stdout;
        err.stderr = stderr;
        reject(err);
      }
    });
  });
}

/** Run a bash snippet with `set -euo pipefail`; extra arguments become $1, $2, … (no quoting games). */
export function bash(script, args = [], options = {}) {
  return run('bash', ['-c', `set -euo pipefail\n${script}`, 'bench', ...args], options);
}
