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
import { EditHistory } from './edit-history.js';
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
  const controller = new NextEditController(context.extensionUri, server, gate, log);
  context.subscriptions.push(controller, ...controller.listen());
  return { itemsAt: (doc, pos) => controller.itemsAt(doc, pos) };
}

/** One editor session's next edits: the edit history, the request in flight, the proposal shown. */
class NextEditController implements vscode.Disposable {
  private readonly history = new EditHistory();
  private readonly requester = new NextEditRequester();
  private readonly decorations: HunkDecorations;
  private proposal: Proposal | undefined;
  private ghost: Ghost | undefined;
  /** True while the extension applies an accepted hunk (that edit continues the proposal). */
  private applying = false;
  /** The server has no next-edit route (another OpenAI-compatible server): stop asking until it changes. */
  private unsupported = false;
  // The key is set before the diff is drawn: setContext runs through the command service, which can
  // answer after later drawing calls, so a Tab pressed on a diff just drawn would be VS Code's indent.
  private keyOn: Promise<unknown> = Promise.resolve();
  private keyValue: boolean | undefined;

  constructor(extensionUri: vscode.Uri, private readonly server: ServerConnection, private readonly gate: CompletionGate,
    private readonly log: vscode.LogOutputChannel) {
    this.decorations = new HunkDecorations(extensionUri);
  }

  /** The commands and the editor events it answers; starts tracking the open documents. */
  listen(): vscode.Disposable[] {
    const subscriptions = [
      vscode.commands.registerCommand('strata.nextEdit.tab', () => this.tab()),
      vscode.commands.registerCommand('strata.nextEdit.dismiss', () => { this.requester.cancel(); this.dismiss('Esc'); }),
      vscode.workspace.onDidOpenTextDocument((d) => this.track(d)),
      vscode.workspace.onDidCloseTextDocument((d) => this.history.forget(d.uri.toString())),
      vscode.workspace.onDidChangeTextDocument((e) => this.onEdit(e)),
      vscode.window.onDidChangeTextEditorSelection((e) => {
        if (this.proposal && !this.ghost && e.textEditor.document.uri.toString() === this.proposal.documentKey) this.render();
      }),
      vscode.window.onDidChangeActiveTextEditor(() => this.stop('another editor')),
      this.gate.onChange(() => { if (this.gate.reason() !== null) this.stop('completions paused'); }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('strata.nextEdit') && !nextEditSettings().enabled) this.stop('turned off');
      }),
      this.server.onDidChange((s) => {
        if (s.state === 'ready') return;
        this.stop(`the server is ${s.state}`);
        this.unsupported = false;
      }),
    ];
    for (const d of vscode.workspace.textDocuments) this.track(d);
    void this.setVisible(false);
    return subscriptions;
  }

  dispose(): void {
    this.requester.cancel();
    this.decorations.dispose();
  }

  /** For the inline completion provider: the ghost text waiting at this position. */
  itemsAt(doc: vscode.TextDocument, pos: vscode.Position): vscode.InlineCompletionItem[] | undefined {
    const g = this.ghost;
    if (!g || g.uri !== doc.uri.toString() || g.version !== doc.version || g.line !== pos.line || g.character !== pos.character) return undefined;
    return [new vscode.InlineCompletionItem(g.text, new vscode.Range(pos, pos))];
  }

  private track(doc: vscode.TextDocument): void {
    if (doc.uri.scheme !== 'file' || doc.getText().length > MAX_TRACKED_CHARS) return;
    this.history.open(doc.uri.toString(), vscode.workspace.asRelativePath(doc.uri), doc.getText());
  }

  private view(doc: vscode.TextDocument): DocumentView {
    return {
      key: doc.uri.toString(), path: vscode.workspace.asRelativePath(doc.uri), languageId: doc.languageId,
      version: doc.version, lineCount: doc.lineCount, line: (i) => doc.lineAt(i).text,
    };
  }

  private editorOf(key: string): vscode.TextEditor | undefined {
    const e = vscode.window.activeTextEditor;
    return e && e.document.uri.toString() === key ? e : undefined;
  }

  private setVisible(on: boolean): Promise<unknown> {
    if (this.keyValue !== on) {
      this.keyValue = on;
      this.keyOn = Promise.resolve(vscode.commands.executeCommand('setContext', VISIBLE_KEY, on));
    }
    return this.keyOn;
  }

  private stop(why: string): void {
    this.requester.cancel();
    this.dismiss(why);
  }

  private dismiss(why: string): void {
    if (this.proposal) this.log.debug(`next edit dismissed: ${why}`);
    this.proposal?.dismiss();
    this.proposal = undefined;
    this.ghost = undefined;
    this.decorations.clear();
    void this.setVisible(false);
  }

  /** Shows the proposal's current hunk (or ends it when none is left or the text moved under it). */
  private render(): void {
    const h = this.proposal?.current;
    const editor = this.proposal && this.editorOf(this.proposal.documentKey);
    if (!h) { this.dismiss('no hunk left'); return; }
    if (!editor) { this.dismiss('its editor is not the active one'); return; }
    if (!stillApplies(h, editor.document.lineCount, (i) => editor.document.lineAt(i).text)) { this.dismiss('the text under it changed'); return; }
    const doc = editor.document;
    const cursor = editor.selection.active;
    const inserted = editor.selection.isEmpty ? insertionAtCursor(h, cursor, (i) => doc.lineAt(i).text) : undefined;
    if (inserted !== undefined) {
      // The completion provider shows it as ghost text; Tab there is VS Code's own accept.
      this.ghost = { uri: doc.uri.toString(), version: doc.version, line: cursor.line, character: cursor.character, text: inserted };
      this.decorations.clear();
      void this.setVisible(false);
      void vscode.commands.executeCommand('editor.action.inlineSuggest.trigger');
      return;
    }
    this.ghost = undefined;
    const shown = this.proposal!;
    void this.setVisible(true).then(() => {
      // Still the hunk to show (no dismiss or accept meanwhile): draw it where the cursor is now.
      if (this.proposal !== shown || shown.current !== h || this.keyValue !== true) return;
      this.decorations.show(editor, h, shown.isAt(editor.selection.active.line), shown.remaining);
    });
  }

  private schedule(doc: vscode.TextDocument): void {
    const settings = nextEditSettings();
    const client = this.server.client;
    if (!settings.enabled || this.unsupported || !client || settings.disabledLanguages.includes(doc.languageId) || !this.gate.allows(doc.languageId, false)) return;
    const key = doc.uri.toString();
    const limits = { ...DEFAULT_LIMITS, regionLines: settings.regionLines };
    const plan = () => {
      const editor = this.editorOf(key);
      // The key is the document: a newer request for it replaces this one in the server too.
      return editor ? planRequest(this.view(doc), editor.selection.active, this.history, limits, key) : undefined;
    };
    this.requester.ask(client, settings.delayMs, plan, () => doc.version).then((outcome) => {
      if (outcome.kind !== 'proposal') return void this.log.debug(`next edit: ${outcome.kind}`);
      const r = outcome.result;
      this.log.debug(`next edit: ${outcome.hunks.length} hunk(s), ${r.completionTokens} tokens, ${r.acceptedPredictionTokens} drafted from the region and accepted, ${r.rejectedPredictionTokens} rejected`);
      this.dismiss('a newer proposal');
      this.proposal = new Proposal(key, outcome.hunks);
      this.render();
    }, (err: unknown) => {
      if (err instanceof StrataApiError && (err.status === 404 || err.status === 405)) {
        this.unsupported = true;
        this.log.warn(`next-edit suggestions are off: the server has no POST /v1/edits/next (${err.message})`);
      } else this.log.debug(`next edit failed: ${(err as Error).message}`);
    });
  }

  private async accept(editor: vscode.TextEditor, h: Hunk): Promise<void> {
    const doc = editor.document;
    if (!stillApplies(h, doc.lineCount, (i) => doc.lineAt(i).text)) return this.dismiss('the text under it changed');
    const e = hunkEdit(h, doc.lineCount, (i) => doc.lineAt(i).text.length, doc.eol === vscode.EndOfLine.CRLF ? '\r\n' : '\n');
    this.applying = true;
    let ok = false;
    try {
      // One edit with undo stops around it: Ctrl+Z takes back exactly this hunk.
      ok = await editor.edit((b) => b.replace(new vscode.Range(e.startLine, e.startCharacter, e.endLine, e.endCharacter), e.text), { undoStopBefore: true, undoStopAfter: true });
    } finally {
      this.applying = false;
    }
    if (!ok || !this.proposal) return this.dismiss('the edit was not applied');
    const next = this.proposal.accepted();
    if (next) return this.render();
    this.dismiss('all accepted');
    this.schedule(doc); // the accepted edit may lead to the next one
  }

  private async tab(): Promise<void> {
    const editor = this.proposal && this.editorOf(this.proposal.documentKey);
    if (!this.proposal || !editor) return this.dismiss('Tab outside its editor');
    const action = this.proposal.tab(editor.selection.active.line);
    if (!action) return this.dismiss('nothing to offer');
    if (action.kind === 'accept') return this.accept(editor, action.hunk);
    const h = this.proposal.current!;
    const line = jumpLine(h);
    const pos = new vscode.Position(line, line === h.startLine ? firstChange(h) : editor.document.lineAt(line).text.length);
    editor.selection = new vscode.Selection(pos, pos);
    editor.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    this.render();
  }

  /** A document changed: keep its copy, and end (or continue, for accepted ghost text) the proposal. */
  private onEdit(e: vscode.TextDocumentChangeEvent): void {
    const key = e.document.uri.toString();
    const hist = this.history.get(key);
    if (!hist || e.contentChanges.length === 0) return;
    for (const c of e.contentChanges) {
      hist.apply({ startLine: c.range.start.line, startCharacter: c.range.start.character, endLine: c.range.end.line, endCharacter: c.range.end.character, text: c.text });
    }
    // The copy must be the document: a change it missed (none should) starts its history over.
    if (hist.lineCount !== e.document.lineCount) hist.reset(e.document.getText());
    if (this.applying) return;
    const g = this.ghost;
    if (g && g.uri === key && this.proposal && isGhostAccept(e, g)) {
      // The ghost text was accepted (Tab, VS Code's own): on to the next hunk.
      this.ghost = undefined;
      if (this.proposal.accepted()) { this.render(); return; }
      this.dismiss('all accepted');
    } else this.dismiss('the user edited');
    const undoing = e.reason === vscode.TextDocumentChangeReason.Undo || e.reason === vscode.TextDocumentChangeReason.Redo;
    if (!undoing && this.editorOf(key)) this.schedule(e.document);
  }
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
