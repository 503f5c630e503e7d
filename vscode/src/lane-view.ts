/** The TDD lane at a glance (`consort status --json`): features, where each stands, and its gates. */
import * as vscode from 'vscode';
import { runJson } from './cli';

interface FeatureJson {
  feature: string;
  phase: string;
  where: string;
  gate: string | null;
  gates: Record<string, { approver: string; at: string; proxy: boolean } | null>;
  turns: { count: number; costUsd: number };
}

export class LaneItem extends vscode.TreeItem {
  constructor(
    readonly feature: FeatureJson,
    readonly gate?: string,
  ) {
    super(
      gate ?? feature.feature,
      gate ? vscode.TreeItemCollapsibleState.None : vscode.TreeItemCollapsibleState.Expanded,
    );
    if (gate === undefined) {
      this.description = `${feature.phase}: ${feature.where}`;
      this.accessibilityInformation = { label: `feature ${feature.feature}: ${this.description}` };
      this.tooltip = `${feature.feature}\n${feature.where}\n${feature.turns.count} turn(s), $${feature.turns.costUsd.toFixed(2)}`;
      this.iconPath = new vscode.ThemeIcon('beaker');
      this.contextValue = 'feature';
      return;
    }
    const approval = feature.gates[gate];
    this.description = approval
      ? `approved by ${approval.approver}${approval.proxy ? ' (proxy)' : ''}`
      : feature.gate === gate
        ? 'waiting for approval'
        : 'open';
    this.accessibilityInformation = { label: `${gate} gate: ${this.description}` };
    this.iconPath = new vscode.ThemeIcon(approval ? 'pass' : 'circle-large-outline');
    this.contextValue = approval ? 'gate-approved' : 'gate-open';
  }
}

export class LaneView implements vscode.TreeDataProvider<LaneItem> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(
    private readonly root: () => string | undefined,
    private readonly output: vscode.OutputChannel,
  ) {}

  refresh(): void {
    this.changed.fire();
  }

  async getChildren(element?: LaneItem): Promise<LaneItem[]> {
    if (element) {
      // Gates with a record, and the one the feature is at (it has none until approved).
      const gates = Object.keys(element.feature.gates);
      if (element.feature.gate !== null && !gates.includes(element.feature.gate)) gates.push(element.feature.gate);
      return gates.map((g) => new LaneItem(element.feature, g));
    }
    const root = this.root();
    if (root === undefined) return [];
    try {
      return (await runJson<FeatureJson[]>(root, ['status'], this.output)).map((f) => new LaneItem(f));
    } catch (e) {
      this.output.appendLine(`status: ${(e as Error).message}`);
      return [];
    }
  }

  getTreeItem(element: LaneItem): vscode.TreeItem {
    return element;
  }
}
