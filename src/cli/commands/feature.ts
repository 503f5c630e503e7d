/** `consort feature new <slug>`: start a feature of the TDD lane. */
import { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { ConsortError } from '../../core/errors.js';
import { createFeature } from '../../lanes/build/feature.js';
import { printJson } from '../output.js';
import type { Ctx } from './lane.js';

export function featureCommand(ctx: Ctx): Command {
  const feature = new Command('feature').description('start and manage features of the TDD lane');
  feature
    .command('new <slug>')
    .description('create .consort/features/NNN-<slug>/ with its feature request')
    .option('--request <text>', 'the feature request (default: a template to fill in)')
    .option('--from <file>', 'read the feature request from a markdown file')
    .action(async (slug: string, o: { request?: string; from?: string }, cmd: Command) => {
      const c = ctx(cmd);
      if (o.request !== undefined && o.from !== undefined) throw new ConsortError('invalid-input', 'Give either --request or --from, not both.');
      const request = o.from !== undefined ? await readFile(o.from, 'utf8') : o.request;
      const created = await createFeature(c.root, slug, request);
      if (c.json) printJson(c.io, created);
      else c.io.out(`Created ${created.feature} in ${created.dir}\nEdit feature-request.md, then: consort run ${created.feature}`);
    });
  return feature;
}
