/**
 * `mode: check` — the PR lane on a pull request, merge group or push: the same plan and run as
 * `consort check`, with the Action's adapters (built in ../ports.ts; git sides from the event, tools installed on the
 * runner, masked secrets) and its reporting (summary, annotations, sticky comment, outputs).
 */
import * as core from '@actions/core';
import { VERSION } from '../../cli/version.js';
import { loadConfig } from '../../config/load.js';
import type { ConsortConfig } from '../../config/schema.js';
import { ConsortError } from '../../core/errors.js';
import { onTermination } from '../../lanes/check/cancel.js';
import { planCheck, type CheckSide } from '../../lanes/check/plan.js';
import { runCheck } from '../../lanes/check/run.js';
import { verdict } from '../../report/content.js';
import { suiteEnv, type ActionContext } from '../context.js';
import type { ActionInputs } from '../inputs.js';
import { checkPorts } from '../ports.js';
import { openActionProvider, prepareTools, providerName } from '../provider.js';
import { publishCheck } from '../publish.js';
import { scrub } from '../secrets.js';
import { commandQuoter } from '../workflow-commands.js';
import { actionSides } from '../sides.js';
import type { ModeResult } from './index.js';

/** The inputs that override the repository's configuration. */
export function applyInputs(config: ConsortConfig, inputs: ActionInputs): ConsortConfig {
  return {
    ...config,
    suite: inputs.suiteCommand !== undefined ? { ...config.suite, command: inputs.suiteCommand } : config.suite,
    lint: inputs.failOn !== undefined ? { ...config.lint, failOn: inputs.failOn } : config.lint,
  };
}

/** The `fail-on` input laid over the base's verdict settings too (they, not the change's file, judge the check). */
export function baseWithInputs(base: CheckSide, inputs: ActionInputs): CheckSide {
  const verdict = base.settings?.verdict;
  if (inputs.failOn === undefined || !verdict) return base;
  return {
    ...base,
    settings: { ...base.settings!, verdict: { ...verdict, lint: { ...verdict.lint, failOn: inputs.failOn } } },
  };
}

export async function checkMode(inputs: ActionInputs, ctx: ActionContext): Promise<ModeResult> {
  const ev = ctx.event;
  if (ev.kind === 'pull_request' && ev.target) {
    throw new ConsortError(
      'invalid-input',
      "mode: check does not run on pull_request_target: it would run the pull request's code (migrations, tests) with the base repository's secrets and a write token.",
      {
        hint: 'Trigger the check on pull_request; pull_request_target is fine for mode: cleanup.',
      },
    );
  }
  if (ev.kind === 'pull_request' && ev.action === 'closed') {
    core.info('The pull request is closed: nothing to check (run mode: cleanup on closed to delete its branch).');
    return { conclusion: 'success' };
  }
  const loaded = await loadConfig(ctx.workspace, inputs.config !== undefined ? { path: inputs.config } : {});
  const config = applyInputs(loaded.config, inputs);
  core.info(
    `Config: ${loaded.source ?? 'defaults (no .github/consort.yml)'}; suite: ${config.suite.command}; lint fails on: ${config.lint.failOn}`,
  );
  const ports = checkPorts();
  // The base's own copy of the configuration decides what the PR may not grant itself (check.migrationsRole).
  const found = await actionSides(ctx, config, (m) => core.info(m), ports.git, inputs.config);
  // The workflow's fail-on outranks both configurations; the base's decides the rest of the verdict.
  const sides = { ...found, base: baseWithInputs(found.base, inputs) };
  core.info(
    `Comparing ${sides.base.ref} (${sides.base.sha?.slice(0, 7) ?? 'nothing'}) with ${sides.head.ref} (${sides.head.sha?.slice(0, 7) ?? 'working tree'})`,
  );
  const plan = await planCheck(
    {
      workspace: ctx.workspace,
      config,
      configSource: loaded.source,
      base: sides.base,
      head: sides.head,
      pr: sides.pr,
      env: suiteEnv(process.env),
      toolVersion: VERSION,
      // Nothing closes a merge group's or a push's branch later: remove it at the end.
      cleanup: sides.pr === null,
      rebuildBaseline: inputs.rebuildBaseline,
    },
    ports,
  );
  await prepareTools(providerName(inputs, config), true);

  const provider = await openActionProvider(inputs, config, ctx);
  // A cancelled workflow (`cancel-in-progress`, the Cancel button) sends SIGINT, then SIGTERM:
  // the suite's process group is killed, temporary branches removed, conclusion `cancelled`.
  const controller = new AbortController();
  const quoteSuite = commandQuoter();
  try {
    const report = await onTermination(
      controller,
      () =>
        runCheck(
          plan,
          { ...ports, provider },
          // The pull request's code talking: no line of it is a workflow command.
          { onSuiteOutput: (chunk) => process.stdout.write(quoteSuite(scrub(chunk))), signal: controller.signal },
        ),
      (m) => core.info(m),
    );
    const databaseUrl = report.branch !== null ? await provider.connectionUri(report.branch) : null;
    await publishCheck({ report, inputs, ctx, databaseUrl });
    if (report.conclusion === 'success') return { conclusion: 'success' };
    const detail = report.error ? `: ${report.error.message}${report.error.hint ? ` ${report.error.hint}` : ''}` : '';
    return { conclusion: report.conclusion, message: `Consort: ${verdict(report)}${detail}` };
  } finally {
    await provider.close();
  }
}
