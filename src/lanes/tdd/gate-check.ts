/**
 * Reading a gate's artifacts from disk into what the conductor decides on: valid or not (with the
 * problems), the normalized hash, the recorded approval, and which earlier approvals no longer
 * match their artifacts. `consort approve` uses the same check, so a person can approve only what
 * the conductor would accept.
 */
import { checkGate } from '../../conductor/approval.js';
import type { Approval, GateCheck } from '../../conductor/events.js';
import { gatedFiles, gateHash, type GatedFile } from '../../conductor/gates.js';
import { GATES, type GateName, type Item } from '../../conductor/state.js';
import type { Workspace } from '../../ports/workspace.js';
import type { ApprovalCounts } from './context.js';
import { type FeatureStore, readText } from './store.js';
import { testEnvironmentFlags } from './test-env-flags.js';

export interface GateReading {
  check: GateCheck;
  /** A recorded approval of these artifacts that does not count (treated as absent), and why. */
  ignored?: { approval: Approval; reason: string };
  /** The approved test list (spec gate only, when valid). */
  items?: Item[];
}

async function readGated(ws: Workspace, store: FeatureStore, files: readonly string[]): Promise<GatedFile[]> {
  return Promise.all(
    files.map(async (file) => ({
      file,
      content: file === 'git:tree' ? await ws.codeTreeHash() : await readText(store.file(file)),
    })),
  );
}

export async function readGate(
  ws: Workspace,
  store: FeatureStore,
  gate: GateName,
  userFacing: boolean,
  approvalCounts?: ApprovalCounts,
): Promise<GateReading> {
  const files = await readGated(ws, store, gatedFiles(gate, { userFacing, cycles: await store.cycleFiles() }));
  const recorded = (await store.gates()).gates[gate]?.approval ?? null;
  const stored = gate === 'merge' ? await store.load() : null;
  // The project's own test globs: its tests import their framework by right, wherever they live.
  const flags = stored ? await testEnvironmentFlags(ws, stored.baseCommit, stored.state.policy?.tests) : [];
  const { check, items } = checkGate(files, recorded, flags);
  const reading: GateReading = { check, ...(gate === 'spec' && items ? { items } : {}) };
  // An approval of other artifacts passes nothing anyway; one of these must come from where it should.
  if (recorded !== null && recorded.hash === check.hash && approvalCounts) {
    const reason = await approvalCounts(gate, recorded);
    if (reason !== undefined)
      return { ...reading, check: { ...check, approval: null }, ignored: { approval: recorded, reason } };
  }
  return reading;
}

/** Approved gates whose artifacts changed since. */
export async function reopenedGates(ws: Workspace, store: FeatureStore, userFacing: boolean): Promise<GateName[]> {
  const recorded = (await store.gates()).gates;
  const reopened: GateName[] = [];
  for (const gate of GATES) {
    const approval = recorded[gate]?.approval;
    if (!approval) continue;
    const files = await readGated(ws, store, gatedFiles(gate, { userFacing, cycles: await store.cycleFiles() }));
    if (gateHash(files) !== approval.hash) reopened.push(gate);
  }
  return reopened;
}
