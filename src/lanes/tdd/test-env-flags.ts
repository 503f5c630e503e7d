/**
 * Code that behaves differently under test is the cheapest way to a green proof that means
 * nothing (`if (process.env.JEST_WORKER_ID) return expected`). The merge gate flags every line the
 * feature added to production code (not tests, not Consort's records) that looks for a test
 * environment, so the person approving sees it; proxy mode does not pass a flagged gate.
 */
import { matchesAny } from '../../core/glob.js';
import { DEFAULT_TEST_GLOBS } from '../../conductor/roles.js';
import type { Workspace } from '../../ports/workspace.js';

const LOOKS_FOR_TEST_ENV: readonly RegExp[] = [
  /\bJEST_WORKER_ID\b/,
  /\bVITEST(?:_WORKER_ID|_POOL_ID)?\b/,
  /\bPYTEST_CURRENT_TEST\b/,
  /\bMOCHA_\w+/,
  /\bCONSORT_(?:ROLE|STEP|TURN|ITEM)\w*/,
  /NODE_ENV['"`\]]*\s*[!=]==?\s*['"`]test['"`]/,
  /['"`]test['"`]\s*[!=]==?\s*process\.env(?:\.NODE_ENV|\[['"`]NODE_ENV['"`]\])/,
  /typeof\s+(?:jest|vi|describe|it|expect)\s*[!=]==?\s*['"`]undefined['"`]/,
  /\bglobalThis\.(?:jest|vi|expect)\b/,
  /\bimport\.meta\.vitest\b/,
];

export async function testEnvironmentFlags(
  ws: Workspace,
  base: string,
  tests: readonly string[] = DEFAULT_TEST_GLOBS,
): Promise<string[]> {
  const flags: string[] = [];
  for (const { file, line, text } of await ws.diffAdded(base)) {
    if (file.startsWith('.consort/') || matchesAny(file, tests)) continue;
    if (LOOKS_FOR_TEST_ENV.some((re) => re.test(text)))
      flags.push(`${file}:${line} looks for a test environment: ${text.trim().slice(0, 160)}`);
  }
  return flags;
}
