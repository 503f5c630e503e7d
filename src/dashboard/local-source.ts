/**
 * The local adapter of the dashboard port: a working copy's `.consort/features/<F>/` records (as
 * the TDD lane's FeatureStore writes them), its check reports in `.consort/checks/*.json` (as
 * `consort check --json <file>` writes them) and the branches of the provider the CLI opened.
 * Gate approval goes through `approveGate`, exactly as `consort approve` does.
 */
import { existsSync, readdirSync, watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { GatesFile } from '../conductor/artifacts.js';
import { CycleRecord } from '../conductor/effects.js';
import { LogEvent, type GateCheck } from '../conductor/events.js';
import { TurnRecord, type ConductorState, type GateName } from '../conductor/state.js';
import { localWorkspaces } from '../git/local-workspace.js';
import type { Workspace } from '../ports/workspace.js';
import { approveGate } from '../lanes/tdd/feature.js';
import { readGate } from '../lanes/tdd/gate-check.js';
import { FEATURES_DIR, FeatureStore, listFeatures, StateFile } from '../lanes/tdd/store.js';
import { diffStatOf, gitCounts, turnSpan } from './diff-stat.js';
import { FileCache, parseJson } from './file-cache.js';
import type {
  ApproveRequest,
  BranchView,
  CheckRunView,
  DashboardSource,
  FeatureDetail,
  FeatureSummary,
  Page,
  TurnDetail,
} from './port.js';
import { ARTIFACT_NAME, checkRunOf, gateViews, paginate, summarize, transcriptExcerpt } from './records.js';

export const CHECKS_DIR = '.consort/checks';
export { ARTIFACT_NAME };

export interface LocalSourceOptions {
  root: string;
  /** The provider's branches (the CLI opens the provider once for the server's life). */
  branches?: () => Promise<BranchView[]>;
  /** False: no approvals from this dashboard (`--read-only`). */
  canApprove?: boolean;
  /** Debounce of file-change notifications. */
  debounceMs?: number;
}

const asTurn = (v: unknown) => {
  const p = TurnRecord.safeParse(v);
  return p.success ? p.data : undefined;
};
const asEvent = (v: unknown) => {
  const p = LogEvent.safeParse(v);
  return p.success ? p.data : undefined;
};

export class LocalSource implements DashboardSource {
  readonly name: string;
  private readonly cache = new FileCache();
  private readonly listeners = new Set<(change: { feature: string | null }) => void>();
  private readonly watchers = new Map<string, FSWatcher>();
  private timer: NodeJS.Timeout | null = null;
  private changed = new Set<string | null>();
  private ws: Promise<Workspace | null> | null = null;
  private readonly summaries = new Map<
    string,
    { state: ConductorState; turns: TurnRecord[]; events: LogEvent[]; gates: GatesFile; value: FeatureSummary }
  >();
  private sortedChecks: { from: CheckRunView[]; sorted: CheckRunView[] } | null = null;
  private readonly gateReadings = new Map<string, { fingerprint: string; check: GateCheck }>();
  approve?: (request: ApproveRequest) => ReturnType<NonNullable<DashboardSource['approve']>>;

  constructor(private readonly options: LocalSourceOptions) {
    this.name = path.basename(options.root);
    if (options.canApprove !== false)
      this.approve = async (r) => {
        const { gate, hash, approver, at } = await approveGate({
          ws: await localWorkspaces.open(options.root),
          feature: r.feature,
          gate: r.gate,
          approver: r.approver,
          expectedHash: r.expectedHash,
        });
        return { gate, hash, approver, at };
      };
  }

  private store(feature: string): FeatureStore {
    return new FeatureStore(this.options.root, feature);
  }

  private async state(feature: string): Promise<ConductorState | null> {
    const file = this.store(feature).file('state.json');
    return this.cache.get(
      file,
      (t) => {
        const p = StateFile.safeParse(parseJson(t));
        return p.success ? p.data.state : null;
      },
      null,
    );
  }

  private turnsOf(feature: string) {
    return this.cache.lines(this.store(feature).file('turns.jsonl'), asTurn);
  }

  private eventsOf(feature: string) {
    return this.cache.lines(this.store(feature).file('events.jsonl'), asEvent);
  }

  private gatesFile(feature: string): Promise<GatesFile> {
    const empty: GatesFile = { version: 1, feature, gates: {} };
    return this.cache.get(
      this.store(feature).file('gates.json'),
      (t) => {
        const p = GatesFile.safeParse(parseJson(t));
        return p.success ? p.data : empty;
      },
      empty,
    );
  }

  /** The git workspace, opened once (each opening runs git four times). */
  private workspace(): Promise<Workspace | null> {
    this.ws ??= localWorkspaces.open(this.options.root).catch(() => null);
    return this.ws;
  }

  /**
   * A gate's reading, reused while nothing it depends on changed: the gated files and gates.json
   * (size and mtime) and, when the gate covers the code, where HEAD points (HEAD and its reflog).
   */
  private async readGateCached(
    feature: string,
    gate: GateName,
    userFacing: boolean,
    files: readonly string[],
  ): Promise<GateCheck | null> {
    const ws = await this.workspace();
    if (ws === null) return null;
    const store = this.store(feature);
    // Cycle records are written by rename, so the folder's mtime stands for all of them (one stat, not hundreds).
    const paths: (string | null)[] = files.map((f) =>
      f === 'git:tree' || f.startsWith('cycles/') ? null : store.file(f),
    );
    if (files.some((f) => f.startsWith('cycles/'))) paths.push(store.file('cycles'));
    if (files.includes('git:tree')) paths.push(path.join(ws.gitDir, 'HEAD'), path.join(ws.gitDir, 'logs', 'HEAD'));
    paths.push(store.file('gates.json'));
    const stamps = await Promise.all(
      paths
        .filter((p): p is string => p !== null)
        .map((p) =>
          stat(p).then(
            (s) => `${s.size}:${s.mtimeMs}`,
            () => '-',
          ),
        ),
    );
    const key = `${feature}\0${gate}\0${String(userFacing)}`;
    const fingerprint = stamps.join('|');
    const hit = this.gateReadings.get(key);
    if (hit !== undefined && hit.fingerprint === fingerprint) return hit.check;
    const check = (await readGate(ws, store, gate, userFacing)).check;
    this.gateReadings.set(key, { fingerprint, check });
    return check;
  }

  /** Summing 1,000 turns on every request is wasted work: the parsed records are reused objects, so identity says "unchanged". */
  private summary(state: ConductorState, turns: TurnRecord[], events: LogEvent[], gates: GatesFile): FeatureSummary {
    const hit = this.summaries.get(state.feature);
    if (hit && hit.state === state && hit.turns === turns && hit.events === events && hit.gates === gates)
      return hit.value;
    const value = summarize({ state, turns, events, gates });
    this.summaries.set(state.feature, { state, turns, events, gates, value });
    return value;
  }

  private async known(feature: string): Promise<boolean> {
    return (await listFeatures(this.options.root)).includes(feature);
  }

  async features() {
    const out = [];
    for (const feature of await listFeatures(this.options.root)) {
      const state = await this.state(feature);
      if (state === null) continue;
      const [turns, events, gates] = await Promise.all([
        this.turnsOf(feature),
        this.eventsOf(feature),
        this.gatesFile(feature),
      ]);
      out.push(this.summary(state, turns, events, gates));
    }
    return out;
  }

  async feature(feature: string): Promise<FeatureDetail | null> {
    if (!(await this.known(feature))) return null;
    const state = await this.state(feature);
    if (state === null) return null;
    const store = this.store(feature);
    const [turns, events, gatesFile, cycles] = await Promise.all([
      this.turnsOf(feature),
      this.eventsOf(feature),
      this.gatesFile(feature),
      this.cache.dir(
        store.file('cycles'),
        (n) => /^cycle-\d+\.json$/.test(n),
        (_n, t) => {
          const p = CycleRecord.safeParse(parseJson(t));
          return p.success ? p.data : undefined;
        },
      ),
    ]);
    const cycleFiles = cycles.map((c) => `cycles/cycle-${String(c.cycle).padStart(3, '0')}.json`);
    // Reading a gate hashes its artifacts (and, for merge/deploy, the code tree): only for gates a person can act on or was shown.
    const gates = await gateViews(
      state,
      gatesFile,
      cycleFiles,
      (gate, files) => this.readGateCached(feature, gate, state.userFacing, files),
      events,
    );
    return { summary: this.summary(state, turns, events, gatesFile), cycles, gates, events };
  }

  async turns(feature: string, page: number, pageSize: number): Promise<Page<TurnRecord> | null> {
    if (!(await this.known(feature))) return null;
    return paginate(await this.turnsOf(feature), page, pageSize);
  }

  async allTurns(feature: string): Promise<TurnRecord[] | null> {
    if (!(await this.known(feature))) return null;
    return this.turnsOf(feature);
  }

  async turn(feature: string, id: string): Promise<TurnDetail | null> {
    if (!(await this.known(feature))) return null;
    const record = (await this.turnsOf(feature)).findLast((t) => t.id === id);
    if (record === undefined) return null;
    // The id comes from our own parsed record, so it names a file inside transcripts/ (no path tricks).
    const transcript = /^[A-Za-z0-9._-]+$/.test(record.id)
      ? await this.cache.get(
          this.store(feature).file(`transcripts/${record.id}.txt`),
          (t) => transcriptExcerpt(t),
          null,
        )
      : null;
    const span = turnSpan(await this.turnsOf(feature), record.id, 'HEAD');
    const counts = span ? await gitCounts(this.options.root, span.from, span.to, record.filesChanged) : null;
    return { record, transcript, diffStat: diffStatOf(record, counts) };
  }

  private async allChecks(): Promise<CheckRunView[]> {
    const dir = path.join(this.options.root, CHECKS_DIR);
    const runs = await this.cache.dir(
      dir,
      (n) => n.endsWith('.json'),
      (n, t) => checkRunOf(n.replace(/\.json$/, ''), parseJson(t)),
      'check',
    );
    if (this.sortedChecks?.from !== runs) {
      const sorted = [...runs].sort((a, b) =>
        a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : a.id < b.id ? 1 : -1,
      );
      this.sortedChecks = { from: runs, sorted };
    }
    return this.sortedChecks.sorted;
  }

  async checks(page: number, pageSize: number): Promise<Page<CheckRunView>> {
    return paginate(await this.allChecks(), page, pageSize);
  }

  async lastCheckReport(): Promise<unknown> {
    const last = (await this.allChecks())[0];
    if (last === undefined) return null;
    return this.cache.get(path.join(this.options.root, CHECKS_DIR, `${last.id}.json`), parseJson, null, 'report');
  }

  async artifact(feature: string, file: string): Promise<string | null> {
    if (!ARTIFACT_NAME.test(file) || !(await this.known(feature))) return null;
    return this.cache.get(this.store(feature).file(file), (t) => t, null, 'text');
  }

  async branches(): Promise<BranchView[]> {
    return this.options.branches ? this.options.branches() : [];
  }

  watch(listener: (change: { feature: string | null }) => void): () => void {
    this.listeners.add(listener);
    if (this.watchers.size === 0) this.startWatching();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.close();
    };
  }

  /** Watches are armed when watch() returns (see startWatching). */
  watchReady(): Promise<void> {
    return Promise.resolve();
  }

  private notify(file: string | null): void {
    const rel = file?.split(path.sep).join('/') ?? '';
    const m = /^features\/([^/]+)\//.exec(rel) ?? /^features\/([^/]+)$/.exec(rel);
    this.changed.add(m ? m[1]! : null);
    if (this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      const changed = [...this.changed];
      this.changed.clear();
      for (const feature of changed) for (const l of this.listeners) l({ feature });
    }, this.options.debounceMs ?? 100);
  }

  /**
   * One non-recursive watch per folder (`.consort/`, `features/`, each feature and its `cycles/`,
   * `checks/`), added as folders appear. Not `fs.watch(…, { recursive: true })`: on Linux, Node
   * arms that by walking and stat-ing every file under it, synchronously (measured: 230 ms for
   * 3,000 record files, with the server blocked), and a page that opens re-arms it.
   */
  private startWatching(): void {
    const consort = path.join(this.options.root, path.dirname(FEATURES_DIR));
    if (!existsSync(consort)) {
      // No records yet: watch the repository's top folder until `.consort/` appears.
      this.arm(this.options.root, (name) => {
        if (name === '.consort' && existsSync(consort)) {
          this.closeWatchers();
          this.startWatching();
          this.notify(null);
        }
      });
      return;
    }
    this.arm(consort, (name) => {
      if (name === 'features' || name === 'checks') this.armFolders(consort);
      this.notify(name);
    });
    this.armFolders(consort);
  }

  private armFolders(consort: string): void {
    const features = path.join(consort, 'features');
    this.arm(path.join(consort, 'checks'), () => this.notify('checks'));
    this.arm(features, (name) => {
      if (name) this.armFeature(features, name);
      this.notify(name ? `features/${name}` : null);
    });
    for (const name of existsSync(features) ? readdirSync(features) : []) this.armFeature(features, name);
  }

  private armFeature(features: string, name: string): void {
    const dir = path.join(features, name);
    this.arm(dir, (file) => {
      if (file === 'cycles')
        this.arm(path.join(dir, 'cycles'), (c) => this.notify(`features/${name}/cycles/${c ?? ''}`));
      this.notify(`features/${name}/${file ?? ''}`);
    });
    this.arm(path.join(dir, 'cycles'), (c) => this.notify(`features/${name}/cycles/${c ?? ''}`));
  }

  private arm(dir: string, onChange: (name: string | null) => void): void {
    if (this.watchers.has(dir)) return;
    try {
      const w = watch(dir, (_e, name) => onChange(typeof name === 'string' ? name : null));
      w.on('error', () => {
        w.close();
        this.watchers.delete(dir);
      });
      this.watchers.set(dir, w);
    } catch {
      // Not there (yet): its parent's watch arms it when it appears.
    }
  }

  private closeWatchers(): void {
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }

  close(): void {
    this.closeWatchers();
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
