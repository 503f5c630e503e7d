/**
 * The App's adapter of the dashboard port: one repository's features as the index holds them at
 * each pull request's head, its check history, and its database branches. What parses slowly
 * (cycle records, events, a feature's 1,000 turns) is kept per blob or per indexing, so a page
 * does the SQL it needs and little more. Approval is given by the host (it knows who is signed in).
 */
import type { GatesFile } from '../../src/conductor/artifacts.js';
import { checkGate } from '../../src/conductor/approval.js';
import { CycleRecord } from '../../src/conductor/effects.js';
import { LogEvent, type GateCheck } from '../../src/conductor/events.js';
import type { GatedFile } from '../../src/conductor/gates.js';
import type { ConductorState, GateName, TurnRecord } from '../../src/conductor/state.js';
import type {
  ApproveRequest,
  ApproveResult,
  BranchView,
  CheckRunView,
  DashboardSource,
  FeatureDetail,
  FeatureSummary,
  Page,
  TurnDetail,
} from '../../src/dashboard/port.js';
import { diffStatOf, turnSpan, type Counts } from '../../src/dashboard/diff-stat.js';
import { ARTIFACT_NAME, gateViews, paginate, transcriptExcerpt } from '../../src/dashboard/records.js';
import { STAGE_ORDER } from '../../src/report/check-report.js';
import type { Store } from '../store/db.js';
import type { RecordsApi } from './github-records.js';
import type { ChangeHub } from './changes.js';
import {
  checkPage,
  featureFile,
  featureFiles,
  fillContent,
  getFeature,
  lastReport,
  listFeatures,
  turnRecords,
  type IndexedFeature,
  type IndexedRepository,
} from './index-store.js';

/** Parsed blobs and turn lists, shared by every request of the App process. */
export class IndexCache {
  private readonly blobs = new Map<string, unknown>();
  private readonly turns = new Map<string, { stamp: number; turns: TurnRecord[] }>();

  peek<T>(key: string): T | undefined {
    return this.blobs.get(key) as T | undefined;
  }

  parsed<T>(blobSha: string, parse: () => T): T {
    if (this.blobs.has(blobSha)) return this.blobs.get(blobSha) as T;
    const value = parse();
    if (this.blobs.size >= 20_000) this.blobs.delete(this.blobs.keys().next().value!);
    this.blobs.set(blobSha, value);
    return value;
  }

  async allTurns(db: Store, f: IndexedFeature): Promise<TurnRecord[]> {
    const key = `${f.repositoryId}:${f.pr}:${f.feature}`;
    const hit = this.turns.get(key);
    if (hit && hit.stamp === f.indexedAt.getTime()) return hit.turns;
    const turns = (await turnRecords(db.pool, f)) as TurnRecord[];
    if (this.turns.size >= 200) this.turns.delete(this.turns.keys().next().value!);
    this.turns.set(key, { stamp: f.indexedAt.getTime(), turns });
    return turns;
  }
}

export interface AppSourceOptions {
  store: Store;
  repository: IndexedRepository;
  cache: IndexCache;
  changes: ChangeHub;
  /** GitHub as the App's installation (transcripts are fetched when first opened). */
  records: () => Promise<RecordsApi>;
  branches?: () => Promise<BranchView[]>;
  /** Present when the signed-in person may approve (write access). */
  approve?: (request: ApproveRequest) => Promise<ApproveResult>;
  /** Asked before each change is handed to a watcher: false drops it (the person lost read access). */
  stillReadable?: () => Promise<boolean>;
}

const jsonOf = (text: string | null): unknown => {
  try {
    return text === null ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
};

function toCheckView(r: {
  runId: number;
  pr: number | null;
  headSha: string;
  conclusion: string;
  startedAt: Date;
  durationMs: number;
  report: unknown;
}): CheckRunView {
  const stages =
    (r.report as { stages?: Record<string, { status?: string; durationMs?: number; summary?: string }> } | null)
      ?.stages ?? null;
  return {
    id: String(r.runId),
    pr: r.pr,
    headSha: r.headSha,
    conclusion: r.conclusion === 'success' ? 'success' : r.conclusion === 'failure' ? 'failure' : 'error',
    startedAt: r.startedAt.toISOString(),
    durationMs: r.durationMs,
    stages:
      stages === null
        ? []
        : STAGE_ORDER.filter((n) => stages[n]).map((name) => ({
            name,
            status: String(stages[name]!.status ?? ''),
            durationMs: Number(stages[name]!.durationMs ?? 0),
            summary: String(stages[name]!.summary ?? ''),
          })),
  };
}

export class AppSource implements DashboardSource {
  readonly name: string;
  readonly approve?: (request: ApproveRequest) => Promise<ApproveResult>;

  constructor(private readonly o: AppSourceOptions) {
    this.name = `${o.repository.owner}/${o.repository.repo}`;
    if (o.approve) this.approve = o.approve;
  }

  private get id(): number {
    return this.o.repository.repositoryId;
  }

  async features(): Promise<FeatureSummary[]> {
    const rows = await listFeatures(this.o.store.pool, this.id);
    return rows
      .map((r) => ({ ...(r.summary as FeatureSummary), pr: r.pr }))
      .sort((a, b) => a.feature.localeCompare(b.feature));
  }

  private async cycles(f: IndexedFeature): Promise<{ cycles: CycleRecord[]; files: string[] }> {
    const rows = await featureFiles(this.o.store.pool, f, 'cycles/');
    const cycles: CycleRecord[] = [];
    const files: string[] = [];
    for (const row of rows) {
      if (!/^cycles\/cycle-\d+\.json$/.test(row.path)) continue;
      files.push(row.path);
      const c = this.o.cache.parsed(row.blobSha, () => {
        const p = CycleRecord.safeParse(jsonOf(row.content));
        return p.success ? p.data : null;
      });
      if (c) cycles.push(c);
    }
    return { cycles, files };
  }

  async feature(feature: string): Promise<FeatureDetail | null> {
    const f = await getFeature(this.o.store.pool, this.id, feature);
    if (!f) return null;
    const state = f.state as ConductorState;
    const gatesFile = f.gates as GatesFile;
    const [{ cycles, files: cycleFiles }, all] = await Promise.all([
      this.cycles(f),
      featureFiles(this.o.store.pool, f),
    ]);
    const byPath = new Map(all.map((r) => [r.path, r]));
    const eventsRow = byPath.get('events.jsonl');
    const events = eventsRow
      ? this.o.cache.parsed(eventsRow.blobSha, () =>
          (eventsRow.content ?? '').split('\n').flatMap((l) => {
            const p = LogEvent.safeParse(jsonOf(l));
            return p.success ? [p.data] : [];
          }),
        )
      : [];
    const gates = await gateViews(
      state,
      gatesFile,
      cycleFiles,
      (gate, files, approval) => this.reading(f, gate, files, byPath, approval),
      events,
    );
    return { summary: { ...(f.summary as FeatureSummary), pr: f.pr }, cycles, gates, events };
  }

  /** The gate's artifacts as indexed at the head, checked as the conductor checks them. */
  private reading(
    f: IndexedFeature,
    gate: GateName,
    files: readonly string[],
    byPath: Map<string, { blobSha: string; content: string | null }>,
    approval: GateCheck['approval'],
  ) {
    const key = `gate:${gate}:${f.codeTreeHash ?? '-'}:${files.map((p) => byPath.get(p)?.blobSha ?? '-').join(',')}`;
    return this.o.cache.parsed(key, () => {
      const gated: GatedFile[] = files.map((file) => ({
        file,
        content: file === 'git:tree' ? f.codeTreeHash : (byPath.get(file)?.content ?? null),
      }));
      return checkGate(gated, approval ?? null).check;
    });
  }

  async turns(feature: string, page: number, pageSize: number): Promise<Page<TurnRecord> | null> {
    const f = await getFeature(this.o.store.pool, this.id, feature);
    if (!f) return null;
    const total = (f.summary as FeatureSummary).turns;
    const shape = paginate(new Array<undefined>(total), page, pageSize);
    const items = (await turnRecords(
      this.o.store.pool,
      f,
      (shape.page - 1) * shape.pageSize,
      shape.pageSize,
    )) as TurnRecord[];
    return { ...shape, items };
  }

  async allTurns(feature: string): Promise<TurnRecord[] | null> {
    const f = await getFeature(this.o.store.pool, this.id, feature);
    return f ? this.o.cache.allTurns(this.o.store, f) : null;
  }

  async turn(feature: string, id: string): Promise<TurnDetail | null> {
    const f = await getFeature(this.o.store.pool, this.id, feature);
    if (!f) return null;
    const record = (await this.o.cache.allTurns(this.o.store, f)).findLast((t) => t.id === id);
    if (!record) return null;
    let transcript: TurnDetail['transcript'] = null;
    if (/^[A-Za-z0-9._-]+$/.test(record.id)) {
      const row = await featureFile(this.o.store.pool, f, `transcripts/${record.id}.txt`);
      if (row) {
        let text = row.content;
        if (text === null) {
          text = await (await this.o.records()).blob({ owner: f.owner, repo: f.repo }, row.blobSha);
          await fillContent(this.o.store.pool, this.id, row.blobSha, text);
        }
        transcript = transcriptExcerpt(text);
      }
    }
    const span = turnSpan(await this.o.cache.allTurns(this.o.store, f), record.id, f.headSha);
    let counts: Counts | null = null;
    if (span && record.filesChanged.length > 0) {
      // Per repository: the commits come from agent-written records, which may name another repository's.
      const key = `compare:${this.id}:${span.from}:${span.to}`;
      counts = this.o.cache.peek<Counts>(key) ?? null;
      if (counts === null) {
        counts = await (
          await this.o.records()
        )
          .compare({ owner: f.owner, repo: f.repo }, span.from, span.to, record.filesChanged)
          .catch(() => null);
        if (counts) this.o.cache.parsed(key, () => counts);
      }
    }
    return { record, transcript, diffStat: diffStatOf(record, counts) };
  }

  async checks(page: number, pageSize: number): Promise<Page<CheckRunView>> {
    const size = Math.max(1, Math.min(500, Math.floor(pageSize)));
    const first = await checkPage(this.o.store.pool, this.id, (Math.max(1, Math.floor(page) || 1) - 1) * size, size);
    const pages = Math.max(1, Math.ceil(first.total / size));
    const p = Math.max(1, Math.min(pages, Math.floor(page) || 1));
    const rows =
      p === Math.max(1, Math.floor(page) || 1)
        ? first.rows
        : (await checkPage(this.o.store.pool, this.id, (p - 1) * size, size)).rows;
    return { items: rows.map(toCheckView), total: first.total, page: p, pageSize: size };
  }

  lastCheckReport(): Promise<unknown> {
    return lastReport(this.o.store.pool, this.id);
  }

  async branches(): Promise<BranchView[]> {
    return this.o.branches ? this.o.branches() : [];
  }

  async artifact(feature: string, file: string): Promise<string | null> {
    if (!ARTIFACT_NAME.test(file)) return null;
    const f = await getFeature(this.o.store.pool, this.id, feature);
    if (!f) return null;
    return (await featureFile(this.o.store.pool, f, file))?.content ?? null;
  }

  watch(listener: (change: { feature: string | null }) => void): () => void {
    const { stillReadable } = this.o;
    if (!stillReadable) return this.o.changes.subscribe(this.id, listener);
    return this.o.changes.subscribe(this.id, (change) => {
      void stillReadable().then((ok) => {
        if (ok) listener(change);
      });
    });
  }

  watchReady(): Promise<void> {
    return this.o.changes.ready();
  }
}
