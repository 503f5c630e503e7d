/** `consort check`: the PR lane from the command line (the Action's `check` mode runs the same lane). */
import { Command } from 'commander';
import { writeFile } from 'node:fs/promises';
import { openProvider, parseProviderName } from '../../branches/factory.js';
import { loadConfig } from '../../config/load.js';
import type { ConsortConfig } from '../../config/schema.js';
import { ConsortError } from '../../core/errors.js';
import { defaultBase, headCommit, isGitRepo, resolveCommit } from '../../git/repo.js';
import { planCheck, runCheck, type CheckSide } from '../../lanes/check/run.js';
import { commitSide, EMPTY_SIDE, workingTreeSide } from '../../lanes/check/sides.js';
import { renderCheckMarkdown } from '../../report/markdown.js';
import { renderCheckTerminal } from '../../report/terminal.js';
import type { CliContext } from '../context.js';
import { VERSION } from '../version.js';

type Ctx = (cmd: Command) => CliContext;

interface CheckFlags {
  base?: string; head?: string; pr?: string; config?: string; markdown?: string;
  dryRun?: boolean; keepBranches?: boolean; cleanup?: boolean; rebuildBaseline?: boolean; verbose?: boolean;
}

async function side(root: string, ref: string, config: ConsortConfig): Promise<CheckSide> {
  return commitSide(root, ref, await resolveCommit(root, ref), config);
}

/** Base and head as the user asked, with sensible defaults: merge-base with the default branch, and the working tree. */
export async function resolveSides(root: string, config: ConsortConfig, flags: CheckFlags, log: (m: string) => void): Promise<{ base: CheckSide; head: CheckSide }> {
  const git = await isGitRepo(root);
  let base: CheckSide;
  if (flags.base) base = await side(root, flags.base, config);
  else if (git) {
    const d = await defaultBase(root).catch(() => undefined);
    if (d) base = await commitSide(root, d.ref, d.sha, config);
    else {
      log('No default branch to compare with: every migration counts as new (pass --base <ref> to compare).');
      base = EMPTY_SIDE;
    }
  } else {
    log('Not a git repository: every migration counts as new.');
    base = EMPTY_SIDE;
  }
  if (flags.head) return { base, head: await side(root, flags.head, config) };
  return { base, head: await workingTreeSide(root, 'working tree', git ? await headCommit(root) : null, config) };
}

export function checkCommand(ctx: Ctx): Command {
  return new Command('check')
    .description("check a change's migrations on a fresh database branch: plan, apply, lint, reversibility, schema diff, your suite")
    .option('--base <ref>', 'what the change is compared with (default: merge-base with origin/HEAD, main or master)')
    .option('--head <ref>', 'the change (default: the working tree)')
    .option('--pr <number>', 'pull request number (names the branch pr-<n>)')
    .option('--config <path>', 'configuration file (default: .github/consort.yml or consort.config.json)')
    .option('--json <file>', 'write the CheckReport JSON to <file> (- for stdout)')
    .option('--markdown <file>', 'write the markdown report (PR comment / job summary) to <file>')
    .option('--dry-run', 'print the plan and touch nothing')
    .option('--keep-branches', 'keep the temporary branches too (for debugging)')
    .option('--cleanup', 'delete the PR branch at the end as well')
    .option('--rebuild-baseline', 'build the baseline from base alone when the parent branch is ahead of base')
    .option('--verbose', "stream the suite's output to stderr")
    .action(async (flags: CheckFlags, cmd: Command) => {
      const c = ctx(cmd);
      const { config, source } = await loadConfig(c.root, flags.config ? { path: flags.config } : {});
      const pr = flags.pr === undefined ? null : Number(flags.pr);
      if (pr !== null && (!Number.isInteger(pr) || pr <= 0)) throw new ConsortError('invalid-input', `--pr must be a positive number, got "${flags.pr}".`);
      const log = (m: string) => c.io.err(m);
      const { base, head } = await resolveSides(c.root, config, flags, log);
      const providerName = parseProviderName(c.env.CONSORT_PROVIDER ? c.providerName : (cmd.optsWithGlobals().provider ?? config.database.provider));
      const provider = await openProvider({
        provider: providerName, projectRoot: c.root, env: c.env, log,
        ...(c.namespace ?? config.database.namespace ? { namespace: (c.namespace ?? config.database.namespace)! } : {}),
      });
      try {
        const input = {
          workspace: c.root, config, configSource: source, base, head, pr, provider, env: c.env, toolVersion: VERSION,
          keepBranches: flags.keepBranches === true, cleanup: flags.cleanup === true, rebuildBaseline: flags.rebuildBaseline === true,
          log, ...(flags.verbose ? { onSuiteOutput: (s: string) => process.stderr.write(s) } : {}),
        };
        if (flags.dryRun) {
          const plan = await planCheck(input);
          if (c.jsonFile) await emit(c, c.jsonFile, JSON.stringify(plan, null, 2));
          else c.io.out(renderPlan(plan));
          c.setExitCode(plan.ok ? 0 : 1);
          return;
        }
        const report = await runCheck(input);
        if (c.jsonFile) await emit(c, c.jsonFile, JSON.stringify(report, null, 2));
        if (flags.markdown) await writeFile(flags.markdown, renderCheckMarkdown(report));
        if (c.jsonFile !== '-') c.io.out(renderCheckTerminal(report, { color: process.stdout.isTTY === true && !c.env.NO_COLOR }));
        c.setExitCode(report.conclusion === 'success' ? 0 : 1);
      } finally {
        await provider.close();
      }
    });
}

async function emit(c: CliContext, file: string, text: string): Promise<void> {
  if (file === '-') c.io.out(text);
  else await writeFile(file, `${text}\n`);
}

function renderPlan(plan: Awaited<ReturnType<typeof planCheck>>): string {
  const lines = [`Plan (dry run, nothing touched):`];
  lines.push(`  new migrations: ${plan.newMigrations.length ? plan.newMigrations.join(', ') : 'none'}`);
  for (const p of plan.problems) lines.push(`  ✗ ${p.kind}: ${'file' in p ? p.file : p.migrations.join(', ')}${'suggestedFile' in p ? ` → rename to ${p.suggestedFile}` : ''}`);
  lines.push(`  baseline: ${plan.baseline} (reused if it exists)`, `  PR branch: ${plan.branch} (created or reset)`, `  temporary: ${plan.temporaryBranches.join(', ')} (removed at the end)`);
  return lines.join('\n');
}

