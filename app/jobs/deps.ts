/**
 * What the App's jobs are given: the store, the queue, GitHub (per installation), the branch
 * providers, the lane that runs a check (and its ports), and their settings. The App builds these from its
 * adapters; tests pass stand-ins (a fake lane, a GitHub stand-in) for the parts they are not about.
 */
import type { CheckInput, CheckPorts } from '../../src/lanes/check/run.js';
import type { Log } from '../../src/ports/log.js';
import type { CheckReport } from '../../src/report/check-report.js';
import type { RecordsApi } from '../dashboard/github-records.js';
import type { GitHubPort } from '../../src/ports/github.js';
import type { CallContext } from '../github-watch.js';
import type { RepoProviders } from '../providers.js';
import type { JobQueue } from '../queue.js';
import type { Store } from '../store/db.js';

export interface JobSettings {
  /** How long a claimed run stays ours without a heartbeat. */
  leaseSeconds: number;
  /** How often a running job renews its lease and looks for a cancellation. */
  heartbeatMs: number;
  /** While an older run of the same subject finishes: how often to try again, and for how long. */
  busyPollMs: number;
  busyWaitMs: number;
  /** Attempts of a run before an unexpected error is reported on the check run instead of retried. */
  maxAttempts: number;
  /** Apply merged migrations to the parent branch on merge. */
  promote: boolean;
  workspaceRoot?: string;
  maxTarballBytes: number;
  /** The environment a project's suite (and seed command) gets. */
  suiteEnv: NodeJS.ProcessEnv;
  toolVersion: string;
  /** The web address of the GitHub the App talks to (links in check runs): https://github.com, or the GHES host. */
  githubWebUrl: string;
}

export interface AppLog {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** The check lane: plan, then run the plan (the default is src/lanes/check/run.ts's `check`). */
export type Lane = (input: CheckInput) => Promise<CheckReport>;

/** The check lane's ports the App builds once (the provider is chosen per repository, the log per run). */
export type LanePorts = Omit<CheckPorts, 'provider' | 'log'>;

/** The lane's log for one run: the App's log, every line naming the run. */
export function runLog(log: AppLog, runId: number): Log {
  const fields = (f?: Record<string, unknown>) => ({ runId, ...f });
  return {
    debug: () => undefined,
    info: (m, f) => log.info(m.trim(), fields(f)),
    warn: (m, f) => log.warn(m.trim(), fields(f)),
    error: (m, f) => log.error(m.trim(), fields(f)),
  };
}

export interface JobDeps {
  store: Store;
  queue: JobQueue;
  /** GitHub as an installation, for the delivery and run in `context` (named in every log line about the calls). */
  github(installationId: number, context?: CallContext): Promise<GitHubPort>;
  providers: RepoProviders;
  lane: Lane;
  lanePorts: LanePorts;
  settings: JobSettings;
  log: AppLog;
  /** GitHub's records API as an installation, when the dashboard is on (indexing jobs). */
  records?: (installationId: number) => Promise<RecordsApi>;
}

export function jobSettings(
  overrides: Partial<JobSettings> & Pick<JobSettings, 'suiteEnv' | 'toolVersion'>,
): JobSettings {
  const leaseSeconds = overrides.leaseSeconds ?? 60;
  return {
    leaseSeconds,
    heartbeatMs: Math.min(5_000, (leaseSeconds * 1000) / 4),
    busyPollMs: 500,
    busyWaitMs: 10 * 60_000,
    maxAttempts: 3,
    promote: false,
    maxTarballBytes: 512 * 1024 * 1024,
    githubWebUrl: 'https://github.com',
    ...overrides,
  };
}

/** What a run's GitHub calls are for (log lines name the delivery that started it). */
export const runContext = (run: { id: number; deliveryId: string | null }): CallContext => ({
  deliveryId: run.deliveryId,
  runId: run.id,
});

export const silentLog: AppLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** Why a run was aborted when its process no longer owns it: it must not touch GitHub or the store again. */
export class LeaseLost extends Error {
  override readonly name = 'LeaseLost';
}
