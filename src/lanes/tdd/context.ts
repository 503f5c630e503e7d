/** What the TDD lane driver's effect executors share for one run. */
import type { ConsortConfig } from '../../config/schema.js';
import type { Approval } from '../../conductor/events.js';
import type { GateName } from '../../conductor/state.js';
import type { BranchProvider } from '../../ports/branch-provider.js';
import type { ProcessRunner } from '../../ports/process.js';
import type { Workspace } from '../../ports/workspace.js';
import type { Dependencies, ProofTrees } from './clean-tree.js';
import type { Branches } from './database.js';
import type { BackendFactory } from './policy.js';
import type { FeatureStore } from './store.js';

export type ApprovalCounts = (gate: GateName, approval: Approval) => Promise<string | undefined>;

export interface LaneContext {
  ws: Workspace;
  config: ConsortConfig;
  feature: string;
  store: FeatureStore;
  provider: BranchProvider;
  branches: Branches;
  backends: BackendFactory;
  /** The pristine dependency install proofs link to (taken before the run's first turn). */
  deps?: Dependencies;
  /** The next proof's worktree, begun while the turn before it runs. */
  trees?: ProofTrees;
  /** The suite's environment (proofs, baselines). */
  env: NodeJS.ProcessEnv;
  /** Starts the suite of every proof. */
  processes: ProcessRunner;
  /** The agents' environment: may hold a model API key the suite must not see. */
  agentEnv: NodeJS.ProcessEnv;
  /** Values redacted from transcripts and summaries before they are written. */
  secrets: readonly string[];
  signal?: AbortSignal;
  /** Progress lines (stderr in the CLI). */
  log: (line: string) => void;
  onSuiteOutput?: (chunk: string) => void;
  /**
   * Whether a gate's recorded approval may pass the gate: a reason when it may not (the approval is
   * then treated as absent, and events.jsonl says why). Unset (the CLI, where `consort approve`
   * asks on the terminal) every recorded approval counts; on a pull request the branch's
   * gates.json is anyone's who can push, so the shell checks the approval's source.
   */
  approvalCounts?: ApprovalCounts;
  /**
   * Called for `surface-gate`: the CLI prints it; the App and Action post it. `problems` keep the
   * gate from being approved; `flags` do not, they are what the person approving reads first.
   */
  onGate?: (gate: string, hash: string, problems: readonly string[], flags: readonly string[]) => void;
  now: () => Date;
  /** Where the driver's own time goes (for `npm run bench:conductor`). */
  time: <T>(label: string, fn: () => Promise<T>) => Promise<T>;
}

/** Values in an environment that look like credentials (…_API_KEY, …_TOKEN, …_SECRET, …PASSWORD). */
export function secretValues(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(env)
    .flatMap(([key, value]) =>
      /(_API_KEY|_TOKEN|_SECRET|PASSWORD)$/i.test(key) && value && value.length >= 8 ? [value] : [],
    )
    .sort((a, b) => b.length - a.length);
}

export function timer(onTiming?: (label: string, ms: number) => void): LaneContext['time'] {
  if (onTiming === undefined) return (_label, fn) => fn();
  return async (label, fn) => {
    const started = performance.now();
    try {
      return await fn();
    } finally {
      onTiming(label, performance.now() - started);
    }
  };
}
