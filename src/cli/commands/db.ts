/** `consort db start|stop|status`: the embedded PostgreSQL server of the `local` provider. */
import { Command } from 'commander';
import type { EmbeddedServer } from '../../branches/local/server.js';
import { maskUrl } from '../../core/redact.js';
import type { CliContext, Ctx } from '../context.js';
import { printJson } from '../output.js';
import { usageError } from '../usage.js';

async function server(c: CliContext): Promise<EmbeddedServer> {
  if (c.providerName !== 'local') {
    throw usageError(
      `\`consort db\` manages the embedded server of the local provider, not "${c.providerName}".`,
      'Drop --provider, or manage that server with its own tools.',
    );
  }
  const { serverDir } = await import('../../branches/local/paths.js');
  const { EmbeddedServer } = await import('../../branches/local/server.js');
  return new EmbeddedServer(serverDir(c.root, c.env), (m) => c.io.err(m));
}

export function dbCommand(ctx: Ctx): Command {
  const db = new Command('db').description("the local provider's embedded PostgreSQL 18 server");

  db.command('start')
    .description('start the server (initialising it on first use); later commands reuse it')
    .action(async (_o: unknown, cmd: Command) => {
      const c = await ctx(cmd);
      const info = await (await server(c)).start();
      if (c.json)
        printJson(c.io, {
          running: true,
          startedNow: info.startedNow,
          port: info.port,
          pid: info.pid,
          dataDir: info.dataDir,
          url: maskUrl(info.url),
        });
      else
        c.io.out(
          `${info.startedNow ? 'Started' : 'Already running'}: ${maskUrl(info.url)} (pid ${info.pid}, data ${info.dataDir})`,
        );
    });

  db.command('stop')
    .description('stop the server (branches are kept on disk; warm-pool copies and expired leases are dropped)')
    .action(async (_o: unknown, cmd: Command) => {
      const c = await ctx(cmd);
      const s = await server(c);
      // Pooled copies are a cache and expired leases are garbage: neither should hold disk while nothing runs.
      const { sweepLeases } = await import('../../isolation/lease.js');
      const [drained, leases] = (await s.status()).running
        ? await c.withProvider(
            async (p) => [p.drainPools ? await p.drainPools() : 0, (await sweepLeases(p)).length] as const,
            { local: true },
          )
        : [0, 0];
      const stopped = await s.stop();
      if (c.json) printJson(c.io, { stopped, poolCopiesDropped: drained, expiredLeasesDropped: leases });
      else {
        const dropped = [
          drained ? `${drained} warm-pool cop${drained === 1 ? 'y' : 'ies'}` : '',
          leases ? `${leases} expired lease${leases === 1 ? '' : 's'}` : '',
        ].filter(Boolean);
        c.io.out(
          `${stopped ? 'Stopped' : 'Not running'}${dropped.length ? ` (dropped ${dropped.join(' and ')})` : ''}`,
        );
      }
    });

  db.command('status')
    .description('show whether the server runs, where its data lives and its port')
    .action(async (_o: unknown, cmd: Command) => {
      const c = await ctx(cmd);
      const s = await (await server(c)).status();
      if (c.json) return printJson(c.io, s);
      c.io.out(
        [
          `running:     ${s.running ? `yes (pid ${s.pid})` : 'no'}`,
          `initialised: ${s.initialised ? `yes (PostgreSQL ${s.version})` : 'no (first use initialises it)'}`,
          `data dir:    ${s.dataDir}`,
          `port:        ${s.port ?? '-'}`,
        ].join('\n'),
      );
    });

  return db;
}
