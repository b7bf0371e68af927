// Which lines the model may rewrite (the editable region) and which it sees around them (the
// excerpt). The region holds the cursor and, where it fits, the edit being made; it reaches further
// below the cursor than above, because the edits that follow one (a renamed parameter's uses, the
// next case of a switch) are mostly below it. Pure: the document is a line accessor.

export interface RegionInput {
  lineCount: number;
  line(i: number): string;
  cursor: { line: number; character: number };
  /** The edit being made (current lines), when there is one. */
  edit?: { startLine: number; endLine: number } | undefined;
  /** Lines of the region (the setting). */
  regionLines: number;
  /** Lines of the excerpt around the region, on each side. */
  contextLines: number;
  /** The excerpt's size at most; context lines are dropped (farthest first) to fit. */
  maxExcerptChars: number;
}

/** The region and excerpt as the request sends them (offsets into `excerpt`), plus their lines. */
export interface Region {
  /** First and one-past-last line of the region in the document. */
  startLine: number;
  endLine: number;
  excerptStartLine: number;
  excerptEndLine: number;
  excerpt: string;
  /** Offsets into `excerpt`: the region [start, end) and the cursor. */
  start: number;
  end: number;
  cursor: number;
  /** The region's lines as they are (what the answer is diffed against). */
  lines: string[];
}

/** The region for this cursor, or undefined when even the region alone is over the size limit. */
export function chooseRegion(r: RegionInput): Region | undefined {
  const n = Math.max(1, Math.min(r.regionLines, r.lineCount));
  const cursorLine = Math.max(0, Math.min(r.cursor.line, r.lineCount - 1));
  let start = cursorLine - Math.floor((n - 1) / 3);
  // Take in the edit being made where the region can hold both it and the cursor.
  if (r.edit) {
    if (r.edit.startLine < start) start = Math.max(r.edit.startLine, cursorLine - n + 1);
    const end = start + n - 1;
    if (r.edit.endLine > end) start = Math.min(start + (r.edit.endLine - end), cursorLine);
  }
  start = Math.max(0, Math.min(start, r.lineCount - n));
  const endLine = start + n;

  const piece = (i: number): string => (i < r.lineCount - 1 ? `${r.line(i)}\n` : r.line(i));
  let regionText = '';
  for (let i = start; i < endLine; i++) regionText += piece(i);
  if (regionText.length > r.maxExcerptChars) return undefined;

  // Context lines, nearest first, alternating above and below, while they fit.
  let from = start;
  let to = endLine;
  let size = regionText.length;
  for (let k = 0; k < r.contextLines; k++) {
    let grew = false;
    if (from > 0 && size + piece(from - 1).length <= r.maxExcerptChars) { from--; size += piece(from).length; grew = true; }
    if (to < r.lineCount && size + piece(to).length <= r.maxExcerptChars) { size += piece(to).length; to++; grew = true; }
    if (!grew) break;
  }

  let excerpt = '';
  for (let i = from; i < start; i++) excerpt += piece(i);
  const regionStart = excerpt.length;
  let cursor = regionStart;
  const lines: string[] = [];
  for (let i = start; i < endLine; i++) {
    if (i === cursorLine) cursor = excerpt.length + Math.min(r.cursor.character, r.line(i).length);
    excerpt += piece(i);
    lines.push(r.line(i));
  }
  const regionEnd = excerpt.length;
  for (let i = endLine; i < to; i++) excerpt += piece(i);
  return { startLine: start, endLine, excerptStartLine: from, excerptEndLine: to, excerpt, start: regionStart, end: regionEnd, cursor, lines };
}
