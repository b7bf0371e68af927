// Open Diff for an agent's proposed change: the file as it is beside the proposal (a read-only
// virtual document), in VS Code's diff editor. Accepting stays in the panel: one WorkspaceEdit.
import * as vscode from 'vscode';
import type { ProposedChange } from './types.js';

export const AGENT_DIFF_SCHEME = 'strata-agent';

export class ProposalDiffs implements vscode.Disposable {
  private readonly texts = new Map<string, string>();
  /** The diff's right side per change (to close it once the change is decided). */
  private readonly shown = new Map<ProposedChange, vscode.Uri>();
  private seq = 0;
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  private readonly provider: vscode.Disposable;

  constructor() {
    this.provider = vscode.workspace.registerTextDocumentContentProvider(AGENT_DIFF_SCHEME, {
      onDidChange: this.changed.event,
      provideTextDocumentContent: (uri) => this.texts.get(uri.toString()) ?? '',
    });
  }

  async show(change: ProposedChange): Promise<void> {
    const name = change.path.split('/').pop() ?? 'file';
    const n = ++this.seq;
    const right = vscode.Uri.from({ scheme: AGENT_DIFF_SCHEME, path: `/${n}/proposed/${name}` });
    this.texts.set(right.toString(), change.after);
    let left = vscode.Uri.file(change.abs);
    if (change.before === null) {
      left = vscode.Uri.from({ scheme: AGENT_DIFF_SCHEME, path: `/${n}/new/${name}` });
      this.texts.set(left.toString(), '');
    }
    this.shown.set(change, right);
    // Keep the last few proposals only (each view holds a whole file).
    while (this.texts.size > 16) this.texts.delete(this.texts.keys().next().value!);
    await vscode.commands.executeCommand('vscode.diff', left, right, `${change.path} (Strata agent proposal: Accept or Reject in the chat)`, { preview: true });
  }

  /** Closes the diff editor of a decided change, if one is open. */
  async close(change: ProposedChange): Promise<void> {
    const right = this.shown.get(change);
    this.shown.delete(change);
    if (!right) return;
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) =>
      t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString() === right.toString());
    if (tabs.length) await vscode.window.tabGroups.close(tabs);
  }

  dispose(): void {
    this.provider.dispose();
    this.changed.dispose();
    this.texts.clear();
  }
}
