// The agent's workspace inside VS Code: open documents' text (unsaved edits included), the
// Problems, ripgrep for search_text, the integrated terminal for commands, and accepted changes
// applied as one WorkspaceEdit each (so one Ctrl+Z takes a file's change back), then saved so
// commands the agent runs next see them.
import * as vscode from 'vscode';
import { NodeWorkspace, type NodeWorkspaceOptions } from './node-workspace.js';
import { isLink, type WorkspacePaths } from './paths.js';
import { findRipgrep, ripgrepSearch } from './ripgrep.js';
import { SECRET_NAME_GLOBS } from './sensitive-files.js';
import type { AgentTerminal } from './terminal-command.js';
import type { CommandResult, DiagnosticItem, ProposedChange, TextMatch } from './types.js';
import { samePath } from '../../common/os/paths.js';

const SEVERITY: Record<vscode.DiagnosticSeverity, DiagnosticItem['severity']> = {
  [vscode.DiagnosticSeverity.Error]: 'error', [vscode.DiagnosticSeverity.Warning]: 'warning',
  [vscode.DiagnosticSeverity.Information]: 'info', [vscode.DiagnosticSeverity.Hint]: 'hint',
};
const MAX_DIAGNOSTICS = 200;

export class VscodeWorkspace extends NodeWorkspace {
  private readonly rg = findRipgrep(vscode.env.appRoot);

  constructor(paths: WorkspacePaths, opts: NodeWorkspaceOptions, private readonly terminal: AgentTerminal) {
    super(paths, opts);
  }

  override async readText(abs: string): Promise<string | null> {
    const open = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && samePath(d.uri.fsPath, abs));
    return open ? open.getText() : super.readText(abs);
  }

  override async searchText(query: string, opts: { regex: boolean; glob: string | null; maxResults: number }, signal: AbortSignal): Promise<TextMatch[]> {
    if (!this.rg) return super.searchText(query, opts, signal);
    const multi = this.paths.roots.length > 1;
    return ripgrepSearch(this.rg, {
      query, regex: opts.regex, glob: opts.glob, exclude: [...this.opts.exclude(), ...SECRET_NAME_GLOBS], maxResults: opts.maxResults,
      roots: this.paths.roots.map((r) => ({ path: r.path, prefix: multi ? r.name : '' })),
    }, signal);
  }

  override diagnostics(abs: string | undefined): DiagnosticItem[] {
    const entries: Array<[vscode.Uri, readonly vscode.Diagnostic[]]> = abs ? [[vscode.Uri.file(abs), vscode.languages.getDiagnostics(vscode.Uri.file(abs))]] : vscode.languages.getDiagnostics();
    const out: DiagnosticItem[] = [];
    for (const [uri, list] of entries) {
      for (const d of list) {
        out.push({
          path: vscode.workspace.asRelativePath(uri, this.paths.roots.length > 1), line: d.range.start.line + 1, column: d.range.start.character + 1,
          severity: SEVERITY[d.severity], message: d.message, source: d.source ?? null,
        });
      }
    }
    const rank = { error: 0, warning: 1, info: 2, hint: 3 };
    return out.sort((a, b) => rank[a.severity] - rank[b.severity]).slice(0, MAX_DIAGNOSTICS);
  }

  override async apply(change: ProposedChange): Promise<string | null> {
    if (await isLink(change.abs)) return `${change.path} is a symbolic link now; the agent does not write through links`;
    const uri = vscode.Uri.file(change.abs);
    const edit = new vscode.WorkspaceEdit();
    if (change.before === null) {
      edit.createFile(uri, { ignoreIfExists: false, contents: new TextEncoder().encode(change.after) });
      return (await vscode.workspace.applyEdit(edit)) ? null : 'VS Code did not create the file (does it exist now?)';
    }
    const doc = await vscode.workspace.openTextDocument(uri);
    // Never overwrite what changed since the proposal (the user typed, or a formatter ran).
    if (doc.getText() !== change.before) return `${change.path} changed since the change was proposed; nothing was applied (read it again)`;
    edit.replace(uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), change.after);
    if (!(await vscode.workspace.applyEdit(edit))) return 'VS Code refused the edit';
    await doc.save();
    return null;
  }

  override async remove(abs: string): Promise<string | null> {
    const edit = new vscode.WorkspaceEdit();
    edit.deleteFile(vscode.Uri.file(abs), { ignoreIfNotExists: false });
    return (await vscode.workspace.applyEdit(edit)) ? null : 'VS Code did not delete the file';
  }

  override runCommand(command: string, cwd: string, signal: AbortSignal, argv?: readonly string[]): Promise<CommandResult> {
    // An allow-listed command never reaches the terminal's shell.
    return argv ? super.runCommand(command, cwd, signal, argv) : this.terminal.run(command, cwd, signal);
  }
}
