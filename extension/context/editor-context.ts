// Editor context for chat: the selection or the whole file of a text editor, or a workspace file
// the user picks, as ContextItems (tokens counted later, by whoever has the server).
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import type { ContextItem } from '../../contract/panel.js';

/** Files are attached up to this many characters; a longer one is cut by lines (and says so). */
export const MAX_CONTEXT_CHARS = 100_000;

/** Keeps the text editor used last, since a focused panel or chat input makes activeTextEditor undefined. */
export class LastEditor implements vscode.Disposable {
  private last: vscode.TextEditor | undefined;
  private readonly sub: vscode.Disposable;

  constructor() {
    this.last = usable(vscode.window.activeTextEditor);
    this.sub = vscode.window.onDidChangeActiveTextEditor((e) => { if (usable(e)) this.last = e; });
  }

  /** The active editor, else the last one used that is still visible or open. */
  get(): vscode.TextEditor | undefined {
    const active = usable(vscode.window.activeTextEditor);
    if (active) return active;
    const last = this.last;
    if (!last || last.document.isClosed) return undefined;
    return vscode.window.visibleTextEditors.find((e) => e.document === last.document) ?? last;
  }

  dispose(): void {
    this.sub.dispose();
  }
}

function usable(e: vscode.TextEditor | undefined): vscode.TextEditor | undefined {
  return e && (e.document.uri.scheme === 'file' || e.document.uri.scheme === 'untitled') ? e : undefined;
}

function item(doc: vscode.TextDocument, kind: ContextItem['kind'], text: string, range: ContextItem['range']): ContextItem {
  let body = text;
  let r = range;
  let cutFrom: number | undefined;
  if (body.length > MAX_CONTEXT_CHARS) {
    const lines = body.split('\n');
    let chars = 0;
    let keep = 0;
    while (keep < lines.length && chars + lines[keep]!.length + 1 <= MAX_CONTEXT_CHARS) chars += lines[keep++]!.length + 1;
    body = lines.slice(0, Math.max(1, keep)).join('\n');
    const start = range?.startLine ?? 1;
    r = { startLine: start, endLine: start + Math.max(1, keep) - 1 };
    cutFrom = lines.length;
  }
  return {
    id: randomUUID(), kind, path: vscode.workspace.asRelativePath(doc.uri), range: r, language: doc.languageId || null,
    text: body, tokens: null, ...(cutFrom ? { cutFrom } : {}),
  };
}

/** The editor's selection (whole lines as selected), or a problem to show. */
export function selectionContext(editor: vscode.TextEditor | undefined): ContextItem | string {
  if (!editor) return 'Open a file and select some code first.';
  const sel = editor.selection;
  if (sel.isEmpty) return `Select some code in ${vscode.workspace.asRelativePath(editor.document.uri)} first.`;
  // A selection that ends at the start of a line does not include that line.
  const endLine = sel.end.character === 0 && sel.end.line > sel.start.line ? sel.end.line - 1 : sel.end.line;
  return item(editor.document, 'selection', editor.document.getText(sel), { startLine: sel.start.line + 1, endLine: endLine + 1 });
}

export function fileContext(doc: vscode.TextDocument | undefined): ContextItem | string {
  if (!doc) return 'Open a file in an editor first.';
  return item(doc, 'file', doc.getText(), null);
}

/** A workspace file the user picks (Quick Pick over the workspace's files); null when cancelled. */
export async function pickFileContext(): Promise<ContextItem | string | null> {
  if (!vscode.workspace.workspaceFolders?.length) return 'Open a folder first: files are picked from the workspace.';
  const files = await vscode.workspace.findFiles('**/*', '**/{node_modules,.git,dist,out,build}/**', 5000);
  if (!files.length) return 'The workspace has no files to attach.';
  const pick = await vscode.window.showQuickPick(
    files.map((uri) => ({ label: vscode.workspace.asRelativePath(uri), uri })).sort((a, b) => a.label.localeCompare(b.label)),
    { title: 'Attach a file to the Strata chat', placeHolder: 'File to send as context', matchOnDescription: true },
  );
  if (!pick) return null;
  return fileContext(await vscode.workspace.openTextDocument(pick.uri));
}
