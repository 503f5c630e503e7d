/**
 * The part of the built-in git extension's API (`vscode.git`, `getAPI(1)`) this extension uses.
 * The git extension ships its full typings only in its source tree (git.d.ts), so the members used
 * are declared here with the same names and shapes.
 */
import type * as vscode from 'vscode';

export interface Branch {
  readonly name?: string;
  readonly commit?: string;
}
export interface RepositoryState {
  readonly HEAD: Branch | undefined;
  readonly onDidChange: vscode.Event<void>;
}
export interface Repository {
  readonly rootUri: vscode.Uri;
  readonly state: RepositoryState;
}
export interface GitAPI {
  readonly state: 'uninitialized' | 'initialized';
  readonly onDidChangeState: vscode.Event<'uninitialized' | 'initialized'>;
  readonly repositories: Repository[];
  readonly onDidOpenRepository: vscode.Event<Repository>;
}
export interface GitExtension {
  getAPI(version: 1): GitAPI;
}
