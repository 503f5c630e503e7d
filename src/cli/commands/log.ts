/** `consort log <feature>`: the feature's event log (phases, handoffs, gates, cycles, turns). */
import { Command } from 'commander';
import type { LogEvent } from '../../conductor/events.js';
import { printJson } from '../output.js';
import type { Ctx } from './lane.js';
import { redTests } from '../../conductor/red-tests.js';

function detail(e: LogEvent): string {
  switch (e.type) {
    case 'phase.start':
    case 'phase.end':
      return e.phase;
    case 'handoff':
      return `${e.from} → ${e.to} (${e.step}${e.item ? ` ${e.item}` : ''})`;
    case 'artifact.written':
      return `${e.file} by ${e.role}`;
    case 'gate.surfaced':
      return `${e.gate}${e.problems.length ? `: ${e.problems.slice(0, 2).join('; ')}` : ''}${e.flags?.length ? ` (flagged: ${e.flags.slice(0, 2).join('; ')})` : ''}`;
    case 'gate.approved':
      return `${e.gate} by ${e.approver}${e.proxy ? ' (proxy)' : ''}`;
    case 'gate.reopened':
      return `${e.gate}: ${e.reason}`;
    case 'gate.approval-ignored':
      return `${e.gate}: ${e.approver}'s approval not counted: ${e.reason}`;
    case 'cycle.red':
      return `${e.item} on ${e.branch}: ${redTests(e)}`;
    case 'cycle.rejected':
      return `${e.item} ${e.step} ${e.verdict}: ${e.reason.split('\n')[0]}`;
    case 'cycle.green':
      return `${e.item} ${e.purpose} on ${e.branch}`;
    case 'cycle.repair':
      return `${e.item} ${e.step} round ${e.round}`;
    case 'cycle.review':
      return `${e.item} ${e.verdict}`;
    case 'cycle.refactored':
      return e.item;
    case 'cycle.experiments':
      return `${e.item}: ${e.green.length} of ${e.of} green${e.picked ? `, picked ${e.picked} (${e.rule})` : ''}`;
    case 'turn.usage':
      return `${e.turn} ${e.role} ${e.step}${e.item ? ` ${e.item}` : ''} ${e.verdict}: ${Math.round(e.durationMs / 100) / 10} s, ${e.inputTokens}/${e.outputTokens} tokens${e.costUsd !== undefined ? `, $${e.costUsd}` : ''}${e.refused ? `; refused ${e.refused.join(', ')}` : ''}`;
    case 'escalation':
      return `${e.kind} at ${e.step}: ${e.reason.split('\n')[0]}`;
  }
}

export function logCommand(ctx: Ctx): Command {
  return new Command('log')
    .description("a feature's event log")
    .argument('<feature>', 'NNN-slug, NNN or slug')
    .action(async (ref: string, _o: unknown, cmd: Command) => {
      const c = await ctx(cmd);
      const { resolveFeature } = await import('../../lanes/tdd/feature.js');
      const { FeatureStore } = await import('../../lanes/tdd/store.js');
      const events = await new FeatureStore(c.root, await resolveFeature(c.root, ref)).events();
      if (c.json) return printJson(c.io, events);
      c.io.out(events.map((e) => `${e.at}  ${e.type.padEnd(16)}  ${detail(e)}`).join('\n') || '(no events yet)');
    });
}
