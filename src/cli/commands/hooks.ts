/** `consort hooks install|uninstall|status`: git hooks that pair the database branch on every branch switch. */
import { Command } from 'commander';
import type { Ctx } from '../context.js';
import { printJson } from '../output.js';

export function hooksCommand(ctx: Ctx): Command {
  const hooks = new Command('hooks').description(
    'git hooks (post-checkout, post-merge) that pair the database branch with the git branch',
  );

  hooks
    .command('install')
    .description('install the hooks beside existing ones (husky, lefthook, core.hooksPath); safe to run again')
    .action(async (_o: unknown, cmd: Command) => {
      const c = await ctx(cmd);
      const { installHooks } = await import('../../pairing/hooks.js');
      const r = await installHooks(c.root);
      if (c.json) return printJson(c.io, r);
      c.io.out(
        [
          ...r.hooks.map((h) => `${h.hook}: ${h.outcome} (${h.file})`),
          `Hooks managed by ${r.place.manager}. Switching git branches now pairs the database branch in the background; see \`consort hooks status\`.`,
        ].join('\n'),
      );
    });

  hooks
    .command('uninstall')
    .description('remove the hooks and restore the hooks they wrapped')
    .action(async (_o: unknown, cmd: Command) => {
      const c = await ctx(cmd);
      const { uninstallHooks } = await import('../../pairing/hooks.js');
      const r = await uninstallHooks(c.root);
      if (c.json) return printJson(c.io, r);
      c.io.out(r.hooks.map((h) => `${h.hook}: ${h.outcome} (${h.file})`).join('\n'));
    });

  hooks
    .command('status')
    .description('whether the hooks are installed, the last background run and the log')
    .option('--lines <n>', 'log lines to show', '20')
    .action(async (o: { lines: string }, cmd: Command) => {
      const c = await ctx(cmd);
      const { hooksStatus } = await import('../../pairing/hooks.js');
      if (!/^\d+$/.test(o.lines))
        return cmd.error(`error: --lines takes a whole number (got ${JSON.stringify(o.lines)})`, { exitCode: 2 });
      const s = await hooksStatus(c.root, Number(o.lines));
      if (c.json) return printJson(c.io, s);
      const last = s.lastRun as { ok?: boolean; message?: string; at?: string } | null;
      c.io.out(
        [
          `manager: ${s.manager} (${s.mode}, ${s.dir})`,
          ...s.hooks.map(
            (h) =>
              `${h.hook}: ${h.installed ? `installed${h.chained ? `, runs ${h.chained} first` : ''}${h.runnerPresent ? '' : ' (but its Consort is gone: run consort hooks install again)'}` : 'not installed'}`,
          ),
          `last run: ${last ? `${last.at} ${last.ok ? 'ok' : 'FAILED'}: ${last.message}` : 'none yet'}`,
          ...(s.log.length ? ['log:', ...s.log.map((l) => `  ${l}`)] : []),
        ].join('\n'),
      );
    });
  return hooks;
}
