// Next-edit suggestions in the editor: after the user's edits (and the delay), ask the server for
// the region rewritten, and offer its hunks one after another. A hunk that only inserts at the
// cursor is ghost text (the inline completion provider shows it); one elsewhere is an inline diff
// (decorations.ts) that Tab jumps to and Tab accepts, as one undo step; Esc or any other edit
// dismisses it. The rules live in the pure modules next to this file; this one connects them.
import * as vscode from 'vscode';
import { StrataApiError } from '../client/client.js';
import { nextEditSettings } from '../config/config.js';
import type { CompletionGate } from '../completion/pause.js';
import type { InlineItemsFirst } from '../completion/provider.js';
import type { ServerConnection } from '../server/connection.js';
import { HunkDecorations } from './decorations.js';
import { EditHistory } from './editHistory.js';
import { hunkEdit, insertionAtCursor, stillApplies, viewHunk, type Hunk } from './hunks.js';
import { jumpLine, Proposal } from './proposal.js';
import { DEFAULT_LIMITS, planRequest, type DocumentView } from './request.js';
import { NextEditRequester } from './requester.js';

/** Context key for the keybindings: an inline-diff proposal shows, so Tab and Esc are ours. */
const VISIBLE_KEY = 'strata.nextEditVisible';
/** Documents past this size are not tracked (their copy would cost more than it helps). */
const MAX_TRACKED_CHARS = 2_000_000;

/** A hunk shown as ghost text at the cursor: the provider offers it there while the document is unchanged. */
interface Ghost { uri: string; version: number; line: number; character: number; text: string }

export interface NextEditHandle {
  /** For the inline completion provider: the next edit's ghost text at this position, if one waits there. */
  itemsAt: InlineItemsFirst;
}

export function registerNextEdit(context: vscode.ExtensionContext, server: ServerConnection, gate: CompletionGate, log: vscode.LogOutputChannel): NextEditHandle {
  const history = new EditHistory();
  const requester = new NextEditRequester();
  const decorations = new HunkDecorations(context.extensionUri);
  let proposal: Proposal | undefined;
  let ghost: Ghost | undefined;
  /** True while the extension applies an accepted hunk (that edit continues the proposal). */
  let applying = false;
  /** The server has no next-edit route (another OpenAI-compatible server): stop asking until it changes. */
  let unsupported = false;

  const track = (doc: vscode.TextDocument): void => {
    if (doc.uri.scheme !== 'file' || doc.getText().length > MAX_TRACKED_CHARS) return;
    history.open(doc.uri.toString(), vscode.workspace.asRelativePath(doc.uri), doc.getText());
  };
  const view = (doc: vscode.TextDocument): DocumentView => ({
    key: doc.uri.toString(), path: vscode.workspace.asRelativePath(doc.uri), languageId: doc.languageId,
    version: doc.version, lineCount: doc.lineCount, line: (i) => doc.lineAt(i).text,
  });
  const editorOf = (key: string): vscode.TextEditor | undefined => {
    const e = vscode.window.activeTextEditor;
    return e && e.document.uri.toString() === key ? e : undefined;
  };
  // The key is set before the diff is drawn: setContext runs through the command service, which can
  // answer after later drawing calls, so a Tab pressed on a diff just drawn would be VS Code's indent.
  let keyOn: Promise<unknown> = Promise.resolve();
  let keyValue: boolean | undefined;
  const setVisible = (on: boolean): Promise<unknown> => {
    if (keyValue !== on) {
      keyValue = on;
      keyOn = Promise.resolve(vscode.commands.executeCommand('setContext', VISIBLE_KEY, on));
    }
    return keyOn;
  };

  const dismiss = (why: string): void => {
    if (proposal) log.debug(`next edit dismissed: ${why}`);
    proposal?.dismiss();
    proposal = undefined;
    ghost = undefined;
    decorations.clear();
    void setVisible(false);
  };

  /** Shows the proposal's current hunk (or ends it when none is left or the text moved under it). */
  const render = (): void => {
    const h = proposal?.current;
    const editor = proposal && editorOf(proposal.documentKey);
    if (!h) return dismiss('no hunk left');
    if (!editor) return dismiss('its editor is not the active one');
    if (!stillApplies(h, editor.document.lineCount, (i) => editor.document.lineAt(i).text)) return dismiss('the text under it changed');
    const doc = editor.document;
    const cursor = editor.selection.active;
    const inserted = editor.selection.isEmpty ? insertionAtCursor(h, cursor, (i) => doc.lineAt(i).text) : undefined;
    if (inserted !== undefined) {
      // The completion provider shows it as ghost text; Tab there is VS Code's own accept.
      ghost = { uri: doc.uri.toString(), version: doc.version, line: cursor.line, character: cursor.character, text: inserted };
      decorations.clear();
      void setVisible(false);
      void vscode.commands.executeCommand('editor.action.inlineSuggest.trigger');
      return;
    }
    ghost = undefined;
    const shown = proposal!;
    void setVisible(true).then(() => {
      // Still the hunk to show (no dismiss or accept meanwhile): draw it where the cursor is now.
      if (proposal !== shown || shown.current !== h || keyValue !== true) return;
      decorations.show(editor, h, shown.isAt(editor.selection.active.line), shown.remaining);
    });
  };

  const schedule = (doc: vscode.TextDocument): void => {
    const settings = nextEditSettings();
    const client = server.client;
    if (!settings.enabled || unsupported || !client || settings.disabledLanguages.includes(doc.languageId) || !gate.allows(doc.languageId, false)) return;
    const key = doc.uri.toString();
    const limits = { ...DEFAULT_LIMITS, regionLines: settings.regionLines };
    const plan = () => {
      const editor = editorOf(key);
      // The key is the document: a newer request for it replaces this one in the server too.
      return editor ? planRequest(view(doc), editor.selection.active, history, limits, key) : undefined;
    };
    requester.ask(client, settings.delayMs, plan, () => doc.version).then((outcome) => {
      if (outcome.kind !== 'proposal') return void log.debug(`next edit: ${outcome.kind}`);
      const r = outcome.result;
      log.debug(`next edit: ${outcome.hunks.length} hunk(s), ${r.completionTokens} tokens, ${r.acceptedPredictionTokens} drafted from the region and accepted, ${r.rejectedPredictionTokens} rejected`);
      dismiss('a newer proposal');
      proposal = new Proposal(key, outcome.hunks);
      render();
    }, (err: unknown) => {
      if (err instanceof StrataApiError && (err.status === 404 || err.status === 405)) {
        unsupported = true;
        log.warn(`next-edit suggestions are off: the server has no POST /v1/edits/next (${err.message})`);
      } else log.debug(`next edit failed: ${(err as Error).message}`);
    });
  };

  const accept = async (editor: vscode.TextEditor, h: Hunk): Promise<void> => {
    const doc = editor.document;
    if (!stillApplies(h, doc.lineCount, (i) => doc.lineAt(i).text)) return dismiss('the text under it changed');
    const e = hunkEdit(h, doc.lineCount, (i) => doc.lineAt(i).text.length, doc.eol === vscode.EndOfLine.CRLF ? '\r\n' : '\n');
    applying = true;
    let ok = false;
    try {
      // One edit with undo stops around it: Ctrl+Z takes back exactly this hunk.
      ok = await editor.edit((b) => b.replace(new vscode.Range(e.startLine, e.startCharacter, e.endLine, e.endCharacter), e.text), { undoStopBefore: true, undoStopAfter: true });
    } finally {
      applying = false;
    }
    if (!ok || !proposal) return dismiss('the edit was not applied');
    const next = proposal.accepted();
    if (next) return render();
    dismiss('all accepted');
    schedule(doc); // the accepted edit may lead to the next one
  };

  const tab = async (): Promise<void> => {
    const editor = proposal && editorOf(proposal.documentKey);
    if (!proposal || !editor) return dismiss('Tab outside its editor');
    const action = proposal.tab(editor.selection.active.line);
    if (!action) return dismiss('nothing to offer');
    if (action.kind === 'accept') return accept(editor, action.hunk);
    const h = proposal.current!;
    const line = jumpLine(h);
    const pos = new vscode.Position(line, line === h.startLine ? firstChange(h) : editor.document.lineAt(line).text.length);
    editor.selection = new vscode.Selection(pos, pos);
    editor.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    render();
  };

  context.subscriptions.push(
    decorations,
    { dispose: () => requester.cancel() },
    vscode.commands.registerCommand('strata.nextEdit.tab', tab),
    vscode.commands.registerCommand('strata.nextEdit.dismiss', () => { requester.cancel(); dismiss('Esc'); }),
    vscode.workspace.onDidOpenTextDocument(track),
    vscode.workspace.onDidCloseTextDocument((d) => history.forget(d.uri.toString())),
    vscode.workspace.onDidChangeTextDocument((e) => {
      const key = e.document.uri.toString();
      const hist = history.get(key);
      if (!hist || e.contentChanges.length === 0) return;
      for (const c of e.contentChanges) {
        hist.apply({ startLine: c.range.start.line, startCharacter: c.range.start.character, endLine: c.range.end.line, endCharacter: c.range.end.character, text: c.text });
      }
      // The copy must be the document: a change it missed (none should) starts its history over.
      if (hist.lineCount !== e.document.lineCount) hist.reset(e.document.getText());
      if (applying) return;
      const g = ghost;
      if (g && g.uri === key && proposal && isGhostAccept(e, g)) {
        // The ghost text was accepted (Tab, VS Code's own): on to the next hunk.
        ghost = undefined;
        if (proposal.accepted()) return render();
        dismiss('all accepted');
      } else dismiss('the user edited');
      const undoing = e.reason === vscode.TextDocumentChangeReason.Undo || e.reason === vscode.TextDocumentChangeReason.Redo;
      if (!undoing && editorOf(key)) schedule(e.document);
    }),
    vscode.window.onDidChangeTextEditorSelection((e) => {
      if (proposal && !ghost && e.textEditor.document.uri.toString() === proposal.documentKey) render();
    }),
    vscode.window.onDidChangeActiveTextEditor(() => { requester.cancel(); dismiss('another editor'); }),
    gate.onChange(() => { if (gate.reason() !== null) { requester.cancel(); dismiss('completions paused'); } }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('strata.nextEdit') && !nextEditSettings().enabled) { requester.cancel(); dismiss('turned off'); }
    }),
    server.onDidChange((s) => {
      if (s.state === 'ready') return;
      requester.cancel();
      dismiss(`the server is ${s.state}`);
      unsupported = false;
    }),
  );
  for (const d of vscode.workspace.textDocuments) track(d);
  void setVisible(false);

  return {
    itemsAt: (doc, pos) => {
      const g = ghost;
      if (!g || g.uri !== doc.uri.toString() || g.version !== doc.version || g.line !== pos.line || g.character !== pos.character) return undefined;
      return [new vscode.InlineCompletionItem(g.text, new vscode.Range(pos, pos))];
    },
  };
}

/** Where a jump puts the cursor on the hunk's first line: its first changed character. */
function firstChange(h: Hunk): number {
  const segments = viewHunk(h).changed[0];
  if (!segments) return 0;
  let col = 0;
  for (const s of segments) {
    if (s.kind !== 'keep') return col;
    col += s.text.length;
  }
  return col;
}

/** The change is the ghost text inserted where it was offered. */
function isGhostAccept(e: vscode.TextDocumentChangeEvent, g: Ghost): boolean {
  if (e.contentChanges.length !== 1) return false;
  const c = e.contentChanges[0]!;
  return c.range.isEmpty && c.range.start.line === g.line && c.range.start.character === g.character && c.text.replace(/\r\n/g, '\n') === g.text;
}
