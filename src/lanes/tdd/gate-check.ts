/**
 * Reading a gate's artifacts from disk into what the conductor decides on: valid or not (with the
 * problems), the normalized hash, the recorded approval, and which earlier approvals no longer
 * match their artifacts. `consort approve` uses the same check, so a person can approve only what
 * the conductor would accept.
 */
import { crossCheck, parseArtifact, type FeatureSpec, type TestList } from '../../conductor/artifacts.js';
import { CycleRecord } from '../../conductor/effects.js';
import type { GateCheck } from '../../conductor/events.js';
import { gatedFiles, gateHash, type GatedFile } from '../../conductor/gates.js';
import { GATES, type GateName, type Item } from '../../conductor/state.js';
import { codeTreeHash, type GitWorkspace } from '../../git/workspace.js';
import { type FeatureStore, readText } from './store.js';
import { testEnvironmentFlags } from './test-env-flags.js';

export interface GateReading {
  check: GateCheck;
  /** The approved test list (spec gate only, when valid). */
  items?: Item[];
}

async function readGated(ws: GitWorkspace, store: FeatureStore, files: readonly string[]): Promise<GatedFile[]> {
  return Promise.all(files.map(async (file) => ({
    file,
    content: file === 'git:tree' ? await codeTreeHash(ws) : await readText(store.file(file)),
  })));
}

function validate(files: readonly GatedFile[]): { problems: string[]; spec?: FeatureSpec; list?: TestList } {
  const problems: string[] = [];
  let spec: FeatureSpec | undefined;
  let list: TestList | undefined;
  for (const f of files) {
    if (f.file === 'git:tree') continue;
    if (f.file.startsWith('cycles/')) {
      const ok = f.content !== null && CycleRecord.safeParse(JSON.parse(f.content)).success;
      if (!ok) problems.push(`${f.file} is not a valid cycle record`);
      continue;
    }
    const r = parseArtifact(f.file, f.content);
    if (!r.ok) problems.push(...r.problems);
    else if (f.file === 'feature-spec.json') spec = r.value as FeatureSpec;
    else if (f.file === 'test-list.json') list = r.value as TestList;
  }
  problems.push(...crossCheck(spec, list));
  return { problems, ...(spec ? { spec } : {}), ...(list ? { list } : {}) };
}

export async function readGate(ws: GitWorkspace, store: FeatureStore, gate: GateName, userFacing: boolean): Promise<GateReading> {
  const files = await readGated(ws, store, gatedFiles(gate, { userFacing, cycles: await store.cycleFiles() }));
  const { problems, list } = validate(files);
  const approval = (await store.gates()).gates[gate]?.approval ?? null;
  const flags = gate === 'merge' ? await testEnvironmentFlags(ws, (await store.load()).baseCommit) : [];
  const check: GateCheck = { valid: problems.length === 0, problems, hash: gateHash(files), approval, ...(flags.length ? { flags } : {}) };
  return { check, ...(gate === 'spec' && list && problems.length === 0 ? { items: list.items } : {}) };
}

/** Approved gates whose artifacts changed since. */
export async function reopenedGates(ws: GitWorkspace, store: FeatureStore, userFacing: boolean): Promise<GateName[]> {
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
