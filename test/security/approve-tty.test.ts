/**
 * A local approval is a person at a terminal: a process started the way a turn starts its
 * command (its own session, no stdin) has no controlling terminal, so `consort approve`'s
 * confirmation cannot be given by it — not during the turn, and not by a daemon it left behind.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const CONFIRM = fileURLToPath(new URL('../../lib/src/cli/confirm.js', import.meta.url));

it("a process in a turn's session cannot confirm an approval", async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'consort-tty-'));
  try {
    const out = path.join(dir, 'out.txt');
    const script = `import { terminalConfirm } from ${JSON.stringify(CONFIRM)};
import { writeFileSync } from 'node:fs';
terminalConfirm('approve? ', 'yes').then((ok) => writeFileSync(${JSON.stringify(out)}, 'confirmed: ' + ok), (e) => writeFileSync(${JSON.stringify(out)}, 'refused: ' + e.message));`;
    // As src/process/runner.ts starts a turn: detached (a new session), stdin closed.
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      detached: true,
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    await new Promise((resolve) => child.on('exit', resolve));
    expect(await readFile(out, 'utf8')).toBe(
      'refused: consort approve needs a person at an interactive terminal to confirm the approval.',
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, 30_000);
