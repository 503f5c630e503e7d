/** `consort feature new <slug>`: start a feature of the TDD lane. */
import { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { printJson } from '../output.js';
import { usageError } from '../usage.js';
import type { Ctx } from './lane.js';

export function featureCommand(ctx: Ctx): Command {
  const feature = new Command('feature').description('start and manage features of the TDD lane');
  feature
    .command('new <slug>')
    .description('create .consort/features/NNN-<slug>/ with its feature request')
    .option('--request <text>', 'the feature request (default: a template to fill in)')
    .option('--from <file>', 'read the feature request from a markdown file')
    .action(async (slug: string, o: { request?: string; from?: string }, cmd: Command) => {
      if (o.request !== undefined && o.from !== undefined)
        throw usageError('Give either --request or --from, not both.');
      const c = await ctx(cmd);
      const { createFeature } = await import('../../lanes/tdd/feature.js');
      const request =
        o.from !== undefined
          ? await readFile(o.from, 'utf8').catch((e: NodeJS.ErrnoException) => {
              throw usageError(
                `Cannot read the feature request ${o.from}: ${e.code === 'ENOENT' ? 'no such file' : (e.code ?? e.message)}.`,
                'Give --from a markdown file (or the text itself with --request).',
              );
            })
          : o.request;
      const { workspace } = await (await import('../ports.js')).tddAdapters(c);
      const created = await createFeature(workspace, slug, request);
      if (c.json) printJson(c.io, created);
      else
        c.io.out(
          [
            `Created ${created.feature} in ${created.dir}`,
            // The base is fixed now: a setup committed after it (the configuration, an agent script)
            // would be the feature's change, its lines flagged at the merge gate, its migrations not the baseline's.
            `It starts from ${created.baseCommit.slice(0, 7)} (HEAD): its migrations make the baseline database, and what is committed after it is the feature's change (the merge gate shows it), so commit your Consort setup first.`,
            `${request === undefined ? 'Edit feature-request.md, then' : 'Next'}: consort run ${created.feature}`,
          ].join('\n'),
        );
    });
  return feature;
}
