/**
 * The Node binary a GitHub runner would start for this Action: `runs.using: node24` in action.yml means
 * Node 24, whatever the machine's own Node is. The machine's Node serves when it is that major; otherwise
 * the binary `npm run setup:node24` (run by `pretest`) put in the user's cache. Tests never download.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ENSURE = fileURLToPath(new URL('../../scripts/ensure-node24.mjs', import.meta.url));
const found = new Map<string, string>();

export function nodeForRunsUsing(using: string): string {
  const major = /^node(\d+)$/.exec(using)?.[1];
  if (!major) throw new Error(`action.yml runs.using is ${JSON.stringify(using)}: not a JavaScript action runtime`);
  if (process.versions.node.split('.')[0] === major) return process.execPath;
  if (major !== '24')
    throw new Error(
      `No Node ${major} binary for the dist/ tests (only node24 is provided by scripts/ensure-node24.mjs)`,
    );
  let bin = found.get(major);
  if (!bin) {
    try {
      bin = execFileSync(process.execPath, [ENSURE, '--no-install'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }).trim();
    } catch (e) {
      throw new Error(
        `No Node 24 binary for the dist/ tests: run \`npm run setup:node24\` once (npm test does it in pretest).\n${(e as { stderr?: string }).stderr ?? ''}`,
      );
    }
    found.set(major, bin);
  }
  return bin;
}
