/**
 * The dashboard's data port: what every view reads, whichever host serves it. The local host
 * (`consort dashboard`) reads a repository's `.consort/` records and the local provider's branches;
 * the App host reads what it indexed from each pull request's head and its own check runs. Both
 * hand the same shapes to the same pure view models and pages, and the JSON endpoints return
 * exactly these shapes (documented in docs/dashboard.md).
 */
import type { CycleRecord } from '../conductor/effects.js';
import type { LogEvent } from '../conductor/events.js';
import type { GateName, Item, Phase, Step, TurnRecord } from '../conductor/state.js';

export const DASHBOARD_API_VERSION = 1;

export interface FeatureSummary {
  feature: string;
  phase: Phase;
  step: Step;
  /** One line, as `consort status` says it ("green T2", "waiting for approval of the spec gate"). */
  where: string;
  /** The test-list item being built, or null. */
  item: string | null;
  /** The gate the feature waits at (approval pending), or null. */
  openGate: GateName | null;
  items: Item[];
  turns: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  agentMs: number;
  escalation: { reason: string; step: string; at: string } | null;
  /** The latest record's time (turn, event or approval), ISO; null when nothing happened yet. */
  updatedAt: string | null;
  /** The pull request the feature is built on (App host), or null. */
  pr: number | null;
}

export type GateStatus = 'pending' | 'approved' | 'stale' | 'not-reached';

export interface GateView {
  gate: GateName;
  status: GateStatus;
  /** The artifacts' current hash (normalized, as `/consort approve` binds it). */
  hash: string;
  /** Every gated artifact present and schema-valid. */
  valid: boolean;
  problems: string[];
  /**
   * Lines the feature added that look for a test environment or reach into a test framework, as
   * the run surfaced them for these artifacts (the merge gate): no problem, a person may approve,
   * having read them; proxy mode does not.
   */
  flags: string[];
  /** The files a person reads before approving (inside the feature folder; `git:tree` is the code). */
  files: string[];
  approval: { approver: string; at: string; hash: string; proxy: boolean; headSha?: string } | null;
  history: { approver: string; at: string; hash: string; proxy: boolean }[];
}

export interface FeatureDetail {
  summary: FeatureSummary;
  cycles: CycleRecord[];
  gates: GateView[];
  events: LogEvent[];
}

export interface TurnDetail {
  record: TurnRecord;
  /** The last lines of the transcript (already redacted when it was written), or null. */
  transcript: { text: string; clipped: boolean; lines: number } | null;
  /** Lines added/removed per file, when the host can tell (git); otherwise only the paths. */
  diffStat: { path: string; added: number | null; removed: number | null }[];
}

export interface CheckRunView {
  id: string;
  pr: number | null;
  headSha: string | null;
  conclusion: 'success' | 'failure' | 'error' | 'cancelled';
  startedAt: string;
  durationMs: number;
  /** Stage name → duration and status. */
  stages: { name: string; status: string; durationMs: number; summary: string }[];
}

export interface BranchView {
  name: string;
  parent: string | null;
  gitBranch: string | null;
  pr: number | null;
  createdAt: string;
  expiresAt: string | null;
  /** Bytes, when the provider can tell. */
  sizeBytes: number | null;
  mode: string | null;
}

export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  pageSize: number;
}

export interface ApproveRequest {
  feature: string;
  gate: string;
  approver: string;
  /** What the person was shown: refused if the artifacts changed since. */
  expectedHash: string;
}

export interface ApproveResult {
  gate: GateName;
  hash: string;
  approver: string;
  at: string;
}

/** One repository's records as a host sees them. */
export interface DashboardSource {
  /** How the repository is named on pages (`owner/name`, or the folder for the local host). */
  readonly name: string;
  features(): Promise<FeatureSummary[]>;
  feature(feature: string): Promise<FeatureDetail | null>;
  /** A feature's turns in record order (1-based page). */
  turns(feature: string, page: number, pageSize: number): Promise<Page<TurnRecord> | null>;
  /** All turns of a feature (charts summarise them; records are small). */
  allTurns(feature: string): Promise<TurnRecord[] | null>;
  turn(feature: string, id: string): Promise<TurnDetail | null>;
  /** Newest first. */
  checks(page: number, pageSize: number): Promise<Page<CheckRunView>>;
  /** The last check's whole report (CheckReport JSON), or null. */
  lastCheckReport(): Promise<unknown>;
  branches(): Promise<BranchView[]>;
  /** An artifact's text (`feature-spec.json`, `cycles/cycle-001.json`…) for reading before approving; null when absent. */
  artifact?(feature: string, file: string): Promise<string | null>;
  /** Undefined when this host cannot approve (read-only). */
  approve?(request: ApproveRequest): Promise<ApproveResult>;
  /** Call `listener` (debounced) when records change; returns the unsubscribe. */
  watch(listener: (change: { feature: string | null }) => void): () => void;
  /** Resolves once changes made from now on reach the listeners (the event stream opens only then). */
  watchReady?(): Promise<void>;
}
