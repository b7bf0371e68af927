// A next-edit hunk away from the cursor, drawn in the editor as an inline diff: removed words
// struck through, added words beside them, lines only added shown after the hunk, a gutter mark,
// and a hint saying what Tab and Esc do (at the hunk, and at the cursor while it is elsewhere).
import * as vscode from 'vscode';
import { viewHunk, type Hunk } from './hunks.js';

/** The hint's words (the e2e suite reads them off the screen). */
export const HINT_AT_HUNK = 'Tab to accept, Esc to dismiss';
export const hintElsewhere = (line: number): string => `Next edit at line ${line + 1}: Tab to jump, Tab to accept, Esc to dismiss`;

/** Added lines shown after the hunk, one after another on its last line (a decoration holds one line). */
const LINE_JOIN = '  ⏎  ';

export class HunkDecorations implements vscode.Disposable {
  private readonly removed: vscode.TextEditorDecorationType;
  private readonly added: vscode.TextEditorDecorationType;
  private readonly gutter: vscode.TextEditorDecorationType;
  private readonly hint: vscode.TextEditorDecorationType;
  private shownIn: vscode.TextEditor | undefined;

  constructor(extensionUri: vscode.Uri) {
    this.removed = vscode.window.createTextEditorDecorationType({
      textDecoration: 'line-through',
      backgroundColor: new vscode.ThemeColor('diffEditor.removedTextBackground'),
    });
    this.added = vscode.window.createTextEditorDecorationType({
      after: { backgroundColor: new vscode.ThemeColor('diffEditor.insertedTextBackground'), color: new vscode.ThemeColor('editor.foreground') },
    });
    this.gutter = vscode.window.createTextEditorDecorationType({
      gutterIconPath: vscode.Uri.joinPath(extensionUri, 'media', 'next-edit.svg'),
      gutterIconSize: 'contain',
      overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.modifiedForeground'),
      overviewRulerLane: vscode.OverviewRulerLane.Right,
      isWholeLine: true,
      backgroundColor: new vscode.ThemeColor('diffEditor.unchangedRegionBackground'),
    });
    this.hint = vscode.window.createTextEditorDecorationType({
      after: { color: new vscode.ThemeColor('editorCodeLens.foreground'), fontStyle: 'italic', margin: '0 0 0 2em' },
      rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
    });
  }

  /** Draws `h` in `editor`; the hint goes on the hunk when the cursor is at it, else on the cursor's line too. */
  show(editor: vscode.TextEditor, h: Hunk, cursorAtHunk: boolean, remaining: number): void {
    if (this.shownIn && this.shownIn !== editor) this.clear();
    this.shownIn = editor;
    const doc = editor.document;
    const view = viewHunk(h);
    const removed: vscode.Range[] = [];
    const added: vscode.DecorationOptions[] = [];
    const hover = hunkHover(h);

    view.changed.forEach((segments, i) => {
      const line = h.startLine + i;
      let col = 0;
      for (const s of segments) {
        if (s.kind === 'ins') {
          added.push({ range: new vscode.Range(line, col, line, col), renderOptions: { after: { contentText: visible(s.text) } }, hoverMessage: hover });
          continue;
        }
        if (s.kind === 'del') removed.push(new vscode.Range(line, col, line, col + s.text.length));
        col += s.text.length;
      }
    });
    for (const line of view.removedLines) removed.push(doc.lineAt(line).range);
    if (view.addedLines.length) {
      // After the hunk's last old line; an insertion goes after the line before it (or before the first).
      const anchor = h.oldLines.length ? h.startLine + h.oldLines.length - 1 : Math.max(0, h.startLine - 1);
      const end = doc.lineAt(Math.min(anchor, doc.lineCount - 1)).range.end;
      const text = (h.oldLines.length || h.startLine > 0 ? LINE_JOIN : '') + view.addedLines.map(visible).join(LINE_JOIN);
      added.push({ range: new vscode.Range(end, end), renderOptions: { after: { contentText: text, margin: '0 0 0 1em' } }, hoverMessage: hover });
    }

    const first = Math.min(h.startLine, doc.lineCount - 1);
    const last = Math.min(h.startLine + Math.max(h.oldLines.length, 1) - 1, doc.lineCount - 1);
    const more = remaining > 1 ? ` (${remaining - 1} more after this)` : '';
    const hints: vscode.DecorationOptions[] = [{ range: endOf(doc, last), renderOptions: { after: { contentText: `${HINT_AT_HUNK}${more}` } } }];
    const cursor = editor.selection.active.line;
    if (!cursorAtHunk && cursor !== last) hints.push({ range: endOf(doc, cursor), renderOptions: { after: { contentText: hintElsewhere(h.startLine) } } });

    editor.setDecorations(this.removed, removed.map((range) => ({ range, hoverMessage: hover })));
    editor.setDecorations(this.added, added);
    editor.setDecorations(this.gutter, [{ range: new vscode.Range(first, 0, first, 0), hoverMessage: hover }]);
    editor.setDecorations(this.hint, hints);
  }

  clear(): void {
    const e = this.shownIn;
    this.shownIn = undefined;
    if (!e) return;
    for (const t of [this.removed, this.added, this.gutter, this.hint]) e.setDecorations(t, []);
  }

  dispose(): void {
    this.clear();
    for (const t of [this.removed, this.added, this.gutter, this.hint]) t.dispose();
  }
}

const endOf = (doc: vscode.TextDocument, line: number): vscode.Range => {
  const end = doc.lineAt(line).range.end;
  return new vscode.Range(end, end);
};

/** Spaces would collapse at the edges of a decoration's text: keep them visible. */
function visible(text: string): string {
  return text.replace(/ /g, '\u00a0').replace(/\t/g, '\u00a0\u00a0');
}

/** The hunk as a diff block for the hover. */
function hunkHover(h: Hunk): vscode.MarkdownString {
  const lines = [...h.oldLines.map((l) => `-${l}`), ...h.newLines.map((l) => `+${l}`)].join('\n');
  const md = new vscode.MarkdownString(`**Strata next edit** (Tab to accept, Esc to dismiss)\n\n`);
  md.appendCodeblock(lines, 'diff');
  return md;
}
