/**
 * Which consort CLI the extension starts. The README installs Consort into the project
 * (`npm i -D consort-db`), where nothing puts `consort` on PATH: `npx consort` finds it in
 * `node_modules`. So, while the `consort.cli` setting keeps its default, the extension looks for the
 * project's copy the way npx does — in `node_modules` of the folder and each folder above it — and
 * runs its `bin/consort.js` with `consort.node`; only without one does it start `consort` from PATH.
 * No `vscode` import here: the rule is tested on its own.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';

export const DEFAULT_CLI = 'consort';

/** The project's installed CLI at or above `dir`, or undefined. */
export function projectCli(dir: string, exists: (file: string) => boolean = existsSync): string | undefined {
  for (let at = path.resolve(dir); ;) {
    const bin = path.join(at, 'node_modules', 'consort-db', 'bin', 'consort.js');
    if (exists(bin)) return bin;
    const up = path.dirname(at);
    if (up === at) return undefined;
    at = up;
  }
}

/** The program and the arguments before the command's own, from the settings and the folder it runs in. */
export function resolveCli(
  settings: { cli?: string; node?: string },
  cwd: string | undefined,
  exists: (file: string) => boolean = existsSync,
): { file: string; prefix: string[] } {
  const node = settings.node || 'node';
  const cli = settings.cli || DEFAULT_CLI;
  if (/\.(m?js)$/.test(cli)) return { file: node, prefix: [cli] };
  const local = cli === DEFAULT_CLI && cwd !== undefined ? projectCli(cwd, exists) : undefined;
  return local ? { file: node, prefix: [local] } : { file: cli, prefix: [] };
}
