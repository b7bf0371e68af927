// The model's answer (the region rewritten) against the region: the hunks that change it, their
// order (the one at or after the cursor first, then on down, then those above), which one is an
// insertion at the cursor (shown as ghost text), and each changed line's words (shown struck
// through and beside). Pure: no vscode.
import { diffArrays, diffWordsWithSpace } from 'diff';
import { splitLines } from './edit-history.js';

/** Lines [startLine, startLine + oldLines.length) of the document become newLines. */
export interface Hunk {
  startLine: number;
  oldLines: string[];
  newLines: string[];
}

/**
 * The hunks that turn `regionLines` (starting at document line `startLine`) into `answer`. An
 * answer for a region that ended with a line end may come without it: that is no change.
 */
export function diffRegion(regionLines: readonly string[], startLine: number, answer: string, regionEndsLine: boolean): Hunk[] {
  // The region's lines carry no line ends; its text ends with one unless it holds the file's last
  // line. The answer's last line end is that one, so it is not a line of its own.
  const text = regionEndsLine ? answer.replace(/(\r\n|\r|\n)$/, '') : answer;
  const next = answer === '' ? [] : splitLines(text);
  const old = [...regionLines];
  const hunks: Hunk[] = [];
  let line = startLine;
  let cur: Hunk | undefined;
  for (const part of diffArrays(old, next)) {
    if (!part.added && !part.removed) {
      if (cur) hunks.push(cur);
      cur = undefined;
      line += part.count;
      continue;
    }
    cur ??= { startLine: line, oldLines: [], newLines: [] };
    if (part.removed) {
      cur.oldLines.push(...part.value);
      line += part.count;
    } else cur.newLines.push(...part.value);
  }
  if (cur) hunks.push(cur);
  return hunks;
}

/** The last document line a hunk touches (for an insertion: the line it goes before). */
const lastLine = (h: Hunk): number => h.startLine + Math.max(h.oldLines.length, 1) - 1;

/** Hunks in the order they are offered: the first ending at or after the cursor line, on down, then from the top. */
export function orderHunks(hunks: readonly Hunk[], cursorLine: number): Hunk[] {
  const sorted = [...hunks].sort((a, b) => a.startLine - b.startLine);
  const at = sorted.findIndex((h) => lastLine(h) >= cursorLine);
  return at <= 0 ? sorted : [...sorted.slice(at), ...sorted.slice(0, at)];
}

/**
 * The text a hunk inserts at the cursor, when inserting it there is all the hunk does (then it shows
 * as ghost text); undefined otherwise. An insertion of whole lines right after the cursor's line
 * counts when the cursor is at that line's end.
 */
export function insertionAtCursor(h: Hunk, cursor: { line: number; character: number }, lineAt: (i: number) => string): string | undefined {
  let oldLines = h.oldLines;
  let newLines = h.newLines;
  let start = h.startLine;
  if (oldLines.length === 0 && start === cursor.line + 1) {
    const line = lineAt(cursor.line);
    oldLines = [line];
    newLines = [line, ...newLines];
    start = cursor.line;
  }
  if (cursor.line < start || cursor.line >= start + oldLines.length) return undefined;
  const oldText = oldLines.join('\n');
  const newText = newLines.join('\n');
  let at = cursor.character;
  for (let i = start; i < cursor.line; i++) at += oldLines[i - start]!.length + 1;
  if (at > oldText.length || newText.length <= oldText.length) return undefined;
  const head = oldText.slice(0, at);
  const tail = oldText.slice(at);
  if (!newText.startsWith(head) || !newText.endsWith(tail)) return undefined;
  return newText.slice(at, newText.length - tail.length);
}

/** A piece of a changed line: kept, removed (struck through) or added (shown beside). */
export interface Segment { kind: 'keep' | 'del' | 'ins'; text: string }

/** How a hunk shows: its old lines paired with new ones (by words), then lines only removed or only added. */
export interface HunkView {
  /** Old line startLine + i becomes the segments' keep + ins text. */
  changed: Segment[][];
  /** Old lines after the paired ones, removed whole (document lines). */
  removedLines: number[];
  /** New lines after the paired ones, added after the hunk's last old line (or before startLine). */
  addedLines: string[];
}

export function viewHunk(h: Hunk): HunkView {
  const pairs = Math.min(h.oldLines.length, h.newLines.length);
  const changed: Segment[][] = [];
  for (let i = 0; i < pairs; i++) {
    changed.push(diffWordsWithSpace(h.oldLines[i]!, h.newLines[i]!).map((p) => ({ kind: p.added ? 'ins' : p.removed ? 'del' : 'keep', text: p.value })));
  }
  const removedLines: number[] = [];
  for (let i = pairs; i < h.oldLines.length; i++) removedLines.push(h.startLine + i);
  return { changed, removedLines, addedLines: h.newLines.slice(pairs) };
}

/** The hunks still to offer once `done` was applied: those below it move by the lines it added. */
export function shiftAfter(rest: readonly Hunk[], done: Hunk): Hunk[] {
  const delta = done.newLines.length - done.oldLines.length;
  return rest.map((h) => (h.startLine > done.startLine ? { ...h, startLine: h.startLine + delta } : h));
}

/** A replacement as the editor applies it: a range (0-based lines, characters) and its new text. */
export interface LineEdit { startLine: number; startCharacter: number; endLine: number; endCharacter: number; text: string }

/**
 * The one edit that applies a hunk to a document of `lineCount` lines (`lineLength(i)` each), with
 * the document's line end `eol`. Whole lines are replaced, removed with their line end, or inserted
 * before `startLine` (after the last line when it is the line count).
 */
export function hunkEdit(h: Hunk, lineCount: number, lineLength: (i: number) => number, eol: string): LineEdit {
  const text = h.newLines.join(eol);
  if (h.oldLines.length === 0) {
    if (h.startLine >= lineCount) {
      const last = lineCount - 1;
      return { startLine: last, startCharacter: lineLength(last), endLine: last, endCharacter: lineLength(last), text: eol + text };
    }
    return { startLine: h.startLine, startCharacter: 0, endLine: h.startLine, endCharacter: 0, text: text + eol };
  }
  const lastOld = h.startLine + h.oldLines.length - 1;
  if (h.newLines.length > 0) return { startLine: h.startLine, startCharacter: 0, endLine: lastOld, endCharacter: lineLength(lastOld), text };
  // Removing lines: take a line end with them (the one after, or before them at the end of the file).
  if (lastOld + 1 < lineCount) return { startLine: h.startLine, startCharacter: 0, endLine: lastOld + 1, endCharacter: 0, text: '' };
  if (h.startLine === 0) return { startLine: 0, startCharacter: 0, endLine: lastOld, endCharacter: lineLength(lastOld), text: '' };
  return { startLine: h.startLine - 1, startCharacter: lineLength(h.startLine - 1), endLine: lastOld, endCharacter: lineLength(lastOld), text: '' };
}

/** Whether the document still holds the hunk's old lines where it says (else it must not be applied). */
export function stillApplies(h: Hunk, lineCount: number, lineAt: (i: number) => string): boolean {
  if (h.startLine + h.oldLines.length > lineCount) return false;
  return h.oldLines.every((l, i) => lineAt(h.startLine + i) === l);
}
