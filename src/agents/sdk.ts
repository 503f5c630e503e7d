/**
 * The agent SDKs that drive a CLI of their own — the Claude Agent SDK (its native `claude` binary, resolved from its platform package per its manifest.json) and the Codex
 * SDK (the `codex` binary of @openai/codex) — find that CLI next to their own files, so they cannot
 * live inside the bundled Action. Together they weigh ~800 MB, so they are optional peer
 * dependencies, not installed with Consort (the PR lane never needs them). They are loaded when a
 * turn needs them: from node_modules where the project installed them, else from the tools
 * directory, where the exact version package.json pins is installed once (per runner tool cache
 * in the Action), like the native tools.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConsortError } from '../core/errors.js';
import { pinnedDependency } from '../tools/pinned-versions.js';
import { resolvePlatformPackage } from '../tools/platform-packages.js';

export const CLAUDE_SDK = '@anthropic-ai/claude-agent-sdk';
export const CODEX_SDK = '@openai/codex-sdk';

export type ClaudeSdk = typeof import('@anthropic-ai/claude-agent-sdk');
export type CodexSdk = typeof import('@openai/codex-sdk');

const loaded = new Map<string, Promise<unknown>>();
/** Where loadFromTools found an SDK; one loaded from node_modules resolves from Consort's own location. */
const toolsDirs = new Map<string, string>();

/** The package's ESM entry point from its manifest (`exports["."]`: import, else default; else main). */
export async function entryOf(dir: string): Promise<string> {
  const manifest = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as {
    exports?: unknown;
    main?: string;
  };
  const root =
    typeof manifest.exports === 'object' && manifest.exports !== null
      ? (manifest.exports as Record<string, unknown>)['.']
      : manifest.exports;
  const pick =
    typeof root === 'string'
      ? root
      : typeof root === 'object' && root !== null
        ? ((root as Record<string, unknown>).import ?? (root as Record<string, unknown>).default)
        : undefined;
  const entry = typeof pick === 'string' ? pick : manifest.main;
  if (!entry)
    throw new ConsortError('tools-unavailable', `${dir} has no entry point.`, {
      hint: 'Delete the tools directory and run again.',
    });
  return path.join(dir, entry);
}

async function load(name: string, log: (m: string) => void): Promise<unknown> {
  try {
    // A variable specifier: bundlers leave it alone, Node resolves it from node_modules.
    const specifier: string = name;
    return await import(specifier);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw e;
  }
  log(sdkMissingMessage(name));
  return loadFromTools(name, log);
}

/** The pinned SDK from the tools directory, installed there first if missing (the bundled Action's path). */
export async function loadFromTools(
  name: string,
  log: (m: string) => void = () => undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<unknown> {
  const pkg = await resolvePlatformPackage({ name, version: pinnedDependency(name), via: name }, { log, env });
  toolsDirs.set(name, pkg.dir);
  return import(pathToFileURL(await entryOf(pkg.dir)).href);
}

/**
 * The Codex CLI's Node launcher (`@openai/codex/bin/codex.js`, which finds the native binary
 * and its helpers), resolved where the Codex SDK itself resolves it: next to the SDK in use.
 */
export function codexCliPath(): string {
  const dir = toolsDirs.get(CODEX_SDK);
  try {
    return createRequire(dir ? path.join(dir, 'package.json') : import.meta.url).resolve('@openai/codex/bin/codex.js');
  } catch (cause) {
    throw new ConsortError(
      'tools-unavailable',
      'The Codex CLI (@openai/codex) is not installed next to the Codex SDK.',
      {
        hint: `Install it with the SDK (npm i -D ${CODEX_SDK}), or delete the tools directory and run again.`,
        cause,
      },
    );
  }
}

/** Said once, when a backend's SDK is not in the project and is fetched into the tools directory. */
export function sdkMissingMessage(name: string): string {
  let pin = '';
  try {
    pin = `@${pinnedDependency(name)}`;
  } catch {
    // The install below reports a missing pin; the advice stands without a version.
  }
  return `${name} is not installed in this project (it is optional: ~400 MB, only the ${name === CLAUDE_SDK ? 'claude' : 'codex'} backend needs it); fetching it once into the tools directory. To keep it with the project instead: npm i -D ${name}${pin}`;
}

/** The default log is stderr: the fetch takes a minute and the user must learn how to avoid it. */
export function loadSdk<T>(
  name: typeof CLAUDE_SDK | typeof CODEX_SDK,
  log: (m: string) => void = (m) => process.stderr.write(`${m}\n`),
): Promise<T> {
  let p = loaded.get(name);
  if (p === undefined) {
    p = load(name, log);
    loaded.set(name, p);
    p.catch(() => loaded.delete(name));
  }
  return p as Promise<T>;
}
