/**
 * Follows each repository's HEAD and pairs on every switch by running `consort pair --json`;
 * puts the URL into new terminals (environmentVariableCollection) — the CLI writes `.env`.
 * Switches that arrive while a pairing runs are coalesced: only the latest HEAD is paired next.
 */
import * as vscode from 'vscode';
import { runJson } from './cli';
import type { Repository } from './git-api';

export interface PairJson {
  gitBranch: string;
  branch: string;
  parent: string | null;
  outcome: 'created' | 'reused' | 'root';
  mode: 'clone' | 'copy' | 'native';
  url: string;
  migrations: { applied: string[]; failed: { name: string | null; file: string | null; message: string } | null };
  env: { file: string; key: string; status: string; warning: string | null };
  durationMs: number;
}

export type PairState =
  | { kind: 'idle' }
  | { kind: 'pairing'; gitBranch: string }
  | { kind: 'paired'; pair: PairJson }
  | { kind: 'detached' }
  | { kind: 'error'; gitBranch: string; message: string };

export class PairingController implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private readonly last = new Map<string, string | undefined>();
  private running = false;
  private queued: { repo: Repository; gitBranch: string; from: string | undefined } | undefined;
  private readonly changed = new vscode.EventEmitter<PairState>();
  readonly onDidChange = this.changed.event;
  state: PairState = { kind: 'idle' };

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.OutputChannel,
  ) {}

  watch(repo: Repository): void {
    const key = repo.rootUri.fsPath;
    this.last.set(key, repo.state.HEAD?.name);
    this.disposables.push(
      repo.state.onDidChange(() => {
        const head = repo.state.HEAD?.name;
        const previous = this.last.get(key);
        if (head === previous) return;
        this.last.set(key, head);
        if (!vscode.workspace.getConfiguration('consort').get<boolean>('pairOnSwitch', true)) return;
        if (head === undefined) return this.set({ kind: 'detached' });
        this.request(repo, head, previous);
      }),
    );
    if (repo.state.HEAD?.name) this.request(repo, repo.state.HEAD.name, undefined);
  }

  /** Pair now (the command, or the first look at a repository). */
  request(repo: Repository, gitBranch: string, from: string | undefined): void {
    this.queued = { repo, gitBranch, from };
    void this.drain();
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.queued) {
        const { repo, gitBranch, from } = this.queued;
        this.queued = undefined;
        this.set({ kind: 'pairing', gitBranch });
        try {
          const pair = await runJson<PairJson>(
            repo.rootUri.fsPath,
            ['pair', '--git-branch', gitBranch, '--show-secrets', ...(from ? ['--from', from] : [])],
            this.output,
          );
          if (this.queued) continue; // HEAD moved on meanwhile: the newer switch wins
          this.context.environmentVariableCollection.replace(pair.env.key, pair.url);
          this.context.environmentVariableCollection.description = `Consort: ${pair.env.key} of database branch ${pair.branch}`;
          if (pair.migrations.failed)
            void vscode.window.showWarningMessage(
              `Consort: migration ${pair.migrations.failed.name ?? ''} failed on ${pair.branch}: ${pair.migrations.failed.message}`,
            );
          if (pair.env.warning) void vscode.window.showWarningMessage(`Consort: ${pair.env.warning}`);
          this.set({ kind: 'paired', pair });
        } catch (e) {
          this.set({ kind: 'error', gitBranch, message: (e as Error).message });
        }
      }
    } finally {
      this.running = false;
    }
  }

  private set(state: PairState): void {
    this.state = state;
    this.changed.fire(state);
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
    this.changed.dispose();
  }
}
