/**
 * A feature's folder, `.consort/features/<NNN-slug>/`: the artifacts roles write, the conductor's
 * records (gates, cycles, turns, events) and `state.json`, which holds the conductor's state and
 * the driver's journal (the effects of the current batch and how far it got), so a run resumes
 * after a crash at any point. Appends are idempotent by id; writes are whole-file and atomic.
 */
import { appendFile, mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { GatesFile } from '../../conductor/artifacts.js';
import { Effect, type CycleRecord } from '../../conductor/effects.js';
import { LogEvent } from '../../conductor/events.js';
import { ConductorState, TurnRecord, type GateName, type ItemStatus } from '../../conductor/state.js';
import { ConsortError } from '../../core/errors.js';

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

async function writeAtomic(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, text);
  await rename(temp, file);
}

export async function readText(file: string): Promise<string | null> {
  return readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT' || e.code === 'EISDIR') return null;
    throw e;
  });
}

export class FeatureStore {
  readonly dir: string;
  private readonly ids = new Map<string, Set<string>>();
  /** The text of state.json as this process last wrote it. */
  private savedText: string | null = null;

  constructor(
    readonly workspace: string,
    readonly feature: string,
  ) {
    this.dir = path.join(workspace, featureDirOf(feature));
  }

  file(name: string): string {
    return path.join(this.dir, name);
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
    this.savedText = `${JSON.stringify(file, null, 2)}\n`;
    await writeAtomic(this.file('state.json'), this.savedText);
  }

  /** Whether state.json is exactly what the driver wrote (so a change to it is not an agent's). */
  async stateIsOurs(): Promise<boolean> {
    return this.savedText !== null && (await readText(this.file('state.json'))) === this.savedText;
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
    await mkdir(this.dir, { recursive: true });
    await appendFile(this.file(name), `${JSON.stringify(record)}\n`);
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
    await writeAtomic(
      this.file(`cycles/cycle-${String(record.cycle).padStart(3, '0')}.json`),
      `${JSON.stringify(record, null, 2)}\n`,
    );
  }

  async writeTranscript(turn: string, text: string): Promise<void> {
    await writeAtomic(this.file(`transcripts/${turn}.txt`), text);
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
    await writeAtomic(this.file('test-list.json'), `${JSON.stringify(list, null, 2)}\n`);
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
    await writeAtomic(this.file('gates.json'), `${JSON.stringify(file, null, 2)}\n`);
  }
}

/** Feature folders in the workspace, oldest first. */
export async function listFeatures(workspace: string): Promise<string[]> {
  const names = await readdir(path.join(workspace, FEATURES_DIR)).catch(() => [] as string[]);
  return names.filter((n) => /^\d{3,}-[a-z0-9][a-z0-9-]*$/.test(n)).sort();
}
