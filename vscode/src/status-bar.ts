/** The status bar item: paired database branch, mode, state; a click opens the actions. */
import * as vscode from 'vscode';
import type { PairState } from './pairing';

export function createStatusBar(): { item: vscode.StatusBarItem; show: (s: PairState) => void } {
  const item = vscode.window.createStatusBarItem('consort.status', vscode.StatusBarAlignment.Left, 50);
  item.name = 'Consort database branch';
  item.command = 'consort.actions';
  const show = (s: PairState): void => {
    switch (s.kind) {
      case 'idle':
        item.text = '$(database) consort';
        item.tooltip = 'Consort: no git branch paired yet';
        break;
      case 'pairing':
        item.text = `$(sync~spin) db: pairing ${s.gitBranch}…`;
        item.tooltip = `Consort: pairing ${s.gitBranch}`;
        break;
      case 'detached':
        item.text = '$(database) db: detached HEAD';
        item.tooltip = 'Consort: HEAD is detached, nothing to pair';
        break;
      case 'error':
        item.text = `$(error) db: ${s.gitBranch}`;
        item.tooltip = `Consort: pairing ${s.gitBranch} failed: ${s.message}`;
        break;
      case 'paired': {
        const p = s.pair;
        const state = p.migrations.failed ? 'migration failed' : 'ready';
        item.text = `$(database) db: ${p.branch} · ${p.mode} · ${state}`;
        item.tooltip = `Consort: git ${p.gitBranch} ↔ database ${p.branch} (${p.outcome}${p.parent ? `, from ${p.parent}` : ''}, ${p.mode})\n${p.env.key} in ${p.env.file}${p.migrations.applied.length ? `\napplied ${p.migrations.applied.join(', ')}` : ''}`;
        break;
      }
    }
  };
  show({ kind: 'idle' });
  item.show();
  return { item, show };
}
