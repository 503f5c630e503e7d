/** The tree of database branches (`consort branch list --json`): parent → children, paired git branch, age, TTL, size. */
import * as vscode from 'vscode';
import { runJson } from './cli';

export interface BranchJson {
  name: string;
  parent: string | null;
  createdAt: string;
  expiresAt: string | null;
  mode: string;
  database: string;
  gitBranch: string | null;
  /** Bytes its database takes; null where the provider cannot tell. */
  sizeBytes: number | null;
}

function size(bytes: number | null): string {
  if (bytes === null) return '';
  return bytes < 1024 * 1024 ? `${Math.max(1, Math.round(bytes / 1024))} kB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function ago(iso: string, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  return s < 60
    ? `${s}s`
    : s < 3600
      ? `${Math.round(s / 60)}m`
      : s < 86400
        ? `${Math.round(s / 3600)}h`
        : `${Math.round(s / 86400)}d`;
}

export class BranchItem extends vscode.TreeItem {
  constructor(
    readonly branch: BranchJson,
    hasChildren: boolean,
    paired: boolean,
  ) {
    super(branch.name, hasChildren ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
    const parts = [
      branch.gitBranch ? `git ${branch.gitBranch}` : '',
      `${ago(branch.createdAt)} old`,
      branch.expiresAt ? `TTL ${branch.expiresAt.slice(0, 16).replace('T', ' ')}` : '',
      size(branch.sizeBytes),
    ];
    this.description = parts.filter(Boolean).join(' · ');
    this.accessibilityInformation = { label: `database branch ${branch.name}: ${this.description}` };
    this.tooltip = `${branch.name} (${branch.mode})\nparent: ${branch.parent ?? '-'}\ndatabase: ${branch.database}\ncreated: ${branch.createdAt}${branch.expiresAt ? `\nexpires: ${branch.expiresAt}` : ''}${branch.sizeBytes === null ? '' : `\nsize: ${size(branch.sizeBytes)}`}${branch.gitBranch ? `\npaired with git branch ${branch.gitBranch}` : ''}`;
    this.iconPath = new vscode.ThemeIcon(paired ? 'database' : 'circle-outline');
    this.contextValue = branch.parent === null ? 'branch-root' : 'branch';
    this.id = `branch:${branch.name}`;
  }
}

export class BranchesView implements vscode.TreeDataProvider<BranchItem> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private branches: BranchJson[] = [];
  pairedName: string | undefined;

  constructor(
    private readonly root: () => string | undefined,
    private readonly output: vscode.OutputChannel,
  ) {}

  refresh(): void {
    this.changed.fire();
  }

  async getChildren(element?: BranchItem): Promise<BranchItem[]> {
    const root = this.root();
    if (root === undefined) return [];
    if (element === undefined) {
      try {
        this.branches = await runJson<BranchJson[]>(root, ['branch', 'list'], this.output);
      } catch (e) {
        void vscode.window.showErrorMessage(`Consort: cannot list branches: ${(e as Error).message}`);
        this.branches = [];
      }
    }
    const parent = element?.branch.name ?? null;
    return this.branches
      .filter((b) => b.parent === parent)
      .map(
        (b) =>
          new BranchItem(
            b,
            this.branches.some((c) => c.parent === b.name),
            b.name === this.pairedName,
          ),
      );
  }

  getTreeItem(element: BranchItem): vscode.TreeItem {
    return element;
  }
}
