// What to ask the server and what to show while VS Code's suggest widget is open. VS Code then
// only shows an inline item that extends the selected suggestion: same replace range, insert
// text starting with the suggestion's text. So the request is made as if that suggestion had
// been accepted, and the answer is shown as the suggestion's text plus the model's completion.
import type { CursorContext } from './trim.js';
import type { InfillWindow } from './window.js';

export interface Position {
  line: number;
  character: number;
}

/** The item selected in the suggest widget (VS Code's SelectedCompletionInfo, as plain data). */
export interface SelectedCompletion {
  /** The range the suggestion replaces. */
  start: Position;
  end: Position;
  /** The text it puts there. */
  text: string;
}

/** One infill request and the inline item to make of its answer. */
export interface InfillPlan {
  /**
   * Text sent before/after the insertion point, and the context the trim rules see. With a
   * selection these are the document as if the suggestion had been accepted, so they also serve
   * as the cache key: an answer for the plain prefix only matches where it fits that text.
   */
  prefix: string;
  suffix: string;
  cursor: CursorContext;
  /** The inline item's replace range on the cursor line, as character offsets. */
  replaceStart: number;
  replaceEnd: number;
  /** The item's insert text for a trimmed completion; undefined = nothing worth showing. */
  insertText(completion: string): string | undefined;
}

/**
 * The request for the cursor in `win` (built by buildWindow for `pos`), taking the selected
 * suggestion into account when there is one. undefined = the selection cannot be extended
 * (not on the cursor's line, or its range does not hold the cursor): show no item.
 */
export function planInfill(win: InfillWindow, pos: Position, selected?: SelectedCompletion): InfillPlan | undefined {
  const { cursor } = win;
  if (!selected) {
    return {
      prefix: win.prefix, suffix: win.suffix, cursor,
      replaceStart: pos.character, replaceEnd: pos.character,
      insertText: (c) => c || undefined,
    };
  }

  const { start, end, text } = selected;
  const line = cursor.linePrefix + cursor.lineSuffix;
  if (start.line !== pos.line || end.line !== pos.line) return undefined;
  // buildWindow cut the line at the cursor; a cursor past the line's end has no usable column.
  if (pos.character !== cursor.linePrefix.length) return undefined;
  if (start.character < 0 || start.character > pos.character || end.character < pos.character || end.character > line.length) return undefined;

  const before = line.slice(0, start.character) + text;
  const lineSuffix = line.slice(end.character);
  // A multi-line suggestion (a snippet) moves the insertion point to its last line.
  const pieces = before.split('\n');
  const linePrefix = pieces.pop()!;
  const prevLines = [...cursor.prevLines, ...pieces];
  return {
    prefix: [...prevLines, linePrefix].join('\n'),
    suffix: [lineSuffix, ...cursor.nextLines].join('\n'),
    cursor: { ...cursor, linePrefix, lineSuffix, prevLines },
    replaceStart: start.character,
    replaceEnd: end.character,
    // Only the suggestion itself adds nothing: the widget already previews it.
    insertText: (c) => (c ? text + c : undefined),
  };
}
