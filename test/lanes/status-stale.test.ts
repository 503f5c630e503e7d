/**
 * `consort status` tells an approval whose artifacts changed since (the next run reopens the gate)
 * from one that still holds, as the dashboard does; it said "approved" for both.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createFeature } from '../../src/lanes/tdd/feature.js';
import { readGate } from '../../src/lanes/tdd/gate-check.js';
import { featureStatus, renderStatus } from '../../src/lanes/tdd/status.js';
import { FeatureStore } from '../../src/lanes/tdd/store.js';
import { execFileAsync } from '../helpers/exec-file.js';
import { workspaceAt } from '../helpers/tdd.js';

it('an approved gate whose artifacts changed since shows as stale', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'consort-status-'));
  try {
    const git = (...args: string[]) =>
      execFileAsync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir });
    await git('init', '-q');
    await git('commit', '-q', '--allow-empty', '-m', 'init');
    const ws = await workspaceAt(dir);
    const { feature } = await createFeature(ws, 'phones', 'Customers want phone numbers.');
    const store = new FeatureStore(dir, feature);
    const { hash } = (await readGate(ws, store, 'spec', false)).check;
    await store.recordApproval('spec', { approver: 'Ada', at: '2026-12-03T10:00:00.000Z', hash, proxy: false });

    const holding = await featureStatus(dir, feature, ws);
    expect(holding.gates.spec).toMatchObject({ approver: 'Ada', stale: false });
    expect(renderStatus(holding)).not.toContain('stale');

    await writeFile(store.file('feature-request.md'), 'Customers want phone numbers, and e-mail too.\n');
    const changed = await featureStatus(dir, feature, ws);
    expect(changed.gates.spec).toMatchObject({ approver: 'Ada', stale: true });
    expect(renderStatus(changed)).toContain('spec approved by Ada at 2026-12-03T10:00:00.000Z — stale');
    // Without the checkout (an older caller), nothing is claimed either way.
    expect((await featureStatus(dir, feature)).gates.spec).not.toHaveProperty('stale');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

it('an escalated feature counts its attempts once: in the reason, not again on the first line', () => {
  const escalated = {
    feature: '001-phones',
    phase: 'escalated',
    where: 'escalated at green T1',
    attempt: 1,
    repair: 0,
    gates: {},
    items: [],
    cycles: [],
    turns: { count: 2, byVerdict: {}, inputTokens: 0, outputTokens: 0, costUsd: 0, agentMs: 0 },
    escalation: { reason: 'the suite did not pass (after 2 attempts)', step: 'green', at: '2026-12-04T10:00:00Z' },
  } as unknown as Parameters<typeof renderStatus>[0];
  const text = renderStatus(escalated);
  expect(text).not.toContain('(attempt 2)');
  expect(text).toContain('needs a human: the suite did not pass (after 2 attempts)');
  expect(renderStatus({ ...escalated, escalation: null })).toContain('(attempt 2)');
});

it('at the spec gate, status lists the test list items and the gate waiting for approval (it showed neither)', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'consort-status-'));
  try {
    const git = (...args: string[]) =>
      execFileAsync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir });
    await git('init', '-q');
    await git('commit', '-q', '--allow-empty', '-m', 'init');
    const ws = await workspaceAt(dir);
    const { feature } = await createFeature(ws, 'phones', 'Customers want phone numbers.');
    const store = new FeatureStore(dir, feature);
    const file = await store.load();
    await store.save({
      ...file,
      state: { ...file.state, phase: 'design', step: 'awaiting-approval', gate: 'spec' } as typeof file.state,
    });
    const item = { id: 'T1', ac: 'AC1', kind: 'behavior', title: 'stores a phone', status: 'pending' } as const;
    await writeFile(store.file('test-list.json'), JSON.stringify({ version: 1, items: [item] }));

    const waiting = await featureStatus(dir, feature, ws);
    expect(waiting.items).toEqual([item]);
    expect(waiting.gates).toEqual({ spec: null });
    const text = renderStatus(waiting);
    expect(text).toContain('gates:  spec not approved');
    expect(text).toContain('items:  T1 pending');

    // A test list that does not parse yet shows no items, rather than failing the command.
    await writeFile(store.file('test-list.json'), '{ "version": 1, "items": [');
    expect((await featureStatus(dir, feature, ws)).items).toEqual([]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
