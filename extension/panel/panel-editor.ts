// The panel chat's hands in the editor: Copy, Insert at cursor and Apply on code blocks, and
// the editor context the chat attaches. "The editor" is the text editor used last: while the
// panel has focus, VS Code has no active text editor.
import * as vscode from 'vscode';
import { fileContext, pickFileContext, selectionContext, type LastEditor } from '../context/editor-context.js';
import type { InlineEditHandle } from '../edit/inline-edit.js';
import type { PanelEditor } from './hub.js';

const NO_EDITOR = 'Open a file in an editor first: the code goes to its cursor.';

export function panelEditor(last: LastEditor, edit: InlineEditHandle): PanelEditor {
  return {
    copy: async (text) => {
      await vscode.env.clipboard.writeText(text);
      void vscode.window.setStatusBarMessage('$(copy) Strata: copied', 2000);
    },
    insert: async (code) => {
      const target = last.get();
      if (!target) return NO_EDITOR;
      const editor = await vscode.window.showTextDocument(target.document, { viewColumn: target.viewColumn, preserveFocus: false });
      const sel = editor.selection;
      const ok = await editor.edit((b) => b.replace(sel, code));
      if (!ok) return `Could not insert into ${vscode.workspace.asRelativePath(editor.document.uri)}.`;
      const end = editor.document.positionAt(editor.document.offsetAt(sel.start) + code.length);
      editor.selection = new vscode.Selection(end, end);
      return null;
    },
    apply: async (code) => {
      const target = last.get();
      if (!target) return 'Open the file to change in an editor first (select the part to replace, or nothing to replace the whole file).';
      await edit.applyCode(target, code);
      return null;
    },
    context: async (what) => {
      if (what === 'selection') return selectionContext(last.get());
      if (what === 'file') return fileContext(last.get()?.document);
      return pickFileContext();
    },
  };
}
