/**
 * A proof's branch is forked and migrated ahead from the agent's working tree while the turn runs
 * (database.ts prefork/prepareProof); at proof time it is kept where every migration it holds is
 * "the same file" in the committed tree. Until 2026-12-05 "the same" was the migration's sha256 with
 * CRLF folded to LF — the check lane's rule, so a checkout's line ends are no edit — but
 * node-pg-migrate sends a SQL migration's text as it is, and a line break inside a string literal or
 * a function's body is part of the value. A migration already in the turn's base (an earlier cycle's)
 * read ahead with LF and committed by the turn with CRLF kept the LF branch: the proof's database held
 * a value the committed tree's migrations do not make.
 */
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import type { ConsortConfig } from '../../src/config/schema.js';
import { scenarioRepo, type ScenarioRepo } from '../../src/demo/scenarios.js';
import { localTestProvider, query, type TestProvider } from '../helpers/servers.js';
import { laneBranches } from '../helpers/tdd.js';
import { execFileAsync } from '../helpers/exec-file.js';

let t: TestProvider;
let repo: ScenarioRepo;
let config: ConsortConfig;
let baseCommit: string;

beforeAll(async () => {
  t = await localTestProvider();
  repo = await scenarioRepo(null);
  config = (await loadConfig(repo.dir)).config;
  baseCommit = (await execFileAsync('git', ['rev-parse', 'HEAD'], { cwd: repo.dir })).stdout.trim();
}, 120_000);
afterAll(async () => {
  await repo?.dispose();
  await t?.cleanup();
});

/** An earlier cycle's migration: a function whose value spans two lines. */
const MIGRATION = '1730000400000_add_greeting.sql';
const greeting = (eol: string) =>
  [
    '-- Up Migration',
    'CREATE FUNCTION greeting() RETURNS text LANGUAGE sql AS $$ SELECT $q$Hello',
    'world$q$ $$;',
    '-- Down Migration',
    'DROP FUNCTION greeting();',
    '',
  ].join(eol);

it("a migration read ahead with LF ends and committed with CRLF: the proof's branch holds what the committed file makes", async () => {
  const committed = await mkdtemp(path.join(os.tmpdir(), 'consort-committed-'));
  await cp(path.join(repo.dir, 'migrations'), path.join(committed, 'migrations'), { recursive: true });
  // The turn's base (the working tree as the turn starts) has the migration with LF line ends …
  await writeFile(path.join(repo.dir, 'migrations', MIGRATION), greeting('\n'));
  // … and the turn commits it with CRLF ones: the proof's tree.
  await writeFile(path.join(committed, 'migrations', MIGRATION), greeting('\r\n'));
  const branches = await laneBranches({ provider: t.provider, dir: repo.dir, config, baseCommit });
  try {
    await branches.baseline();
    branches.prefork('f005-p1', 'proof');
    const proof = await branches.fresh('f005-p1', committed);
    expect(proof.migrations).toMatchObject({ ok: true });
    // A fresh fork of the committed tree makes the value with a carriage return in it.
    expect(await query(proof.url, 'SELECT greeting() AS g')).toEqual([{ g: 'Hello\r\nworld' }]);
    branches.drop('f005-p1');
  } finally {
    await branches.settle();
    await rm(path.join(repo.dir, 'migrations', MIGRATION), { force: true });
    await rm(committed, { recursive: true, force: true });
  }
}, 120_000);
