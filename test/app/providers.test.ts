/**
 * The wrappers the App puts around a branch provider: one repository's view of a shared cloud
 * project (names prefixed, others' branches invisible) and the cancellable provider of a run.
 * Neither may drop `verifyUrl`: the lane proves a cloud branch's URL with it before writing.
 */
import { namespacedProvider } from '../../app/namespaced-provider.js';
import { appProviders, cancellable } from '../../app/providers.js';
import type { BranchProvider, BranchRecord } from '../../src/ports/branch-provider.js';

const at = new Date('2026-01-01T00:00:00Z');
const rec = (name: string, parent: string | null): BranchRecord => ({
  name,
  parent,
  createdAt: at,
  expiresAt: null,
  gitBranch: null,
  database: name,
});

/** A provider that records calls and knows a fixed set of branches, as a cloud project would. */
function recording(): { provider: BranchProvider; calls: string[] } {
  const calls: string[] = [];
  const branches = [
    rec('main', null),
    rec('gh1-baseline-abc', 'main'),
    rec('gh1-pr-2', 'gh1-baseline-abc'),
    rec('gh2-pr-2', 'main'),
  ];
  const provider: BranchProvider = {
    name: 'neon',
    capabilities: async () => ({ provider: 'neon', mode: 'native', modeReason: 'test', serverVersion: '17' }),
    create: async (o) => (calls.push(`create ${o.name} from ${o.parent}`), rec(o.name, o.parent ?? 'main')),
    ensure: async (o) => (
      calls.push(`ensure ${o.name} from ${o.parent}`),
      { branch: rec(o.name, o.parent ?? 'main'), outcome: 'created' }
    ),
    get: async (n) => branches.find((b) => b.name === n),
    list: async () => branches,
    delete: async (n) => (calls.push(`delete ${n}`), [n]),
    reset: async (n) => (calls.push(`reset ${n}`), rec(n, 'main')),
    connectionUri: async (n) => `postgres://u@h/${n}`,
    verifyUrl: async (n, url) => void calls.push(`verify ${n} ${url}`),
    gc: async () => ({ deleted: ['gh1-pr-9', 'gh2-pr-9'], repaired: ['consort-stage-1'], kept: [] }),
    close: async () => void calls.push('close'),
  };
  return { provider, calls };
}

describe('a repository’s view of a shared cloud project', () => {
  it('prefixes every name but main, lists only its own branches, and passes verifyUrl through', async () => {
    const { provider, calls } = recording();
    const mine = namespacedProvider(provider, 'gh1');
    expect((await mine.list()).map((b) => [b.name, b.parent])).toEqual([
      ['main', null],
      ['baseline-abc', 'main'],
      ['pr-2', 'baseline-abc'],
    ]);
    expect(await mine.get('pr-2')).toMatchObject({ name: 'pr-2', parent: 'baseline-abc' });
    await mine.create({ name: 'pr-3', parent: 'baseline-abc' });
    await mine.ensure({ name: 'baseline-def', parent: 'main' });
    expect(await mine.delete('pr-2')).toEqual(['pr-2']);
    await mine.reset('pr-3');
    expect(await mine.connectionUri('pr-3')).toBe('postgres://u@h/gh1-pr-3');
    await mine.verifyUrl!('pr-3', 'postgres://u@h/gh1-pr-3');
    expect(await mine.gc()).toEqual({ deleted: ['pr-9'], repaired: ['consort-stage-1'], kept: [] });
    await mine.close(); // shared: not closed by one repository
    expect(calls).toEqual([
      'create gh1-pr-3 from gh1-baseline-abc',
      'ensure gh1-baseline-def from main',
      'delete gh1-pr-2',
      'reset gh1-pr-3',
      'verify gh1-pr-3 postgres://u@h/gh1-pr-3',
    ]);
    await expect(mine.create({ name: 'main' })).rejects.toThrow(/project's default branch/);
  });

  it('a cancelled run cannot create, but verifyUrl survives the wrapper', async () => {
    const { provider, calls } = recording();
    const controller = new AbortController();
    const run = cancellable(namespacedProvider(provider, 'gh1'), controller.signal);
    expect(typeof run.verifyUrl).toBe('function');
    await run.verifyUrl!('pr-2', 'postgres://x');
    controller.abort('superseded');
    await expect(run.create({ name: 'pr-4' })).rejects.toThrow(/cancelled: superseded/);
    expect(await run.delete('pr-2')).toEqual(['pr-2']);
    expect(calls).toEqual(['verify gh1-pr-2 postgres://x', 'delete gh1-pr-2']);
  });

  it('appProviders: one namespaced view per repository on each cloud provider; only what is offered', async () => {
    const { provider } = recording();
    const providers = appProviders({ servers: {}, cloud: { neon: provider }, offered: ['neon'], fallback: 'neon' });
    expect((await (await providers.forRepository(2)).list()).map((b) => b.name)).toEqual(['main', 'pr-2']);
    expect((await providers.forRepository(2, 'neon')).verifyUrl).toBeDefined();
    await expect(providers.forRepository(2, 'lakebase')).rejects.toThrow(/does not offer the lakebase provider/);
    expect(providers.offered?.()).toEqual(['neon']);
    expect(providers.choose?.('local')).toMatchObject({ ok: false });
  });
});
