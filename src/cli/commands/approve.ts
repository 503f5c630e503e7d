/** `consort approve <feature> <gate> --as <name>`: a named human approves a gate's artifacts, by hash. */
import { Command, Option } from 'commander';
import { terminalConfirm } from '../confirm.js';
import { printJson } from '../output.js';
import { usageError } from '../usage.js';
import { flaggedLines, GATE_NAMES } from './run.js';
import type { Ctx } from './lane.js';

const CALL = 'consort approve <feature> <gate> --as <name>';
/** Its usage line: the arguments are required, though commander holds them as optional (`consort --help` lists them so too: main.ts). */
const APPROVE_USAGE = '[options] <feature> <gate> --as <name>';
const isGate = (s: string | undefined) => s !== undefined && (GATE_NAMES as readonly string[]).includes(s);

/**
 * What is missing from the command line, in the order it is written. Commander would name the
 * mandatory `--as` before a missing argument, and take a lone gate for the feature ("approve spec
 * --as Ada": "missing required argument 'gate'"), so the arguments are checked here instead.
 */
export function approveArguments(
  ref: string | undefined,
  gate: string | undefined,
  as: string | undefined,
): { ref: string; gate: string; as: string } {
  if (ref === undefined || (gate === undefined && isGate(ref)))
    throw usageError(
      ref === undefined
        ? 'Missing the feature and the gate to approve.'
        : `Missing the feature whose ${ref} gate to approve.`,
      `Name the feature first, then the gate: ${ref === undefined ? CALL : `consort approve <feature> ${ref} --as <name>`} (the feature as NNN-slug, NNN or slug; \`consort status\` lists them).`,
    );
  if (gate === undefined)
    throw usageError(
      `Missing the gate of ${ref} to approve.`,
      `Name it after the feature: consort approve ${ref} <gate> --as <name> (gates: ${GATE_NAMES.join(', ')}).`,
    );
  if (!isGate(gate)) throw usageError(`Unknown gate "${gate}".`, `Gates: ${GATE_NAMES.join(', ')}.`);
  if (as === undefined)
    throw usageError(
      'Missing who approves (--as <name>).',
      `Approve as the person you are: consort approve ${ref} ${gate} --as "<your name>".`,
    );
  return { ref, gate, as };
}

export function approveCommand(ctx: Ctx): Command {
  return new Command('approve')
    .description(
      "approve a gate at an interactive terminal (you type the first 8 characters of its artifacts' sha256, so no agent or script can): binds your name to that hash; any later change reopens it",
    )
    .usage(APPROVE_USAGE)
    .argument('[feature]', 'NNN-slug, NNN or slug')
    .argument('[gate]', 'plan, test_list, spec, merge or deploy')
    .addOption(new Option('--as <name>', 'who approves (a person; "proxy" is reserved); required'))
    .action(async (refArg: string | undefined, gateArg: string | undefined, o: { as?: string }, cmd: Command) => {
      const { ref, gate, as } = approveArguments(refArg, gateArg, o.as);
      const c = await ctx(cmd);
      const { approveGate, resolveFeature } = await import('../../lanes/tdd/feature.js');
      const feature = await resolveFeature(c.root, ref);
      const { workspace } = await (await import('../ports.js')).tddAdapters(c);
      const approval = await approveGate({
        ws: workspace,
        feature,
        gate,
        approver: as,
        confirm: ({ hash, flags }) =>
          (c.io.confirm ?? terminalConfirm)(
            `${[...flaggedLines(flags), ''].join('\n').trimStart()}Approve the ${gate} gate of ${feature} as ${as.trim()}?\nIts artifacts hash to ${hash}.\nType the first 8 characters of the hash (${hash.replace(/^sha256:/, '').slice(0, 8)}…) to approve: `,
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
