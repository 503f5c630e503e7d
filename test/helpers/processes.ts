/**
 * Processes found by what they run, not by pid: a command isolated in a PID namespace writes pids
 * of that namespace (`$!` there is not the machine's), so a test marks the process with an
 * argument no other process on the machine has and looks for it in every /proc/<pid>/cmdline.
 */
import { randomInt } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';

/** Live processes on the machine whose command line holds `arg`, or an argument it accepts (zombies have none). */
export async function processesRunning(arg: string | ((arg: string) => boolean)): Promise<number> {
  const matches = typeof arg === 'string' ? (a: string) => a === arg : arg;
  let n = 0;
  for (const pid of (await readdir('/proc')).filter((d) => /^\d+$/.test(d))) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.split('\0').some(matches)) n++;
  }
  return n;
}

/** A `sleep` duration (about `seconds`) no other process on the machine is sleeping. */
export const uniqueSleep = (seconds: number): string => `${seconds}.${randomInt(100_000, 999_999)}`;
