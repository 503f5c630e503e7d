/**
 * `consort demo`: the PR lane on the example shop, with nothing to set up. Each scenario is a
 * throwaway git repository (main + a change) checked on the embedded PostgreSQL, exactly as
 * `consort check` would check a pull request; the demo passes when every scenario concludes as
 * it should (the clean change passes, the broken ones are caught by the right stage).
 */
import { Command } from 'commander';
import { openProvider } from '../../branches/factory.js';
import { loadConfig } from '../../config/load.js';
import { ConsortError } from '../../core/errors.js';
import { SCENARIOS, scenarioRepo } from '../../demo/scenarios.js';
import { runCheck } from '../../lanes/check/run.js';
import { renderCheckTerminal } from '../../report/terminal.js';
import type { CliContext } from '../context.js';
import { printJson, table } from '../output.js';
import { VERSION } from '../version.js';
import { branchingTour } from './demo-branching.js';
import { resolveSides } from './check.js';

type Ctx = (cmd: Command) => CliContext;

export function demoCommand(ctx: Ctx): Command {
  return new Command('demo')
    .description('run the PR check lane on the example shop (or `demo branching` for a tour of database branches)')
    .argument('[what]', 'check (default) or branching', 'check')
    .option('--scenario <names>', `comma-separated scenarios: ${SCENARIOS.map((s) => s.name).join(', ')}`)
    .action(async (what: string, o: { scenario?: string }, cmd: Command) => {
      const c = ctx(cmd);
      if (what === 'branching') return branchingTour(c);
      if (what !== 'check') throw new ConsortError('invalid-input', `Unknown demo "${what}".`, { hint: 'Use `consort demo` or `consort demo branching`.' });
      const wanted = o.scenario?.split(',').map((s) => s.trim()) ?? SCENARIOS.map((s) => s.name);
      const unknown = wanted.filter((w) => !SCENARIOS.some((s) => s.name === w));
      if (unknown.length) throw new ConsortError('invalid-input', `Unknown scenario(s): ${unknown.join(', ')}.`, { hint: `Choose from ${SCENARIOS.map((s) => s.name).join(', ')}.` });
      const provider = await openProvider({ provider: c.providerName, projectRoot: c.root, env: c.env, log: (m) => c.io.err(m) });
      const rows: { scenario: string; expected: string; got: string; failedStage: string; ok: boolean; seconds: number }[] = [];
      try {
        for (const scenario of SCENARIOS.filter((s) => wanted.includes(s.name))) {
          c.io.err(`\n━━ scenario ${scenario.name}: ${scenario.about}`);
          const repo = await scenarioRepo(scenario.name);
          try {
            const { config, source } = await loadConfig(repo.dir);
            const { base, head } = await resolveSides(repo.dir, config, { base: 'main' }, (m) => c.io.err(m));
            const report = await runCheck({
              workspace: repo.dir, config, configSource: source, base, head, pr: null, provider, env: c.env, toolVersion: VERSION,
              cleanup: true, log: (m) => c.io.err(m),
            });
            const failed = (Object.entries(report.stages) as [string, { status: string; blocking: boolean }][])
              .find(([, s]) => s.blocking && (s.status === 'failed' || s.status === 'error'))?.[0] ?? '-';
            const ok = report.conclusion === scenario.expect && (scenario.failingStage ?? '-') === failed;
            rows.push({ scenario: scenario.name, expected: `${scenario.expect}${scenario.failingStage ? ` (${scenario.failingStage})` : ''}`, got: `${report.conclusion}${failed !== '-' ? ` (${failed})` : ''}`, failedStage: failed, ok, seconds: Math.round(report.durationMs / 100) / 10 });
            if (!c.json) c.io.out(`\n${renderCheckTerminal(report, { color: process.stdout.isTTY === true && !c.env.NO_COLOR })}`);
          } finally {
            await repo.dispose();
          }
        }
      } finally {
        await provider.close();
      }
      const allOk = rows.every((r) => r.ok);
      if (c.json) printJson(c.io, { ok: allOk, scenarios: rows });
      else {
        c.io.out(`\n${table([['SCENARIO', 'EXPECTED', 'GOT', 'TIME', ''], ...rows.map((r) => [r.scenario, r.expected, r.got, `${r.seconds}s`, r.ok ? '✓' : '✗ unexpected'])])}`);
        c.io.out(allOk ? '\nConsort caught every broken change and passed the clean one.' : '\nSome scenarios did not conclude as expected (see above).');
      }
      if (!allOk) c.setExitCode(1);
    });
}
