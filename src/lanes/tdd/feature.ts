/**
 * Features from a person's side: start one, find one by a short name, approve a gate, and read a
 * feature's status. Approval goes through the same gate check the conductor uses, so only valid
 * artifacts can be approved, and only by a named human.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { decideApproval } from '../../conductor/approval.js';
import { approverProblem } from '../../conductor/gates.js';
import {
  initialState,
  isStopped,
  type ConductorState,
  type GateName,
  GATES,
  STATE_VERSION,
} from '../../conductor/state.js';
import { ConsortError } from '../../core/errors.js';
import { isFeatureSlug } from '../../core/names.js';
import type { Workspace } from '../../ports/workspace.js';
import { readGate } from './gate-check.js';
import { featureDirOf, FeatureStore, listFeatures } from './store.js';

/** What names a new feature: lowercase words joined by "-", starting with a letter (at most 40 characters). */

function requestTemplate(slug: string, request: string | undefined): string {
  if (request !== undefined && request.trim() !== '') return `${request.trim()}\n`;
  return [
    `# ${slug.replace(/-/g, ' ')}`,
    '',
    'Who needs this, what they want to be able to do, and why. The spec-author turns this into',
    'stories with acceptance criteria; say what is out of scope too.',
    '',
  ].join('\n');
}

export async function createFeature(
  ws: Workspace,
  slug: string,
  request?: string,
): Promise<{ feature: string; dir: string; baseCommit: string }> {
  if (!isFeatureSlug(slug)) {
    throw new ConsortError('invalid-input', `"${slug}" is not a feature slug.`, {
      hint: 'Use lowercase letters, digits and "-", starting with a letter, at most 40 characters (e.g. customer-phones).',
    });
  }
  const existing = await listFeatures(ws.dir);
  const clash = existing.find((f) => f.replace(/^\d+-/, '') === slug);
  if (clash)
    throw new ConsortError('invalid-input', `A feature named ${slug} already exists: ${clash}.`, {
      hint: 'Pick another slug, or run the existing feature.',
    });
  const next = existing.reduce((n, f) => Math.max(n, Number(/^\d+/.exec(f)?.[0] ?? 0)), 0) + 1;
  const feature = `${String(next).padStart(3, '0')}-${slug}`;
  const store = new FeatureStore(ws.dir, feature);
  await mkdir(store.dir, { recursive: true });
  await writeFile(store.file('feature-request.md'), requestTemplate(slug, request));
  await writeFile(store.file('gates.json'), `${JSON.stringify({ version: 1, feature, gates: {} }, null, 2)}\n`);
  const baseCommit = await ws.head();
  await store.save({
    version: STATE_VERSION,
    state: initialState(feature),
    baseCommit,
    pending: [],
    done: 0,
    inFlight: null,
  });
  return { feature, dir: path.join(ws.dir, featureDirOf(feature)), baseCommit };
}

/** The feature `ref` names among `all`: `001-phones`, `001`, `1` or `phones`; undefined when none (or several) match. */
export function matchFeature(all: readonly string[], ref: string): string | undefined {
  const number = /^\d+$/.test(ref) ? Number(ref) : null;
  const match = all.filter(
    (f) => f === ref || f.replace(/^\d+-/, '') === ref || (number !== null && Number(/^\d+/.exec(f)?.[0]) === number),
  );
  return match.length === 1 ? match[0] : undefined;
}

/** Of the given features, those not done. */
export async function openFeatures(workspace: string, all: readonly string[]): Promise<string[]> {
  const open: string[] = [];
  for (const f of all) if ((await new FeatureStore(workspace, f).load()).state.step !== 'done') open.push(f);
  return open;
}

/** Whether `dir` or a folder above it holds a `.git` (a repository's folder, or a worktree's file). */
function insideGit(dir: string): boolean {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    if (existsSync(path.join(at, '.git'))) return true;
    if (path.dirname(at) === at) return false;
  }
}

/** `001-phones`, `001`, `1` or `phones`; with no name, the only feature that is not done. */
export async function resolveFeature(workspace: string, ref: string | undefined): Promise<string> {
  const all = await listFeatures(workspace);
  if (all.length === 0)
    throw new ConsortError('invalid-input', 'There is no feature yet.', {
      hint: insideGit(workspace)
        ? 'Start one with `consort feature new <slug>`.'
        : 'The TDD lane keeps its state in git, and this folder is in no repository: `git init` and commit once, then start a feature with `consort feature new <slug>`.',
    });
  if (ref === undefined) {
    const open = await openFeatures(workspace, all);
    if (open.length === 1) return open[0]!;
    // Every feature done: naming one only says it is done again, so the next step is a new feature.
    throw new ConsortError(
      'invalid-input',
      open.length === 0 ? 'Every feature is done.' : `Several features are open: ${open.join(', ')}.`,
      {
        hint:
          open.length === 0
            ? 'Start the next one with `consort feature new <slug>` (`consort status` lists them all).'
            : `Name the one to run: consort run ${open[0]}.`,
      },
    );
  }
  const match = matchFeature(all, ref);
  if (match) return match;
  throw new ConsortError('invalid-input', `No feature ${ref}.`, { hint: `Features: ${all.join(', ')}.` });
}

export interface ApproveInput {
  ws: Workspace;
  feature: string;
  gate: string;
  approver: string;
  now?: Date;
  /** The pull request's head commit the approval was given on (recorded with it). */
  headSha?: string;
  /** Refuse unless the artifacts still hash to this (what the person was shown when the gate opened). */
  expectedHash?: string;
  /**
   * A person confirms what is approved (the CLI asks on the terminal, showing the flagged lines the
   * feature added, which proxy mode does not pass); false refuses.
   */
  confirm?: (what: {
    feature: string;
    gate: GateName;
    hash: string;
    approver: string;
    flags: readonly string[];
  }) => Promise<boolean>;
}

export async function approveGate(
  input: ApproveInput,
): Promise<{ gate: GateName; hash: string; approver: string; at: string; already: boolean }> {
  if (!(GATES as readonly string[]).includes(input.gate)) {
    throw new ConsortError('invalid-input', `Unknown gate "${input.gate}".`, { hint: `Gates: ${GATES.join(', ')}.` });
  }
  const problem = approverProblem(input.approver);
  if (problem)
    throw new ConsortError('invalid-input', `Cannot approve: ${problem}.`, {
      hint: 'Approve as a named person: --as <name>.',
    });
  const { ws } = input;
  const store = new FeatureStore(ws.dir, input.feature);
  const { state } = await store.load();
  const gate = input.gate as GateName;
  // Only a gate the feature waits at is read (reading merge hashes the whole code tree).
  const waiting = state.gate === gate && (state.step === 'gate' || state.step === 'awaiting-approval');
  const check = waiting
    ? (await readGate(ws, store, gate, state.userFacing)).check
    : { valid: false, problems: [], hash: '', approval: null };
  const at = (input.now ?? new Date()).toISOString();
  const decision = decideApproval({
    feature: input.feature,
    gate: input.gate,
    approver: input.approver,
    state,
    check,
    at,
    where: describeStep(state),
    ...(input.expectedHash !== undefined ? { expectedHash: input.expectedHash } : {}),
    ...(input.headSha ? { headSha: input.headSha } : {}),
  });
  const { approval } = decision;
  if (
    input.confirm &&
    !(await input.confirm({
      feature: input.feature,
      gate,
      hash: approval.hash,
      approver: approval.approver,
      flags: 'flags' in check ? (check.flags ?? []) : [],
    }))
  ) {
    throw new ConsortError(
      'invalid-input',
      `The ${gate} gate of ${input.feature} was not approved: it was not confirmed.`,
      { hint: `Type the first 8 characters of the gate's hash when asked.` },
    );
  }
  // The same person's approval of the same artifacts is already recorded (the dashboard committed
  // it, then posted the command): nothing is written twice, and it is no error.
  const recorded = (await store.gates()).gates[gate]?.approval;
  if (
    recorded &&
    !recorded.proxy &&
    recorded.hash === approval.hash &&
    recorded.approver.toLowerCase() === approval.approver.toLowerCase()
  )
    return { gate, hash: recorded.hash, approver: recorded.approver, at: recorded.at, already: true };
  await store.recordApproval(gate, approval);
  await store.append('events.jsonl', decision.event);
  return { gate, hash: approval.hash, approver: approval.approver, at, already: false };
}

export function describeStep(state: ConductorState): string {
  const item = state.current >= 0 ? state.items[state.current]?.id : undefined;
  switch (state.step) {
    case 'gate':
    case 'awaiting-approval':
      return `${state.step === 'gate' ? 'the' : 'waiting for approval of the'} ${state.gate} gate`;
    case 'escalated':
    case 'stalled':
      return `${state.step}: ${state.escalation?.reason.split('\n')[0] ?? ''}`;
    default:
      return `${state.step}${item ? ` ${item}` : ''}`;
  }
}

export { isStopped };
