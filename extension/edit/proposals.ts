// A proposed rewrite of part of a document, shown as a diff (the document beside a read-only copy
// with the change) to accept or reject. Accepting applies one WorkspaceEdit, so Ctrl+Z in the
// editor undoes it; a document changed since the proposal is not overwritten.
import * as vscode from 'vscode';

export const PROPOSAL_SCHEME = 'strata-proposal';
/** Context key: a proposal waits for accept or reject (editor title buttons, palette commands). */
const PENDING_KEY = 'strata.editPending';

interface Proposal {
  target: vscode.Uri;
  range: vscode.Range;
  newText: string;
  version: number;
  view: vscode.Uri;
  text: string;
}

export class EditProposals implements vscode.Disposable {
  private current: Proposal | undefined;
  private seq = 0;
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor() {
    this.disposables.push(
      this.changed,
      vscode.workspace.registerTextDocumentContentProvider(PROPOSAL_SCHEME, {
        onDidChange: this.changed.event,
        provideTextDocumentContent: (uri) => (this.current && uri.toString() === this.current.view.toString() ? this.current.text : ''),
      }),
      vscode.commands.registerCommand('strata.acceptEdit', () => this.accept()),
      vscode.commands.registerCommand('strata.rejectEdit', () => this.reject()),
    );
  }

  /** Shows `newText` in place of `range` of `doc` as a diff; resolves when the diff is open. */
  async propose(doc: vscode.TextDocument, range: vscode.Range, newText: string, what: string): Promise<void> {
    if (this.current) await this.close();
    const before = doc.getText(new vscode.Range(new vscode.Position(0, 0), range.start));
    const after = doc.getText(new vscode.Range(range.end, doc.lineAt(doc.lineCount - 1).range.end));
    const name = doc.uri.path.split('/').pop() ?? 'file';
    const view = vscode.Uri.from({ scheme: PROPOSAL_SCHEME, path: `/${++this.seq}/${name}` });
    this.current = { target: doc.uri, range, newText, version: doc.version, view, text: before + newText + after };
    this.changed.fire(view);
    await vscode.commands.executeCommand('setContext', PENDING_KEY, true);
    await vscode.commands.executeCommand('vscode.diff', doc.uri, view, `${name}: ${what} (Strata proposal: Accept or Reject above)`, { preview: true });
    void vscode.window.showInformationMessage(`Strata proposes an edit of ${vscode.workspace.asRelativePath(doc.uri)} (${what}).`, 'Accept', 'Reject').then((b) => {
      if (b === 'Accept') void this.accept();
      else if (b === 'Reject') void this.reject();
    });
  }

  /** Applies the proposal (one undoable edit); false when there was none or the file changed. */
  async accept(): Promise<boolean> {
    const p = this.current;
    if (!p) return false;
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === p.target.toString()) ?? await vscode.workspace.openTextDocument(p.target);
    if (doc.version !== p.version) {
      await this.close();
      void vscode.window.showWarningMessage(`Strata: ${vscode.workspace.asRelativePath(p.target)} changed since the edit was proposed; nothing was applied. Run the edit again.`);
      return false;
    }
    const edit = new vscode.WorkspaceEdit();
    edit.replace(p.target, p.range, p.newText);
    const ok = await vscode.workspace.applyEdit(edit);
    await this.close();
    const editor = await vscode.window.showTextDocument(doc, { preview: false });
    const end = doc.positionAt(doc.offsetAt(p.range.start) + p.newText.length);
    editor.selection = new vscode.Selection(p.range.start, end);
    return ok;
  }

  async reject(): Promise<void> {
    const target = this.current?.target;
    await this.close();
    if (target) await vscode.window.showTextDocument(target, { preview: false });
  }

  dispose(): void {
    this.current = undefined;
    for (const d of this.disposables) d.dispose();
  }

  private async close(): Promise<void> {
    const p = this.current;
    this.current = undefined;
    await vscode.commands.executeCommand('setContext', PENDING_KEY, false);
    if (!p) return;
    // Only one proposal is open at a time: close every diff showing one (URIs may come back normalised).
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) =>
      (t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === PROPOSAL_SCHEME)
      || (t.input instanceof vscode.TabInputText && t.input.uri.scheme === PROPOSAL_SCHEME));
    if (tabs.length) await vscode.window.tabGroups.close(tabs);
  }
}
