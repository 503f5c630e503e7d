/**
 * The claude and codex backends drive a CLI of their own: the SDK runs in Consort's process and
 * spawns that CLI, which runs the model's tools (a shell, edits). The CLI is started in the same
 * isolation as a `command` agent's turn (src/process/isolate.ts): a PID namespace of its own
 * (bubblewrap, else util-linux `unshare`) or, where none can be made, the marker sweep after the
 * turn; under bubblewrap the turn's read-only folders (the proofs' pristine dependency copy) are
 * bound read-only. The Claude Agent SDK takes a spawn function (`spawnClaudeCodeProcess`); the
 * Codex SDK takes only an executable path, so a wrapper script that starts the real CLI inside
 * the isolation stands in for it.
 */
import type { SpawnedProcess, SpawnOptions } from '@anthropic-ai/claude-agent-sdk';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isolatedPrivateDir, isolation, isolationKind, type Isolation } from '../process/isolate.js';

function isolationFor(readOnly: readonly string[] | undefined): Isolation {
  return isolation(isolationKind(), readOnly ? { readOnly } : {});
}

export interface ClaudeSpawner {
  /** For `spawnClaudeCodeProcess`: the CLI the SDK would start, started inside the isolation. */
  spawn: (options: SpawnOptions) => SpawnedProcess;
  /** After the turn: ends whatever still carries the turn's marker (the namespace ends by itself). */
  dispose: () => void;
}

export function claudeSpawner(readOnly?: readonly string[]): ClaudeSpawner {
  const sandbox = isolationFor(readOnly);
  return {
    spawn: (o) => {
      const [program, args] = sandbox.wrap([o.command, ...o.args]);
      // As the SDK's own spawn does, but stderr is not read by the SDK for a custom spawn: dropped.
      return spawn(program, args, {
        cwd: o.cwd,
        env: { ...o.env, ...sandbox.env },
        signal: o.signal,
        stdio: ['pipe', 'pipe', 'ignore'],
        windowsHide: true,
      });
    },
    dispose: () => void sandbox.sweep(),
  };
}

export interface CodexLauncher {
  /** For `codexPathOverride`: a script that starts the Codex CLI inside the isolation. */
  path: string;
  /** Variables the CLI's environment must carry (the sweep's marker). */
  env: Record<string, string>;
  dispose: () => Promise<void>;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** `cli`: the Codex CLI's Node launcher (`@openai/codex/bin/codex.js`), run with this Node. */
export async function codexLauncher(cli: string, readOnly?: readonly string[]): Promise<CodexLauncher> {
  const sandbox = isolationFor(readOnly);
  // The SDK starts this script outside any sandbox: it is written where no isolated command (a
  // migration child started before this turn, say) can rewrite it.
  const dir = await mkdtemp(path.join(isolatedPrivateDir(), 'codex-'));
  const file = path.join(dir, 'codex');
  const [program, args] = sandbox.wrap([process.execPath, cli]);
  await writeFile(file, `#!/bin/sh\nexec ${[program, ...args].map(quote).join(' ')} "$@"\n`, { mode: 0o700 });
  return {
    path: file,
    env: sandbox.env,
    dispose: async () => {
      sandbox.sweep();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
