/**
 * A cycle's sandbox is reused across its turns, but never after a turn that wrote a migration: the
 * agent may have applied it to the sandbox (run_suite, a shell) and the conductor may have reverted
 * the file, so the database would hold a change no file describes.
 */
import { loadConfig } from '../../src/config/load.js';
import { scenarioRepo, type ScenarioRepo } from '../../src/demo/scenarios.js';
import type { SchemaReader } from '../../src/ports/schema-reader.js';
import { localTestProvider, query, type TestProvider } from '../helpers/servers.js';
import { laneBranches, tddAdapters } from '../helpers/tdd.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
let t: TestProvider;
let repo: ScenarioRepo;
beforeAll(async () => {
  t = await localTestProvider();
  repo = await scenarioRepo(null);
}, 120_000);
afterAll(async () => {
  await repo?.dispose();
  await t?.cleanup();
});

const phoneColumns = async (url: string) =>
  Number(
    (
      await query<{ n: string }>(
        url,
        "SELECT count(*) AS n FROM information_schema.columns WHERE table_name = 'customers' AND column_name = 'phone'",
      )
    )[0]!.n,
  );

it('keeps a sandbox between turns, and forks it afresh once invalidated', async () => {
  const { config } = await loadConfig(repo.dir);
  const baseCommit = (await exec('git', ['rev-parse', 'HEAD'], { cwd: repo.dir })).stdout.trim();
  const branches = await laneBranches({ provider: t.provider, dir: repo.dir, config: config, baseCommit });
  try {
    const first = await branches.sandbox('f001-sbx');
    expect(first.migrations.ok).toBe(true);
    // What an agent's own run of its new migration leaves behind, with the file since reverted.
    await query(first.url, 'ALTER TABLE customers ADD COLUMN phone text');
    expect(await phoneColumns((await branches.sandbox('f001-sbx')).url)).toBe(1); // reused as recorded
    branches.invalidate('f001-sbx');
    expect(await phoneColumns((await branches.sandbox('f001-sbx')).url)).toBe(0);
    branches.invalidate('no-such-sandbox'); // harmless
  } finally {
    await branches.settle();
  }
}, 120_000);

it('re-keys a handed-out sandbox role ahead of the next turn, and forks an invalidated sandbox ahead too', async () => {
  const { config } = await loadConfig(repo.dir);
  const baseCommit = (await exec('git', ['rev-parse', 'HEAD'], { cwd: repo.dir })).stdout.trim();
  const branches = await laneBranches({ provider: t.provider, dir: repo.dir, config: config, baseCommit });
  try {
    const sandbox = await branches.sandbox('f002-sbx');
    const first = await branches.untrusted('f002-sbx', sandbox.url);
    expect(await query(first, 'SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
    // The turn is over: its key is replaced now, not when the next turn asks.
    branches.rekeyAhead('f002-sbx');
    const deadline = Date.now() + 30_000;
    while (
      await query(first, 'SELECT 1').then(
        () => true,
        () => false,
      )
    ) {
      if (Date.now() > deadline) throw new Error("the ended turn's password still works: no re-key ahead");
      await new Promise((r) => setTimeout(r, 50));
    }
    const again = await branches.sandbox('f002-sbx');
    const second = await branches.untrusted('f002-sbx', again.url);
    expect(new URL(second).username).toBe(new URL(first).username);
    expect(new URL(second).password).not.toBe(new URL(first).password);
    await expect(query(first, 'SELECT 1')).rejects.toThrow(/password authentication failed/);
    expect(await query(second, 'SELECT 1 AS ok')).toEqual([{ ok: 1 }]);

    // What a turn that wrote (and ran) a migration leaves; invalidated, the next sandbox is a new fork.
    await query(again.url, 'ALTER TABLE customers ADD COLUMN phone text');
    const database = (await t.provider.get('f002-sbx'))!.database;
    branches.invalidate('f002-sbx');
    const fresh = await branches.sandbox('f002-sbx');
    expect(await phoneColumns(fresh.url)).toBe(0);
    expect((await t.provider.get('f002-sbx'))!.database).toBe(database); // same name, a new copy
    const third = await branches.untrusted('f002-sbx', fresh.url);
    expect(await query(third, 'SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
  } finally {
    await branches.settle();
  }
  expect(await t.provider.get('f002-sbx')).toBeUndefined();
}, 120_000);

it("reads a sandbox's schema again only when it changed: re-keying its role is no change, a column or a default is", async () => {
  const { config } = await loadConfig(repo.dir);
  const baseCommit = (await exec('git', ['rev-parse', 'HEAD'], { cwd: repo.dir })).stdout.trim();
  let reads = 0;
  const schemas: SchemaReader = {
    ...tddAdapters.schemas,
    snapshot: (url, options) => {
      reads += 1;
      return tddAdapters.schemas.snapshot(url, options);
    },
  };
  const branches = await laneBranches({ provider: t.provider, dir: repo.dir, config, baseCommit, schemas });
  const customers = (s: Awaited<ReturnType<typeof branches.schema>>) =>
    s.tables.find((table) => table.name.endsWith('customers'))!.columns;
  try {
    const sandbox = await branches.sandbox('f003-sbx');
    const first = await branches.schema('f003-sbx', sandbox.url);
    const read = reads;
    // Two turns' handouts: the second re-keys the role, which GRANTs it every table again.
    const key = await branches.untrusted('f003-sbx', sandbox.url);
    expect(await branches.untrusted('f003-sbx', sandbox.url)).not.toBe(key);
    expect(await branches.schema('f003-sbx', sandbox.url)).toEqual(first);
    expect(reads).toBe(read);
    await query(sandbox.url, 'ALTER TABLE customers ADD COLUMN phone text');
    expect(customers(await branches.schema('f003-sbx', sandbox.url)).map((c) => c.name)).toContain('phone');
    expect(reads).toBe(read + 1);
    await query(sandbox.url, "ALTER TABLE customers ALTER COLUMN phone SET DEFAULT 'none'");
    expect(customers(await branches.schema('f003-sbx', sandbox.url)).find((c) => c.name === 'phone')!.default).toMatch(
      /none/,
    );
    expect(reads).toBe(read + 2);
  } finally {
    await branches.settle();
  }
}, 120_000);
