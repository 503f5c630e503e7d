/**
 * The Codex SDK takes only an executable path, so Consort writes a launcher script that starts the
 * CLI inside the turn's isolation, and the SDK starts that script in Consort's process, outside any
 * sandbox (src/agents/isolated-cli.ts). An isolated command already running when it is written (the
 * migration child lives across turns, and runs agents' migrations) can write every folder the user
 * can under `--dev-bind / /`: if it can rewrite the script, what it writes runs as the conductor,
 * outside the PID namespace (its `/proc/$PPID/environ` holds the runner's tokens).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { codexLauncher } from '../../src/agents/isolated-cli.js';
import { childEnv } from '../../src/core/child-env.js';
import { isolationKind } from '../../src/process/isolate.js';
import { localProcessRunner } from '../../src/process/runner.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'consort-codex-launcher-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Only bubblewrap hides folders from an isolated command (docs/security.md).
(isolationKind() === 'bwrap' ? it : it.skip)(
  'an isolated command running while the Codex launcher is written cannot rewrite it',
  async () => {
    const named = path.join(dir, 'launcher-path');
    // As a migration's code could: started before the turn, wait for the launcher, rewrite it.
    const rewriting = localProcessRunner.run({
      command: `while [ ! -s '${named}' ]; do sleep 0.05; done; printf '#!/bin/sh\\necho planted\\n' > "$(cat '${named}')"`,
      cwd: dir,
      env: childEnv(),
      isolate: true,
      timeoutMs: 20_000,
      maxOutputBytes: 10_000,
    });
    const cli = path.join(dir, 'cli.js');
    writeFileSync(cli, "console.log('the real CLI')\n");
    const launcher = await codexLauncher(cli);
    try {
      writeFileSync(named, launcher.path);
      expect((await rewriting).timedOut).toBe(false);
      // As the SDK starts it: by its path, in Consort's process.
      const r = await localProcessRunner.run({
        command: [launcher.path],
        cwd: dir,
        env: { ...childEnv(), ...launcher.env },
        maxOutputBytes: 10_000,
      });
      expect(r.output.trim()).toBe('the real CLI');
    } finally {
      await launcher.dispose();
    }
  },
);
