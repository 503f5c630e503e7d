/** Entry: wires the git API, the pairing controller, the status bar, the views and the commands. */
import * as vscode from 'vscode';
import { BranchesView, type BranchItem } from './branches-view';
import { childEnv, CliError, cliCommand, runCli, runJson } from './cli';
import { showCheckDiagnostics } from './diagnostics';
import type { GitExtension, Repository } from './git-api';
import { LaneView, type LaneItem } from './lane-view';
import { PairingController } from './pairing';
import { createStatusBar } from './status-bar';

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('Consort');
  const gitExtension = vscode.extensions.getExtension<GitExtension>('vscode.git');
  if (!gitExtension) {
    output.appendLine('The built-in git extension is disabled: Consort cannot follow HEAD.');
    return;
  }
  const git = (gitExtension.isActive ? gitExtension.exports : await gitExtension.activate()).getAPI(1);
  const controller = new PairingController(context, output);
  const status = createStatusBar();
  const currentRepo = (): Repository | undefined => {
    const active = vscode.window.activeTextEditor?.document.uri.fsPath;
    return git.repositories.find((r) => active?.startsWith(r.rootUri.fsPath)) ?? git.repositories[0];
  };
  const root = (): string | undefined => currentRepo()?.rootUri.fsPath;
  const branches = new BranchesView(root, output);
  const lane = new LaneView(root, output);
  const diagnostics = vscode.languages.createDiagnosticCollection('consort');
  // Gates approved and steps taken outside the view (a terminal, a run) show up in it.
  const records = vscode.workspace.createFileSystemWatcher('**/.consort/features/*/{gates,state}.json');
  const laneChanged = () => lane.refresh();
  context.subscriptions.push(
    records,
    records.onDidChange(laneChanged),
    records.onDidCreate(laneChanged),
    records.onDidDelete(laneChanged),
  );
  context.subscriptions.push(
    output,
    controller,
    status.item,
    diagnostics,
    vscode.window.registerTreeDataProvider('consort.branches', branches),
    vscode.window.registerTreeDataProvider('consort.lane', lane),
  );

  controller.onDidChange((s) => {
    status.show(s);
    if (s.kind === 'paired') {
      branches.pairedName = s.pair.branch;
      branches.refresh();
    }
  });
  const seen = new Set<string>();
  const watch = (repo: Repository) => {
    if (seen.has(repo.rootUri.fsPath)) return;
    seen.add(repo.rootUri.fsPath);
    controller.watch(repo);
    branches.refresh();
    lane.refresh();
  };
  git.repositories.forEach(watch);
  context.subscriptions.push(git.onDidOpenRepository(watch));

  const needRoot = (): string => {
    const r = root();
    if (r === undefined) throw new Error('Open a folder that is a git repository.');
    return r;
  };
  const command = (id: string, fn: (...args: never[]) => Promise<unknown>) =>
    context.subscriptions.push(
      vscode.commands.registerCommand(id, async (...args: never[]) => {
        try {
          await fn(...args);
        } catch (e) {
          void vscode.window.showErrorMessage(
            `Consort: ${e instanceof CliError || e instanceof Error ? e.message : String(e)}`,
          );
        }
      }),
    );
  const urlOf = async (name: string) => (await runCli(needRoot(), ['branch', 'url', name])).trim();

  command('consort.pair', async () => {
    const repo = currentRepo();
    if (repo?.state.HEAD?.name) controller.request(repo, repo.state.HEAD.name, undefined);
  });
  command('consort.refresh', async () => {
    branches.refresh();
    lane.refresh();
  });
  command('consort.actions', async () => {
    const picks = [
      { label: '$(sync) Pair now', id: 'consort.pair' },
      { label: '$(diff) Schema diff against parent', id: 'consort.schemaDiff' },
      { label: '$(checklist) Check migrations', id: 'consort.check' },
      { label: '$(terminal) Open psql', id: 'consort.openPsql' },
      { label: '$(copy) Copy connection URL', id: 'consort.copyUrl' },
      { label: '$(output) Show log', id: 'consort.showLog' },
    ];
    const pick = await vscode.window.showQuickPick(picks, { placeHolder: 'Consort: database branch' });
    if (pick?.id === 'consort.showLog') output.show();
    else if (pick) await vscode.commands.executeCommand(pick.id);
  });
  const target = (item?: BranchItem): string => {
    if (item) return item.branch.name;
    if (controller.state.kind === 'paired') return controller.state.pair.branch;
    throw new Error('No database branch selected or paired yet.');
  };
  command('consort.createBranch', async (item?: BranchItem) => {
    const parent = item?.branch.name ?? 'main';
    const name = await vscode.window.showInputBox({
      prompt: `New database branch from ${parent}`,
      placeHolder: 'lowercase letters, digits and -',
    });
    if (!name) return;
    await runJson(needRoot(), ['branch', 'create', name, '--from', parent], output);
    branches.refresh();
  });
  command('consort.resetBranch', async (item?: BranchItem) => {
    const name = target(item);
    const ok = await vscode.window.showWarningMessage(
      `Reset ${name} to its parent? Its changes are thrown away.`,
      { modal: true },
      'Reset',
    );
    if (ok !== 'Reset') return;
    await runJson(needRoot(), ['branch', 'reset', name], output);
    branches.refresh();
  });
  command('consort.deleteBranch', async (item?: BranchItem) => {
    const name = target(item);
    const ok = await vscode.window.showWarningMessage(
      `Delete the database branch ${name} and its data?`,
      { modal: true },
      'Delete',
    );
    if (ok !== 'Delete') return;
    await runJson(needRoot(), ['branch', 'delete', name], output);
    branches.refresh();
  });
  command('consort.copyUrl', async (item?: BranchItem) => {
    await vscode.env.clipboard.writeText(await urlOf(target(item)));
    void vscode.window.showInformationMessage(`Consort: copied the URL of ${target(item)}`);
  });
  command('consort.openPsql', async (item?: BranchItem) => {
    const name = target(item);
    const terminal = vscode.window.createTerminal({
      name: `psql ${name}`,
      cwd: needRoot(),
      env: { CONSORT_PSQL_URL: await urlOf(name) },
    });
    terminal.show();
    terminal.sendText('psql "$CONSORT_PSQL_URL"');
  });
  command('consort.schemaDiff', async () => {
    const text = await runCli(
      needRoot(),
      ['pair', 'diff', ...(currentRepo()?.state.HEAD?.name ? ['--git-branch', currentRepo()!.state.HEAD!.name!] : [])],
      output,
    );
    const doc = await vscode.workspace.openTextDocument({ content: text, language: 'diff' });
    await vscode.window.showTextDocument(doc, { preview: true });
  });
  command('consort.check', async () => {
    const dir = needRoot();
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Consort: checking migrations on a fresh branch…' },
      async () => {
        let stdout: string;
        try {
          stdout = await runCli(dir, ['check', '--json', '-'], output);
        } catch (e) {
          // A failing check exits 1 with the report on stdout.
          if (!(e instanceof CliError) || !e.stdout.trim().startsWith('{')) throw e;
          stdout = e.stdout;
        }
        const report = JSON.parse(stdout);
        const count = showCheckDiagnostics(diagnostics, dir, report);
        void vscode.window.showInformationMessage(
          `Consort check: ${report.conclusion}${count ? `, ${count} problem(s) on migration files` : ''}`,
        );
      },
    );
  });
  command('consort.approveGate', async (item?: LaneItem) => {
    if (!item?.gate) throw new Error('Pick a gate in the TDD Lane view.');
    const name = await vscode.window.showInputBox({
      prompt: `Approve the ${item.gate} gate of ${item.feature.feature} as (your name)`,
      ignoreFocusOut: true,
    });
    if (!name) return;
    // `consort approve` asks the person at its terminal to confirm by typing the start of the
    // artifacts' hash, and reads the answer from that terminal only. The extension host has none,
    // and must not answer for the person: the approval runs in an editor terminal, where they do.
    const root = needRoot();
    const { file, prefix } = cliCommand(root);
    const terminal = vscode.window.createTerminal({
      name: `consort approve ${item.gate}`,
      cwd: root,
      shellPath: file,
      shellArgs: [...prefix, 'approve', item.feature.feature, item.gate, '--as', name],
      env: childEnv(),
      strictEnv: true,
    });
    terminal.show();
  });
}

export function deactivate(): void {}
