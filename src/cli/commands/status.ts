/** `consort status [feature]`: where a feature is, its gates, cycles and costs. */
import { Command } from 'commander';
import { printJson, table } from '../output.js';
import type { Ctx } from './lane.js';

export function statusCommand(ctx: Ctx): Command {
  return new Command('status')
    .description("a feature's phase, step, gates, cycles and turn costs (all features without an argument)")
    .argument('[feature]', 'NNN-slug, NNN or slug')
    .action(async (ref: string | undefined, _o: unknown, cmd: Command) => {
      const c = await ctx(cmd);
      const { resolveFeature } = await import('../../lanes/tdd/feature.js');
      const { allStatuses, featureStatus, renderStatus } = await import('../../lanes/tdd/status.js');
      // The checkout, so that an approval whose artifacts changed since shows as stale.
      const { localWorkspaces } = await import('../../git/local-workspace.js');
      const ws = await localWorkspaces.open(c.root).catch(() => undefined);
      if (ref !== undefined) {
        const status = await featureStatus(c.root, await resolveFeature(c.root, ref), ws);
        if (c.json) printJson(c.io, status);
        else c.io.out(renderStatus(status));
        return;
      }
      const all = await allStatuses(c.root, ws);
      if (c.json) return printJson(c.io, all);
      if (all.length === 0) return c.io.out('No features yet: consort feature new <slug>');
      c.io.out(
        table([
          ['FEATURE', 'PHASE', 'WHERE', 'TURNS'],
          ...all.map((s) => [s.feature, s.phase, s.where, String(s.turns.count)]),
        ]),
      );
    });
}
