/**
 * A feature's folder, `.consort/features/<NNN-slug>/`: the artifacts roles write, the conductor's
 * records (gates, cycles, turns, events) and `state.json`, which holds the conductor's state and
 * the driver's journal (the effects of the current batch and how far it got), so a run resumes
 * after a crash at any point. Appends are idempotent by id; writes are whole-file and atomic.
 */
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { GatesFile } from '../../conductor/artifacts.js';
import { Effect, type CycleRecord } from '../../conductor/effects.js';
import { LogEvent } from '../../conductor/events.js';
import type { FileChange } from '../../conductor/events.js';
import { ConductorState, TurnRecord, type GateName, type ItemStatus } from '../../conductor/state.js';
import { ConsortError } from '../../core/errors.js';
import { appendOwn, readText, writeAtomic } from './record-files.js';

export { readText } from './record-files.js';

export const FEATURES_DIR = '.consort/features';

/** The journal's record of an action that was under way. */
const InFlight = z.object({ index: z.number().int(), base: z.string().nullable() });

export const StateFile = z.object({
  version: z.literal(1),
  state: ConductorState,
  /** The commit the feature started from: its migrations form the baseline database. */
  baseCommit: z.string(),
  pending: z.array(Effect),
  done: z.number().int().min(0),
  inFlight: InFlight.nullable(),
});
export type StateFile = z.infer<typeof StateFile>;

export function featureDirOf(feature: string): string {
  return `${FEATURES_DIR}/${feature}`;
}

/** The conductor's records a turn found uncommitted, kept where the agent cannot write (see `keepPending`). */
const Pending = z.object({ base: z.string(), files: z.record(z.string(), z.string()) });

export class FeatureStore {
  readonly dir: string;
  private readonly ids = new Map<string, Set<string>>();
  /**
   * Every file this store wrote (path relative to the workspace) with its whole text as written:
   * what a turn finds there unchanged is the conductor's, not the agent's (the records are not
   * committed before each turn: they join the turn's commit).
   */
  private readonly written = new Map<string, string>();
  /** Of those, the ones written since the feature's folder was last committed whole. */
  private readonly dirty = new Set<string>();
  /** Whether this process committed the feature's folder whole (so nothing in it is unknown to it). */
  private tracked = false;

  constructor(
    readonly workspace: string,
    readonly feature: string,
  ) {
    this.dir = path.join(workspace, featureDirOf(feature));
  }

  file(name: string): string {
    return path.join(this.dir, name);
  }

  private rel(name: string): string {
    return `${featureDirOf(this.feature)}/${name}`;
  }

  private wrote(name: string, text: string): void {
    this.written.set(this.rel(name), text);
    this.dirty.add(this.rel(name));
  }

  private async put(name: string, text: string): Promise<void> {
    writeAtomic(this.workspace, this.rel(name), text);
    this.wrote(name, text);
  }

  /**
   * The feature's folder was committed whole: everything in it is now in HEAD. What that commit
   * took is still remembered (a rejected turn's commit is dropped by a reset, and `rewrite` puts
   * them back); what earlier commits took is HEAD's to tell from then on.
   */
  committed(): void {
    this.tracked = true;
    for (const rel of [...this.written.keys()]) if (!this.dirty.has(rel)) this.written.delete(rel);
    this.dirty.clear();
  }

  /** Whether everything in the feature's folder is this process's to know (committed whole once, then written by it). */
  get tracksFolder(): boolean {
    return this.tracked;
  }

  /**
   * After an agent's turn: which of the records this store wrote are still exactly as written (the
   * conductor's, whatever git says of them), and which the agent changed or removed (its changes,
   * even where git sees none: a record never committed and now deleted).
   */
  async audit(): Promise<{ ours: Set<string>; changed: FileChange[] }> {
    const ours = new Set<string>();
    const changed: FileChange[] = [];
    for (const [rel, text] of this.written) {
      const now = await readText(path.join(this.workspace, rel));
      if (now === text) ours.add(rel);
      else changed.push({ path: rel, status: now === null ? 'deleted' : 'modified' });
    }
    return { ours, changed };
  }

  /**
   * Put back every record this store wrote as it wrote it (after a revert reset the work tree to a
   * commit without them, or an agent changed one); they are uncommitted again.
   */
  async rewrite(): Promise<void> {
    for (const [rel, text] of this.written) {
      if ((await readText(path.join(this.workspace, rel))) === text) continue;
      writeAtomic(this.workspace, rel, text);
      this.dirty.add(rel);
    }
  }

  /**
   * Before an agent's turn: the records not yet committed (state.json aside, which the journal
   * writes anyway), in the repository's git directory — out of the agent's reach under bubblewrap,
   * and guarded like state.json elsewhere — so that a run killed during the turn and resumed can
   * throw the turn away (back to `base`) and keep them.
   */
  async keepPending(gitDir: string, base: string): Promise<void> {
    const files: Record<string, string> = {};
    for (const rel of this.dirty) if (rel !== this.rel('state.json')) files[rel] = this.written.get(rel)!;
    writeAtomic(gitDir, path.basename(this.pendingFile(gitDir)), JSON.stringify({ base, files }));
  }

  /**
   * Resuming a turn that was interrupted: what `keepPending` kept for that turn's `base` (empty
   * for another base, or nothing kept), to put back with `restorePending` after the turn's changes
   * are thrown away. Only files of this feature's folder.
   */
  async pendingFor(gitDir: string, base: string): Promise<Record<string, string>> {
    const text = await readText(this.pendingFile(gitDir));
    if (text === null) return {};
    const parsed = Pending.safeParse(JSON.parse(text));
    if (!parsed.success || parsed.data.base !== base) return {};
    const prefix = `${featureDirOf(this.feature)}/`;
    return Object.fromEntries(
      Object.entries(parsed.data.files).filter(
        ([rel]) =>
          rel.startsWith(prefix) && !rel.split('/').some((part) => part === '..' || part === '.' || part === ''),
      ),
    );
  }

  async restorePending(files: Record<string, string>): Promise<void> {
    for (const [rel, text] of Object.entries(files)) {
      writeAtomic(this.workspace, rel, text);
      this.written.set(rel, text);
      this.dirty.add(rel);
    }
  }

  async dropPending(gitDir: string): Promise<void> {
    await rm(this.pendingFile(gitDir), { force: true });
  }

  private pendingFile(gitDir: string): string {
    return path.join(gitDir, `consort-${this.feature}.records.json`);
  }

  async exists(): Promise<boolean> {
    return (await readText(this.file('state.json'))) !== null;
  }

  async load(): Promise<StateFile> {
    const text = await readText(this.file('state.json'));
    if (text === null) {
      throw new ConsortError('invalid-input', `No feature ${this.feature} in ${FEATURES_DIR}.`, {
        hint: 'Create it with `consort feature new <slug>`, or list them with `consort status`.',
      });
    }
    const parsed = StateFile.safeParse(JSON.parse(text));
    if (!parsed.success) {
      throw new ConsortError(
        'invalid-input',
        `${featureDirOf(this.feature)}/state.json is not a valid state file: ${parsed.error.issues[0]?.message ?? ''}`,
        {
          hint: 'Restore it from git (git checkout -- .consort); the conductor only reads state it wrote.',
        },
      );
    }
    return parsed.data;
  }

  async save(file: StateFile): Promise<void> {
    await this.put('state.json', `${JSON.stringify(file, null, 2)}\n`);
  }

  private async knownIds(name: string): Promise<Set<string>> {
    let ids = this.ids.get(name);
    if (ids === undefined) {
      const text = (await readText(this.file(name))) ?? '';
      ids = new Set(
        text
          .split('\n')
          .filter(Boolean)
          .map((l) => {
            try {
              return String((JSON.parse(l) as { id?: unknown }).id);
            } catch {
              return '';
            }
          }),
      );
      this.ids.set(name, ids);
    }
    return ids;
  }

  /** Append a JSON line unless a line with the same id is already there (a re-run effect). */
  async append(name: 'turns.jsonl' | 'events.jsonl', record: { id: string }): Promise<void> {
    const ids = await this.knownIds(name);
    if (ids.has(record.id)) return;
    const line = `${JSON.stringify(record)}\n`;
    const before = this.written.get(this.rel(name));
    appendOwn(this.workspace, this.rel(name), line, before);
    this.wrote(name, before !== undefined ? before + line : ((await readText(this.file(name))) ?? line));
    ids.add(record.id);
  }

  async readJsonl<T>(name: 'turns.jsonl' | 'events.jsonl', schema: z.ZodType<T>): Promise<T[]> {
    const text = (await readText(this.file(name))) ?? '';
    return text
      .split('\n')
      .filter(Boolean)
      .flatMap((l) => {
        const parsed = schema.safeParse(JSON.parse(l));
        return parsed.success ? [parsed.data] : [];
      });
  }

  turns(): Promise<TurnRecord[]> {
    return this.readJsonl('turns.jsonl', TurnRecord);
  }

  events(): Promise<LogEvent[]> {
    return this.readJsonl('events.jsonl', LogEvent);
  }

  async writeCycle(record: CycleRecord): Promise<void> {
    await this.put(
      `cycles/cycle-${String(record.cycle).padStart(3, '0')}.json`,
      `${JSON.stringify(record, null, 2)}\n`,
    );
  }

  async writeTranscript(turn: string, text: string): Promise<void> {
    await this.put(`transcripts/${turn}.txt`, text);
  }

  async cycleFiles(): Promise<string[]> {
    const names = await readdir(this.file('cycles')).catch(() => [] as string[]);
    return names
      .filter((n) => /^cycle-\d+\.json$/.test(n))
      .sort()
      .map((n) => `cycles/${n}`);
  }

  /** The conductor advances an item's status in test-list.json, leaving the rest as written. */
  async setItemStatus(item: string, status: ItemStatus): Promise<void> {
    const text = await readText(this.file('test-list.json'));
    if (text === null) return;
    const list = JSON.parse(text) as { items?: { id?: string; status?: string }[] };
    const entry = list.items?.find((i) => i.id === item);
    if (entry === undefined || entry.status === status) return;
    entry.status = status;
    await this.put('test-list.json', `${JSON.stringify(list, null, 2)}\n`);
  }

  async gates(): Promise<GatesFile> {
    const text = await readText(this.file('gates.json'));
    if (text === null) return { version: 1, feature: this.feature, gates: {} };
    const parsed = GatesFile.safeParse(JSON.parse(text));
    if (!parsed.success)
      throw new ConsortError(
        'invalid-input',
        `${featureDirOf(this.feature)}/gates.json is invalid: ${parsed.error.issues[0]?.message ?? ''}`,
        { hint: 'Restore it from git.' },
      );
    return parsed.data;
  }

  async recordApproval(
    gate: GateName,
    approval: { approver: string; at: string; hash: string; proxy: boolean; headSha?: string },
  ): Promise<void> {
    const file = await this.gates();
    const entry = file.gates[gate] ?? { approval: null, history: [] };
    if (entry.history.some((h) => h.at === approval.at && h.hash === approval.hash && h.approver === approval.approver))
      return;
    file.gates[gate] = { approval, history: [...entry.history, approval] };
    await this.put('gates.json', `${JSON.stringify(file, null, 2)}\n`);
  }
}

/** Feature folders in the workspace, oldest first. */
export async function listFeatures(workspace: string): Promise<string[]> {
  const names = await readdir(path.join(workspace, FEATURES_DIR)).catch(() => [] as string[]);
  return names.filter((n) => /^\d{3,}-[a-z0-9][a-z0-9-]*$/.test(n)).sort();
}
