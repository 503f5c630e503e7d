/** `consort check` results as diagnostics on the migration files: lint findings, the failed migration, irreversible ones. */
import path from 'node:path';
import * as vscode from 'vscode';

interface Finding {
  rule: string;
  level: 'error' | 'warning';
  message: string;
  file: string;
  line: number;
  column?: number;
}
interface Report {
  conclusion: string;
  stages: {
    migrations?: { failure?: { name: string; file: string; message: string; line?: number } };
    lint?: { findings?: Finding[] };
    reversibility?: { migrations?: { name: string; file: string; verdict: string; detail?: string }[] };
  };
}

export function showCheckDiagnostics(collection: vscode.DiagnosticCollection, root: string, report: Report): number {
  const byFile = new Map<string, vscode.Diagnostic[]>();
  const add = (
    file: string,
    line: number | undefined,
    column: number | undefined,
    message: string,
    severity: vscode.DiagnosticSeverity,
    code?: string,
  ) => {
    const l = Math.max(0, (line ?? 1) - 1);
    const d = new vscode.Diagnostic(
      new vscode.Range(l, Math.max(0, (column ?? 1) - 1), l, Number.MAX_SAFE_INTEGER),
      message,
      severity,
    );
    d.source = 'consort';
    if (code) d.code = code;
    byFile.set(file, [...(byFile.get(file) ?? []), d]);
  };
  const failure = report.stages.migrations?.failure;
  if (failure)
    add(failure.file, failure.line, undefined, `migration failed: ${failure.message}`, vscode.DiagnosticSeverity.Error);
  for (const f of report.stages.lint?.findings ?? []) {
    add(
      f.file,
      f.line,
      f.column,
      f.message,
      f.level === 'error' ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning,
      f.rule,
    );
  }
  for (const m of report.stages.reversibility?.migrations ?? []) {
    if (m.verdict !== 'reversible' && m.verdict !== 'not-checked')
      add(
        m.file,
        1,
        1,
        `reversibility: ${m.verdict}${m.detail ? `: ${m.detail}` : ''}`,
        vscode.DiagnosticSeverity.Warning,
      );
  }
  collection.clear();
  for (const [file, diagnostics] of byFile) collection.set(vscode.Uri.file(path.join(root, file)), diagnostics);
  return [...byFile.values()].reduce((n, d) => n + d.length, 0);
}
