/**
 * A proof's branch is forked and migrated ahead while the turn before the proof runs
 * (database.ts prefork/prepareProof). Where every migration is plain SQL it is migrated from a
 * copy of the files it hashed, and at proof time it is kept where the committed tree holds those
 * same files. Until 2026-12-05 that copy was a folder in the shared temporary directory, which the
 * agent at work (the same user; under bubblewrap too, since `/tmp` is shared) could write while the
 * runner had yet to read it: a migration file the agent added there (or one it rewrote) ran on the
 * branch, the branch was recorded as holding only the files hashed, and the proof — the committed
 * tree holding those same files — kept it. The proof's database held a column no committed
 * migration makes: a GREEN whose code needs a column it never adds a migration for passed.
 *
 * The agent is played here by a watcher in this process, as its turn's process would poll the
 * temporary directory for the copy while the conductor forks ahead.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
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

/**
 * An earlier cycle's migration, in the turn's base and in its commit alike. Named for this run: the
 * temporary directory is shared by every test file running beside this one, and the watcher must
 * plant only in this file's copies (it once planted in another file's workspace that held a
 * migration of the same name, whose tests then saw a migration they never wrote).
 */
const EARLIER = `1730000400000_add_phone_${randomBytes(4).toString('hex')}.sql`;
const PHONE =
  '-- Up Migration\nALTER TABLE customers ADD COLUMN phone text;\n-- Down Migration\nALTER TABLE customers DROP COLUMN phone;\n';
/** What the agent slips into every migrations folder it finds under the temporary directory. */
const PLANTED = '1730000500000_add_nickname.sql';
const NICKNAME =
  '-- Up Migration\nALTER TABLE customers ADD COLUMN nickname text;\n-- Down Migration\nALTER TABLE customers DROP COLUMN nickname;\n';

/**
 * The agent's watcher: every folder `<tmp>/consort-ahead-*\/migrations` (where the conductor copies
 * them, in Consort's source) that holds the earlier migration gets the planted one.
 */
function plantInTemporaryCopies(): { stop: () => number } {
  const tmp = os.tmpdir();
  const done = new Set<string>();
  const timer = setInterval(() => {
    let names: string[];
    try {
      names = readdirSync(tmp);
    } catch {
      return;
    }
    for (const name of names) {
      const dir = path.join(tmp, name, 'migrations');
      if (!name.startsWith('consort-ahead-') || done.has(dir) || !existsSync(path.join(dir, EARLIER))) continue;
      try {
        writeFileSync(path.join(dir, PLANTED), NICKNAME);
        done.add(dir);
      } catch {
        // not ours to write (another user's), or gone again
      }
    }
  }, 1);
  return {
    stop: () => {
      clearInterval(timer);
      return done.size;
    },
  };
}

it("a migration the agent adds to the copy a proof's branch is migrated ahead from never reaches the proof", async () => {
  const committed = await mkdtemp(path.join(os.tmpdir(), 'consort-committed-'));
  await cp(path.join(repo.dir, 'migrations'), path.join(committed, 'migrations'), { recursive: true });
  // The turn's base (the working tree as the turn starts) and the turn's commit hold the earlier cycle's migration.
  await writeFile(path.join(repo.dir, 'migrations', EARLIER), PHONE);
  await writeFile(path.join(committed, 'migrations', EARLIER), PHONE);
  const branches = await laneBranches({ provider: t.provider, dir: repo.dir, config, baseCommit });
  const watcher = plantInTemporaryCopies();
  try {
    await branches.baseline();
    branches.prefork('f007-p1', 'proof');
    const proof = await branches.fresh('f007-p1', committed);
    expect(watcher.stop()).toBeGreaterThan(0); // the agent did reach a copy
    expect(proof.migrations).toMatchObject({ ok: true });
    expect(proof.migrations.log.join('\n')).toContain('was changed while they were applied');
    const columns = await query(
      proof.url,
      "SELECT column_name FROM information_schema.columns WHERE table_name = 'customers' AND column_name IN ('phone', 'nickname') ORDER BY 1",
    );
    // What the committed tree's migrations make: the phone, and no nickname.
    expect(columns).toEqual([{ column_name: 'phone' }]);
    branches.drop('f007-p1');
  } finally {
    watcher.stop();
    await branches.settle();
    await rm(path.join(repo.dir, 'migrations', EARLIER), { force: true });
    await rm(committed, { recursive: true, force: true });
  }
}, 120_000);
