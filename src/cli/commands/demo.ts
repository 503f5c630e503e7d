/**
 * `consort demo`: the PR lane on the example shop, with nothing to set up. Each scenario is a
 * throwaway git repository (main + a change) checked on the embedded PostgreSQL, exactly as
 * `consort check` would check a pull request; the demo passes when every scenario concludes as
 * it should (the clean change passes, the broken ones are caught by the right stage). Run inside
 * someone's project, it leaves no branch of its own behind in their branch list.
 */
import { Command } from 'commander';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { ConsortError } from '../../core/errors.js';
import { ROOT_BRANCH } from '../../core/names.js';
import { PACKAGE_ROOT, SCENARIOS, SHOP_DIR } from '../../demo/scenarios.js';
import type { Ctx } from '../context.js';
import { printJson, table } from '../output.js';
import { usageError } from '../usage.js';
import { VERSION } from '../version.js';
import { serverNotice, serverRunning } from './server-notice.js';

/** The namespace the demo's branches live in, beside the project's (see the check demo below). */
const DEMO_NAMESPACE = 'consort_demo';

interface Row {
  scenario: string;
  expected: string;
  got: string;
  failedStage: string;
  ok: boolean;
  seconds: number;
}

/** The closing line says only what the scenarios that ran showed. */
/**
 * Where a person goes after the demo: the same check on their own project. The demo runs from a
 * clone, and until the package is on the npm registry the install is this clone's tarball.
 */
export const DEMO_NEXT = [
  'Next, in your own node-pg-migrate project:',
  '  npm i -D consort-db',
  `    (not on the npm registry yet? run \`npm pack\` in ${PACKAGE_ROOT.replace(/\/$/, '')}, then npm i -D ${path.join(PACKAGE_ROOT, `consort-db-${VERSION}.tgz`)})`,
  '  npx consort check            # your branch against main, on a fresh database branch',
  '  npx consort demo branching   # a one-minute tour of database branches',
  'The four scenarios are in examples/shop/scenarios/; the README shows the GitHub Action and App.',
].join('\n');

export function demoVerdict(rows: readonly Row[]): string {
  if (!rows.every((r) => r.ok)) return 'Some scenarios did not conclude as expected (see above).';
  const broken = rows.filter((r) => !r.expected.startsWith('success')).length;
  const clean = rows.length - broken;
  const caught = broken === 0 ? '' : broken === 1 ? 'caught the broken change' : `caught all ${broken} broken changes`;
  const passed = clean === 0 ? '' : clean === 1 ? 'passed the clean one' : `passed all ${clean} clean ones`;
  if (!caught) return `Consort ${clean === 1 ? 'passed the clean change' : `passed all ${clean} clean changes`}.`;
  return `Consort ${caught}${passed ? ` and ${passed}` : ''}.`;
}

/** The example shop and the jest its suite runs live in a clone of the repository, not in the npm package. */
async function requireExampleShop(): Promise<void> {
  const exists = (p: string) =>
    access(p).then(
      () => true,
      () => false,
    );
  if (!(await exists(SHOP_DIR)) || !(await exists(path.join(PACKAGE_ROOT, 'node_modules', 'jest')))) {
    throw new ConsortError(
      'invalid-input',
      'The check demo runs the example shop of a Consort clone (its migrations and jest suite), which the npm package leaves out.',
      {
        hint: 'Try `npx consort demo branching` here, or in a clone of the repository: npm ci && npm run demo',
      },
    );
  }
}

export function demoCommand(ctx: Ctx): Command {
  return new Command('demo')
    .description('run the PR check lane on the example shop (or `demo branching` for a tour of database branches)')
    .argument('[what]', 'check or branching', 'check')
    .option(
      '--scenario <names>',
      `comma-separated scenarios (default: all): ${SCENARIOS.map((s) => s.name).join(', ')}`,
    )
    .action(async (what: string, o: { scenario?: string }, cmd: Command) => {
      if (what !== 'check' && what !== 'branching')
        throw usageError(`Unknown demo "${what}".`, 'Use `consort demo` or `consort demo branching`.');
      const wanted = o.scenario?.split(',').map((s) => s.trim()) ?? SCENARIOS.map((s) => s.name);
      const unknown = wanted.filter((w) => !SCENARIOS.some((s) => s.name === w));
      if (unknown.length)
        throw usageError(
          `Unknown scenario${unknown.length === 1 ? '' : 's'}: ${unknown.join(', ')}.`,
          `Choose from ${SCENARIOS.map((s) => s.name).join(', ')}.`,
        );
      const c = await ctx(cmd);
      if (what === 'check') await requireExampleShop();
      const wasRunning = c.providerName === 'local' ? await serverRunning(c) : true;
      if (what === 'branching') {
        const { branchingTour } = await import('./demo-branching.js');
        await branchingTour(c);
        return serverNotice(c, wasRunning);
      }
      const { openProvider } = await import('../../branches/factory.js');
      const { TemplateBranchProvider } = await import('../../branches/template-provider.js');
      const { loadConfig } = await import('../../config/load.js');
      const { scenarioRepo } = await import('../../demo/scenarios.js');
      const { planCheck } = await import('../../lanes/check/plan.js');
      const { runCheck } = await import('../../lanes/check/run.js');
      const { cliPorts } = await import('../ports.js');
      const ports = cliPorts(c);
      const { renderCheckTerminal } = await import('../../report/terminal.js');
      const { resolveSides } = await import('./check.js');
      const opened = await openProvider({
        provider: c.providerName,
        projectRoot: c.root,
        env: c.env,
        log: (m) => c.io.err(m),
      });
      // On a server Consort branches by database (local, postgres), the demo works in a namespace of
      // its own: the project's main may hold the project's own migrations, which the example's base
      // does not know ("Parent ahead"), and the project's branch list stays as it was.
      const aside = opened instanceof TemplateBranchProvider ? opened.inNamespace(DEMO_NAMESPACE) : undefined;
      const provider = aside ?? opened;
      const removeAside = () =>
        aside?.delete(ROOT_BRANCH, { recursive: true, terminateConnections: true }).catch(() => undefined);
      await removeAside(); // what a demo stopped half-way left
      const rows: Row[] = [];
      const before = new Set((await provider.list()).map((b) => b.name));
      const baselines = new Set<string>();
      // Ctrl-C (or SIGTERM) stops the scenario's check as `consort check` stops (its suite killed, its
      // temporary branches and scratch folders removed), then the demo removes its own branches and the
      // scenario's repository. Without it Node's default exit left both behind, and said nothing.
      const { onTermination, abortReason: abortReasonOf } = await import('../../lanes/check/cancel.js');
      const controller = new AbortController();
      let cancelled: string | undefined;
      const stopping = (sig: NodeJS.Signals) =>
        `${sig}: stopping the demo (its branches and temporary files are removed first; ${sig} again to exit at once)`;
      await onTermination(
        controller,
        async () => {
          try {
            for (const scenario of SCENARIOS.filter((s) => wanted.includes(s.name))) {
              if (controller.signal.aborted) break;
              c.io.err(`\n━━ scenario ${scenario.name}: ${scenario.about}`);
              const repo = await scenarioRepo(scenario.name);
              try {
                const { config, source } = await loadConfig(repo.dir);
                const { base, head } = await resolveSides(ports.git, repo.dir, config, { base: 'main' }, (m) =>
                  c.io.err(m),
                );
                const plan = await planCheck(
                  {
                    workspace: repo.dir,
                    config,
                    configSource: source,
                    base,
                    head,
                    pr: null,
                    env: c.env,
                    toolVersion: VERSION,
                    cleanup: true,
                  },
                  ports,
                );
                if (plan.baseline) baselines.add(plan.baseline);
                if (controller.signal.aborted) break;
                const report = await runCheck(plan, { ...ports, provider }, { signal: controller.signal });
                if (report.conclusion === 'cancelled') {
                  cancelled = report.cancelled?.reason ?? 'cancelled';
                  break;
                }
                const failed =
                  (Object.entries(report.stages) as [string, { status: string; blocking: boolean }][]).find(
                    ([, s]) => s.blocking && (s.status === 'failed' || s.status === 'error'),
                  )?.[0] ?? '-';
                const ok = report.conclusion === scenario.expect && (scenario.failingStage ?? '-') === failed;
                rows.push({
                  scenario: scenario.name,
                  expected: `${scenario.expect}${scenario.failingStage ? ` (${scenario.failingStage})` : ''}`,
                  got: `${report.conclusion}${failed !== '-' ? ` (${failed})` : ''}`,
                  failedStage: failed,
                  ok,
                  seconds: Math.round(report.durationMs / 100) / 10,
                });
                if (!c.json)
                  c.io.out(
                    `\n${renderCheckTerminal(report, { color: process.stdout.isTTY === true && !c.env.NO_COLOR })}`,
                  );
              } finally {
                await repo.dispose();
              }
            }
          } finally {
            // A pool refill a cancelled check left running (a copy of its baseline being made) is
            // waited for first: the namespace's removal beside it left that copy, or main, behind.
            if (provider instanceof TemplateBranchProvider) await provider.settled().catch(() => undefined);
            // The example's baselines are the demo's, not the project's: gone with it (kept if they were there before).
            if (aside) await removeAside();
            else
              for (const name of baselines) {
                if (!before.has(name))
                  await provider.delete(name, { recursive: true, terminateConnections: true }).catch(() => undefined);
              }
            await aside?.close();
            await opened.close();
          }
        },
        (m) => c.io.err(m),
        stopping,
      );
      if (cancelled === undefined && controller.signal.aborted) cancelled = abortReasonOf(controller.signal);
      if (cancelled !== undefined) {
        if (c.json) printJson(c.io, { ok: false, cancelled, scenarios: rows });
        else c.io.err(`Demo cancelled (${cancelled}): its branches and temporary files were removed.`);
        await serverNotice(c, wasRunning);
        c.setExitCode(cancelled === 'SIGINT' ? 130 : cancelled === 'SIGTERM' ? 143 : 1);
        return;
      }
      const allOk = rows.every((r) => r.ok);
      if (c.json) printJson(c.io, { ok: allOk, scenarios: rows });
      else {
        c.io.out(
          `\n${table([['SCENARIO', 'EXPECTED', 'GOT', 'TIME', ''], ...rows.map((r) => [r.scenario, r.expected, r.got, `${r.seconds}s`, r.ok ? '✓' : '✗ unexpected'])])}`,
        );
        c.io.out(`\n${demoVerdict(rows)}`);
        if (allOk) c.io.out(`\n${DEMO_NEXT}`);
      }
      await serverNotice(c, wasRunning);
      if (!allOk) c.setExitCode(1);
    });
}
