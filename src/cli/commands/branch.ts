/** `consort branch …`: create, pool, lease, release, list, delete, reset, url and gc database branches. */
import { Command } from 'commander';
import { parseDuration } from '../../core/duration.js';
import { ConsortError } from '../../core/errors.js';
import { assertBranchName } from '../../core/names.js';
import { maskUrl } from '../../core/redact.js';
import type { BranchProvider, BranchRecord } from '../../ports/branch-provider.js';
import type { Ctx } from '../context.js';
import { branchJson, formatBytes, printJson, relativeTime, table } from '../output.js';
import { asUsage, usageError } from '../usage.js';
import { count } from '../../core/plural.js';

async function recordJson(p: BranchProvider, name: string, showSecrets: boolean) {
  const [branch, url, caps] = await Promise.all([p.get(name), p.connectionUri(name), p.capabilities()]);
  return branchJson(branch!, url, caps.mode, showSecrets);
}

/** No table, view or sequence outside the system schemas: a fork of it holds nothing to test on. */
async function isEmptyDatabase(url: string): Promise<boolean> {
  const { withClient } = await import('../../db/sql.js');
  return withClient(url, async (db) => {
    const r = await db.query(
      "SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S') AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')",
    );
    return (r.rows[0] as { n: number }).n === 0;
  }).catch(() => false);
}

/** Why a create from a pooled parent copied it (BranchRecord.poolMiss), as the terminal says it. */
const POOL_MISS: Record<NonNullable<BranchRecord['poolMiss']>, string> = {
  empty: 'its warm pool had no ready copy (it refills in the background)',
  stale: "its warm pool's copies were of an older state of it (they are being replaced)",
  busy: 'someone was connected to it, so its warm pool could not hand out a copy',
};

export function branchCommand(ctx: Ctx): Command {
  const branch = new Command('branch').description(
    'database branches: create, list, url, reset, delete, gc, and warm pools and leases (pool, lease, release)',
  );

  branch
    .command('create <name>')
    .description('fork a new branch from a parent (copy-on-write where the filesystem allows)')
    .option('--from <parent>', 'parent branch', 'main')
    .option(
      '--ttl <duration>',
      "remove with `branch gc` after this long (e.g. 1h, 7d; default: the configuration's database.ttl)",
    )
    .option('--git-branch <name>', 'record the git branch this database branch is paired with')
    .option('--terminate-connections', 'end sessions connected to the parent instead of failing')
    .option('--show-secrets', 'print the connection URL with its password')
    .action(
      async (
        name: string,
        o: { from: string; ttl?: string; gitBranch?: string; terminateConnections?: boolean; showSecrets?: boolean },
        cmd: Command,
      ) => {
        // Checked before the provider starts (the local one starts a server).
        asUsage(() => assertBranchName(name));
        const { assertNotReserved } = await import('../../branches/database-name.js');
        asUsage(() => assertNotReserved(name));
        asUsage(() => assertBranchName(o.from));
        const given = o.ttl === undefined ? undefined : asUsage(() => parseDuration(o.ttl!));
        const c = await ctx(cmd);
        // Without --ttl, the configuration's database.ttl.
        const configured = given === undefined ? (await c.config()).database.ttl : undefined;
        const ttlMs = given ?? (configured === undefined ? undefined : parseDuration(configured));
        await c.withProvider(async (p) => {
          const started = performance.now();
          const created = await p.create({
            name,
            parent: o.from,
            ...(ttlMs !== undefined ? { ttlMs } : {}),
            ...(o.gitBranch ? { gitBranch: o.gitBranch } : {}),
            terminateConnections: o.terminateConnections === true,
          });
          const ms = performance.now() - started;
          const record = await recordJson(p, name, o.showSecrets === true);
          const pooled = created.pooled === true;
          if (!c.json && (await isEmptyDatabase(await p.connectionUri(name)))) {
            c.io.err(
              `Note: ${o.from} has no tables yet, so ${name} starts empty. Load your schema into ${o.from} first, from a checkout of the git branch it stands for (e.g. on main: DATABASE_URL=$(npx consort branch url ${o.from}) npx node-pg-migrate up; a feature branch's migrations there would make every later check report the parent ahead), or fork from another branch with --from.`,
            );
          }
          if (c.json)
            printJson(c.io, {
              ...record,
              pooled,
              ...(created.poolMiss ? { poolMiss: created.poolMiss } : {}),
              ...(created.copyStrategy ? { copyStrategy: created.copyStrategy } : {}),
              durationMs: Math.round(ms),
            });
          else
            c.io.out(
              `Created branch ${name} from ${o.from} in ${Math.round(ms)} ms (${pooled ? 'from its warm pool' : record.mode}${created.poolMiss ? `: ${POOL_MISS[created.poolMiss]}` : ''})${record.expiresAt ? `, expires ${record.expiresAt}` : ''}\n${record.url}`,
            );
        });
      },
    );

  branch
    .command('pool [template]')
    .description(
      'keep N ready copies of a branch so `branch create X --from <template>` takes one at once (local, postgres)',
    )
    .option('--size <n>', 'how many ready copies to keep (0 drops the pool); without it, show the pools')
    .action(async (template: string | undefined, o: { size?: string }, cmd: Command) => {
      // Checked before the provider starts (the local one starts a server).
      const { MAX_POOL_SIZE } = await import('../../branches/pool.js');
      if (o.size !== undefined && (!/^\d+$/.test(o.size) || Number(o.size) > MAX_POOL_SIZE))
        return cmd.error(
          `error: --size takes a whole number from 0 to ${MAX_POOL_SIZE} (got ${JSON.stringify(o.size)})`,
          {
            exitCode: 2,
          },
        );
      if (template !== undefined) asUsage(() => assertBranchName(template));
      const c = await ctx(cmd);
      await c.withProvider(async (p) => {
        if (!p.pool || !p.poolStatus) {
          throw new ConsortError(
            'invalid-input',
            `The ${p.name} provider has no warm pools: its branches are made by the service.`,
            {
              hint: 'Warm pools work with --provider local (the default) and postgres.',
            },
          );
        }
        if (o.size === undefined) {
          const pools = await p.poolStatus(template);
          if (c.json) return printJson(c.io, pools);
          if (pools.length === 0)
            return c.io.out(
              template
                ? `No pool for ${template}.`
                : 'No pools. Make one with `consort branch pool <template> --size N`.',
            );
          return c.io.out(
            table([['TEMPLATE', 'SIZE', 'READY'], ...pools.map((x) => [x.template, String(x.size), String(x.ready)])]),
          );
        }
        if (!template)
          return cmd.error('error: name the template branch: consort branch pool <template> --size N', { exitCode: 2 });
        const size = Number(o.size);
        const started = performance.now();
        const status = await p.pool(template, size, {
          onCopy: (made, wanted) => {
            if (!c.json) c.io.err(`Copied ${made}/${wanted} of ${template}`);
          },
        });
        const ms = Math.round(performance.now() - started);
        if (c.json) return printJson(c.io, { ...status, durationMs: ms });
        c.io.out(
          size === 0
            ? `Dropped the pool of ${template}`
            : `Pool of ${template}: ${status.ready}/${status.size} ready (${ms} ms)`,
        );
      });
    });

  branch
    .command('lease <template>')
    .description(
      'take a branch of a template for a while (from its warm pool when one is ready): prints its URL; return it with `branch release`',
    )
    .option('--ttl <duration>', 'dropped by `branch gc` (and the next lease) after this long if never returned', '1h')
    .action(async (template: string, o: { ttl: string }, cmd: Command) => {
      const ttlMs = asUsage(() => parseDuration(o.ttl));
      asUsage(() => assertBranchName(template));
      const c = await ctx(cmd);
      const { leaseBranch, sweepLeases } = await import('../../isolation/lease.js');
      await c.withProvider(async (p) => {
        await sweepLeases(p); // what a crashed holder left, once expired
        const lease = await leaseBranch(p, { template, ttlMs });
        if (c.json) return printJson(c.io, { ...lease, expiresAt: lease.expiresAt?.toISOString() ?? null });
        c.io.err(
          `Leased ${lease.name} from ${template} in ${lease.durationMs} ms (${lease.pooled ? 'from its warm pool' : `copied${lease.poolMiss ? `: ${POOL_MISS[lease.poolMiss]}` : ''}`}); return it with \`consort branch release ${lease.name}\``,
        );
        c.io.out(lease.url);
      });
    });

  branch
    .command('release <lease>')
    .description('return a leased branch (its name, or its connection URL): its database is dropped')
    .action(async (ref: string, _o: unknown, cmd: Command) => {
      const { isLeaseName, leaseForUrl, releaseBranch } = await import('../../isolation/lease.js');
      const byUrl = /^postgres(ql)?:\/\//.test(ref);
      // A name that cannot be a lease is refused from the name alone, before the provider starts.
      if (!byUrl && !isLeaseName(ref))
        throw usageError(
          `"${ref}" is not a lease (lease names look like lease-1a2b3c4d-5e6f7a8b).`,
          'Pass the name or URL `consort branch lease` printed (leases are listed by `consort branch list`); delete an ordinary branch with `consort branch delete`.',
        );
      const c = await ctx(cmd);
      await c.withProvider(async (p) => {
        const name = byUrl ? await leaseForUrl(p, ref) : ref;
        if (name === undefined)
          throw new ConsortError('branch-not-found', 'No lease has a database at that URL.', {
            hint: 'List branches with `consort branch list`.',
          });
        await releaseBranch(p, name);
        if (c.json) printJson(c.io, { released: name });
        else c.io.out(`Released ${name}`);
      });
    });

  branch
    .command('list')
    .description('list branches')
    .option('--show-secrets', 'include passwords in URLs')
    .action(async (o: { showSecrets?: boolean }, cmd: Command) => {
      const c = await ctx(cmd);
      await c.withProvider(async (p) => {
        const noSizes: Record<string, number> = {};
        const [branches, sizes] = await Promise.all([p.list(), p.sizes?.() ?? noSizes]);
        const records = await Promise.all(
          branches.map(async (b) => ({
            ...(await recordJson(p, b.name, o.showSecrets === true)),
            sizeBytes: sizes[b.name] ?? null,
          })),
        );
        // Catalog rows whose database is gone are not branches: named apart (on stderr with --json), repaired by gc.
        const drift = p.drift ? await p.drift() : [];
        for (const d of drift) {
          c.io.err(
            `Drift: branch "${d.name}" is in the catalog but its database "${d.database}" is gone (dropped by hand, or a restored server); \`consort branch gc\` forgets it.`,
          );
        }
        if (c.json) return printJson(c.io, records);
        const now = new Date();
        c.io.out(
          table([
            ['NAME', 'PARENT', 'CREATED', 'EXPIRES', 'GIT BRANCH', 'SIZE'],
            ...branches.map((b) => [
              b.name,
              b.parent ?? '-',
              relativeTime(b.createdAt, now),
              relativeTime(b.expiresAt, now),
              b.gitBranch ?? '-',
              formatBytes(sizes[b.name] ?? null),
            ]),
          ]),
        );
      });
    });

  branch
    .command('delete <name>')
    .description('delete a branch (and, with --recursive, everything forked from it)')
    .option('--recursive', 'also delete child branches')
    .option('--terminate-connections', 'end sessions connected to the branch instead of failing')
    .action(async (name: string, o: { recursive?: boolean; terminateConnections?: boolean }, cmd: Command) => {
      asUsage(() => assertBranchName(name));
      const c = await ctx(cmd);
      await c.withProvider(async (p) => {
        const deleted = await p.delete(name, {
          recursive: o.recursive === true,
          terminateConnections: o.terminateConnections === true,
        });
        if (c.json) printJson(c.io, { deleted });
        else c.io.out(`Deleted ${deleted.join(', ')}`);
      });
    });

  branch
    .command('reset <name>')
    .description("throw away a branch's changes: it becomes a fresh copy of its parent")
    .option('--terminate-connections', 'end sessions connected to the branch or its parent instead of failing')
    .action(async (name: string, o: { terminateConnections?: boolean }, cmd: Command) => {
      asUsage(() => assertBranchName(name));
      const c = await ctx(cmd);
      await c.withProvider(async (p) => {
        const b = await p.reset(name, { terminateConnections: o.terminateConnections === true });
        if (c.json) printJson(c.io, await recordJson(p, name, false));
        else c.io.out(`Reset ${name} to the current state of ${b.parent}`);
      });
    });

  branch
    .command('url <name>')
    .description('print the connection URL of a branch (with its password: for DATABASE_URL=$(…))')
    .option('--masked', 'hide the password')
    .action(async (name: string, o: { masked?: boolean }, cmd: Command) => {
      asUsage(() => assertBranchName(name));
      const c = await ctx(cmd);
      await c.withProvider(async (p) => {
        const url = await p.connectionUri(name);
        const shown = o.masked ? maskUrl(url) : url;
        if (c.json) printJson(c.io, { name, url: shown });
        else c.io.out(shown);
      });
    });

  branch
    .command('gc')
    .description(
      'delete expired branches, finish or roll back work a crashed process left behind, forget branches whose database is gone',
    )
    .action(async (_o: unknown, cmd: Command) => {
      const c = await ctx(cmd);
      await c.withProvider(async (p) => {
        const result = await p.gc();
        if (c.json) return printJson(c.io, result);
        const lines = [
          `Deleted ${count(result.deleted.length, 'expired branch', 'expired branches')}${result.deleted.length ? `: ${result.deleted.join(', ')}` : ''}`,
        ];
        if (result.repaired.length)
          lines.push(
            `Repaired (interrupted operations, branches whose database was gone): ${result.repaired.join(', ')}`,
          );
        for (const k of result.kept) lines.push(`Kept ${k.name}: ${k.reason}`);
        c.io.out(lines.join('\n'));
      });
    });

  return branch;
}
