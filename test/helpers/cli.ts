/** The CLI run in this process (src/cli/main.ts `runCli`), its output kept: exit code, stdout, stderr. */
import { runCli } from '../../src/cli/main.js';

export async function captureCli(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(
    args,
    {
      out: (s) => {
        stdout += `${s}\n`;
      },
      err: (s) => {
        stderr += `${s}\n`;
      },
    },
    env,
  );
  return { code, stdout, stderr };
}
