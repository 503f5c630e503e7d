/**
 * Run a repository's migration code where it cannot read Consort's secrets: a child Node process
 * (apply-child.ts) with a complete environment built from the allow-list (src/core/child-env.ts),
 * which applies the migrations exactly as this process would and sends the ApplyResult back over
 * IPC. The child's own output is kept only to explain a child that dies without answering. It
 * starts in a PID namespace of its own where one can be made (src/suite/isolate.ts): it cannot
 * read Consort's `/proc/<ppid>/environ`, and whatever a migration started ends with it (else every
 * process carrying its marker is killed once it exits).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnv } from '../core/child-env.js';
import { ConsortError, type ErrorCode } from '../core/errors.js';
import { isolation } from '../suite/isolate.js';
import type { MigrationEngine } from './engine.js';
import type { ApplyOptions, ApplyResult } from './runner.js';

export interface ChildRequest {
  options: Omit<ApplyOptions, 'engine'>;
  /** The engine to load in the child (null: the bundled one). */
  engine: Omit<MigrationEngine, 'runner'> | null;
}

export type ChildReply =
  { ok: true; result: ApplyResult } | { ok: false; error: { code: ErrorCode | null; message: string; hint?: string } };

const TAIL = 4000;

/**
 * The child's script: next to this module when built (lib/, or dist/ where the Action's bundle has
 * it as its own file), else the built copy in lib/ (this module run from src/ by the tests).
 */
function childScript(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [
    path.join(here, 'apply-child.js'),
    path.join(here, '..', '..', 'lib', 'src', 'migrations', 'apply-child.js'),
  ];
  const found = candidates.find((c) => existsSync(c));
  if (!found) {
    throw new ConsortError(
      'internal',
      `Cannot find the migration runner's child script (looked at ${candidates.join(', ')}).`,
      {
        hint: 'Build Consort (npm run build), or reinstall it: lib/src/migrations/apply-child.js is missing.',
      },
    );
  }
  return found;
}

export async function applyInChild(options: ApplyOptions): Promise<ApplyResult> {
  const { engine, ...rest } = options;
  const request: ChildRequest = {
    options: {
      ...rest,
      dir: path.resolve(rest.dir),
      ...(rest.relativeTo ? { relativeTo: path.resolve(rest.relativeTo) } : {}),
    },
    engine: engine
      ? {
          version: engine.version,
          source: engine.source,
          dir: engine.dir,
          ...(engine.entry ? { entry: engine.entry } : {}),
          ...(engine.tsLoader ? { tsLoader: engine.tsLoader } : {}),
        }
      : null,
  };
  // NODE_OPTIONS is the operator's (a TypeScript loader such as `--import tsx`, which TS migrations
  // needed in process too); the child is the repository's code either way, so it carries no secret.
  const sandbox = isolation();
  const env = childEnv(sandbox.env, { secrets: ['NODE_OPTIONS'] });
  const [program, args] = sandbox.argv(`exec ${shellQuote(process.execPath)} ${shellQuote(childScript())}`);
  const child = spawn(program, args, { env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-TAIL);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const reply = await new Promise<ChildReply | undefined>((resolve, reject) => {
    let answer: ChildReply | undefined;
    child.once('message', (m) => {
      answer = m as ChildReply;
    });
    child.once('error', reject);
    child.once('exit', () => resolve(answer));
    child.send(request);
  }).finally(() => sandbox.sweep());
  if (reply === undefined) {
    throw new ConsortError(
      'internal',
      `The migration process ended without a result: ${output.trim() || 'no output'}`,
      {
        hint: 'A migration may have ended the process (process.exit) or crashed Node; run it alone to see.',
      },
    );
  }
  if (reply.ok) return reply.result;
  const { code, message, hint } = reply.error;
  if (code === null) throw new Error(message);
  throw new ConsortError(code, message, hint === undefined ? {} : { hint });
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}
