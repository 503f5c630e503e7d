/**
 * `--namespace` keeps projects apart on a shared postgres server; the other providers keep them
 * apart by themselves and ignore it. A user who gives it there is told so (once, on stderr), never
 * left to believe the flag did something. None of these reach a database: each provider's own
 * settings are missing, so the command fails right after choosing it.
 */
import { captureCli } from '../helpers/cli.js';

const env = { PATH: process.env.PATH ?? '', NO_COLOR: '1' };
const NOTE = /--namespace is for the postgres provider and is ignored here/;

it.each([
  ['neon', /its Neon project \(NEON_PROJECT_ID\)/],
  ['lakebase', /its Lakebase project \(CONSORT_LAKEBASE_PROJECT\)/],
])('%s: --namespace is named as ignored, with what keeps projects apart instead', async (provider, instead) => {
  const r = await captureCli(['branch', 'list', '--provider', provider, '--namespace', 'team-a'], env);
  expect(r.code).not.toBe(0); // no credentials here: the provider's settings are missing
  expect(r.stderr).toMatch(NOTE);
  expect(r.stderr).toMatch(instead);
  expect(r.stderr.match(new RegExp(NOTE.source, 'g'))).toHaveLength(1);
});

it('postgres: --namespace is its own, so nothing is said of it', async () => {
  const r = await captureCli(['branch', 'list', '--provider', 'postgres', '--namespace', 'team-a'], env);
  expect(r.stderr).toMatch(/CONSORT_POSTGRES_URL/); // it got as far as opening the provider
  expect(r.stderr).not.toMatch(NOTE);
});

it('without --namespace nothing is said, whatever the provider', async () => {
  const r = await captureCli(['branch', 'list', '--provider', 'neon'], env);
  expect(r.stderr).toMatch(/NEON/);
  expect(r.stderr).not.toMatch(NOTE);
});
