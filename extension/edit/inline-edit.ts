// "Strata: Edit Selection…": asks for an instruction, has the model rewrite the selected code
// (or the cursor's line), and shows the rewrite as a diff to accept or reject (proposals.ts).
// Also "Apply" of a code block from the panel chat: the block proposed for the selection or file.
import * as vscode from 'vscode';
import type { ServerConnection } from '../server/connection.js';
import { StartDeclined } from '../server/manager.js';
import { abortOn } from '../lm/provider.js';
import { editMessages, extractCode } from './edit-prompt.js';
import { EditProposals } from './proposals.js';

const CONTEXT_BEFORE = 20;
const CONTEXT_AFTER = 10;

/** The selection as whole lines, or the cursor's line when nothing is selected. */
function editRange(editor: vscode.TextEditor): vscode.Range {
  const sel = editor.selection;
  const doc = editor.document;
  if (sel.isEmpty) return doc.lineAt(sel.active.line).rangeIncludingLineBreak;
  const endLine = sel.end.character === 0 && sel.end.line > sel.start.line ? sel.end.line - 1 : sel.end.line;
  return new vscode.Range(new vscode.Position(sel.start.line, 0), doc.lineAt(endLine).rangeIncludingLineBreak.end);
}

/** "line 3" / "lines 3-7" for a range of whole lines (its end may be the start of the next line). */
function describe(r: vscode.Range): string {
  const last = r.end.character === 0 && r.end.line > r.start.line ? r.end.line - 1 : r.end.line;
  return last === r.start.line ? `line ${r.start.line + 1}` : `lines ${r.start.line + 1}-${last + 1}`;
}

export interface InlineEditHandle {
  proposals: EditProposals;
  /** Proposes `code` for the selection of `editor` (else its whole file) as a diff to accept. */
  applyCode(editor: vscode.TextEditor, code: string): Promise<void>;
}

export function registerInlineEdit(context: vscode.ExtensionContext, server: ServerConnection): InlineEditHandle {
  const proposals = new EditProposals();

  const run = async (): Promise<void> => {
    const editor = vscode.window.activeTextEditor;
    if (!editor) return void vscode.window.showInformationMessage('Strata: open a file and select the code to edit first.');
    const doc = editor.document;
    const range = editRange(editor);
    const code = doc.getText(range);
    const instruction = await vscode.window.showInputBox({
      title: `Strata: edit ${vscode.workspace.asRelativePath(doc.uri)} (${describe(range)})`,
      prompt: 'What should change? The rewrite is shown as a diff to accept or reject.',
      placeHolder: 'e.g. add type hints; handle the empty list; rename x to count',
      ignoreFocusOut: true,
    });
    if (!instruction?.trim()) return;
    let client;
    try {
      client = await server.ensureReady();
    } catch (err) {
      if (!(err instanceof StartDeclined)) void vscode.window.showErrorMessage(`Strata: the server is not available: ${(err as Error).message}`);
      return;
    }
    const before = doc.getText(new vscode.Range(Math.max(0, range.start.line - CONTEXT_BEFORE), 0, range.start.line, 0));
    const afterEnd = Math.min(doc.lineCount - 1, range.end.line + CONTEXT_AFTER);
    const after = doc.getText(new vscode.Range(range.end, doc.lineAt(afterEnd).range.end));
    const messages = editMessages({
      instruction: instruction.trim(), path: vscode.workspace.asRelativePath(doc.uri), language: doc.languageId,
      code, before, after, startLine: range.start.line + 1,
    });
    const answer = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Strata: rewriting ${describe(range)}`, cancellable: true },
      async (progress, token) => {
        const ac = abortOn(token);
        let text = '';
        try {
          // Room for a rewrite a good deal longer than the original.
          const maxTokens = Math.min(2048, 256 + Math.ceil(code.length / 2));
          for await (const ev of client.chatStream({ messages, maxTokens, temperature: 0.2 }, ac.signal)) {
            if (ev.type === 'text') {
              text += ev.text;
              progress.report({ message: `${text.length} characters` });
            }
          }
          return text;
        } catch (err) {
          if (!token.isCancellationRequested) void vscode.window.showErrorMessage(`Strata: the edit failed: ${(err as Error).message}`);
          return null;
        }
      },
    );
    if (answer === null) return;
    const proposed = extractCode(answer, code);
    if (proposed === null) return void vscode.window.showInformationMessage('Strata: the model answered with no code; nothing to apply.');
    await proposals.propose(doc, range, proposed, `${describe(range)}: ${instruction.trim()}`);
  };

  context.subscriptions.push(proposals, vscode.commands.registerCommand('strata.editSelection', run));

  return {
    proposals,
    applyCode: async (editor, code) => {
      const doc = editor.document;
      const whole = new vscode.Range(new vscode.Position(0, 0), doc.lineAt(doc.lineCount - 1).range.end);
      const range = editor.selection.isEmpty ? whole : editRange(editor);
      const original = doc.getText(range);
      const text = original.endsWith('\n') && !code.endsWith('\n') ? `${code}\n` : code;
      await proposals.propose(doc, range, text, editor.selection.isEmpty ? 'the whole file' : describe(range));
    },
  };
}
