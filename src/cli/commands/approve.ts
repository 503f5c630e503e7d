/** `consort approve <feature> <gate> --as <name>`: a named human approves a gate's artifacts, by hash. */
import { Command, Option } from 'commander';
import { terminalConfirm } from '../confirm.js';
import { printJson } from '../output.js';
import { usageError } from '../usage.js';
import { GATE_NAMES } from './run.js';
import type { Ctx } from './lane.js';

export function approveCommand(ctx: Ctx): Command {
  return new Command('approve')
    .description(
      "approve a gate at an interactive terminal (you type the first 8 characters of its artifacts' sha256, so no agent or script can): binds your name to that hash; any later change reopens it",
    )
    .argument('<feature>', 'NNN-slug, NNN or slug')
    .argument('<gate>', 'plan, test_list, spec, merge or deploy')
    .addOption(new Option('--as <name>', 'who approves (a person; "proxy" is reserved)').makeOptionMandatory())
    .action(async (ref: string, gate: string, o: { as: string }, cmd: Command) => {
      if (!(GATE_NAMES as readonly string[]).includes(gate))
        throw usageError(`Unknown gate "${gate}".`, `Gates: ${GATE_NAMES.join(', ')}.`);
      const c = await ctx(cmd);
      const { approveGate, resolveFeature } = await import('../../lanes/tdd/feature.js');
      const feature = await resolveFeature(c.root, ref);
      const { workspace } = await (await import('../ports.js')).tddAdapters(c);
      const approval = await approveGate({
        ws: workspace,
        feature,
        gate,
        approver: o.as,
        confirm: ({ hash }) =>
          (c.io.confirm ?? terminalConfirm)(
            `Approve the ${gate} gate of ${feature} as ${o.as.trim()}?\nIts artifacts hash to ${hash}.\nType the first 8 characters of the hash (${hash.replace(/^sha256:/, '').slice(0, 8)}…) to approve: `,
            hash.replace(/^sha256:/, '').slice(0, 8),
          ),
      });
      if (c.json) printJson(c.io, { feature, ...approval });
      else
        c.io.out(
          `Approved the ${approval.gate} gate of ${feature} as ${approval.approver} (${approval.hash.slice(0, 19)}…). Continue with: consort run ${feature}`,
        );
    });
}
