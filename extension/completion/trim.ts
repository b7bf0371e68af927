// What of the model's infill text is worth showing. The server already stops at the suffix
// text; these rules clean up what a small model still gets wrong: re-typing the code below the
// cursor, looping on a line, running past the line limit, or duplicating the rest of the line.

export interface CursorContext {
  /** Text on the cursor line before the cursor. */
  linePrefix: string;
  /** Text on the cursor line after the cursor. */
  lineSuffix: string;
  /** Lines above the cursor line, nearest last. */
  prevLines: string[];
  /** Lines below the cursor line, nearest first. */
  nextLines: string[];
  maxLines: number;
}

const CLOSERS = /^[\s)\]}>;,'"`]*$/;

/** Text after the cursor that is more than closing brackets/quotes: only a single line fits there. */
export function isMidLine(ctx: Pick<CursorContext, 'lineSuffix'>): boolean {
  return !CLOSERS.test(ctx.lineSuffix);
}

/** Lines too plain to count as a repeat (blank, lone brackets). */
function trivial(line: string): boolean {
  return /^[\s{}()[\];,]*$/.test(line);
}

export function trimCompletion(raw: string, ctx: CursorContext): string {
  let text = raw.replace(/\r\n?/g, '\n');
  if (!text.trim()) return '';

  if (isMidLine(ctx)) {
    text = text.split('\n')[0]!;
    const rest = ctx.lineSuffix.trimEnd();
    // The model re-typed what already follows the cursor: keep only what comes before it.
    const at = rest ? text.lastIndexOf(rest) : -1;
    // (The space before the re-typed text stays: it separates the completion from it.)
    if (at >= 0 && at + rest.length === text.trimEnd().length) text = text.slice(0, at);
    else text = text.trimEnd();
    return text.trim() && text !== rest ? text : '';
  }

  let lines = text.split('\n');
  const limit = Math.max(1, ctx.maxLines);
  if (lines.length > limit) lines = lines.slice(0, limit);

  // Stop where the completion reaches the code that already follows the cursor.
  const nextCode = ctx.nextLines.find((l) => l.trim() !== '');
  if (nextCode !== undefined && !trivial(nextCode)) {
    const idx = lines.findIndex((l, i) => i > 0 && l.trim() === nextCode.trim());
    if (idx >= 0) lines = lines.slice(0, idx);
  }

  // The first line repeats the line above the cursor: the model is echoing, not completing.
  const above = ctx.prevLines.length ? ctx.prevLines[ctx.prevLines.length - 1]! : undefined;
  const firstFull = ctx.linePrefix + lines[0];
  if (above !== undefined && !trivial(above) && firstFull.trim() === above.trim()) return '';

  // Stop at a loop: a non-trivial line equal to one of the 3 lines before it.
  const full = (k: number): string => (k === 0 ? ctx.linePrefix + lines[0]! : lines[k]!);
  outer: for (let i = 1; i < lines.length; i++) {
    const l = lines[i]!;
    if (trivial(l)) continue;
    for (let k = i - 1; k >= Math.max(0, i - 3); k--) {
      if (full(k).trim() === l.trim()) {
        lines = lines.slice(0, i);
        break outer;
      }
    }
  }

  while (lines.length > 1 && lines[lines.length - 1]!.trim() === '') lines.pop();
  const out = lines.join('\n').trimEnd();
  return out.trim() ? out : '';
}
