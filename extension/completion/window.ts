// The text around the cursor that an infill request sends: a window of lines above (prefix)
// and below (suffix), plus the pieces the stop rules need.
import type { CursorContext } from './trim.js';

export interface InfillWindow {
  prefix: string;
  suffix: string;
  cursor: CursorContext;
  /** First and last document lines inside the window (to keep extra context chunks out of it). */
  fromLine: number;
  toLine: number;
}

export function buildWindow(lines: readonly string[], line: number, character: number, opts: { prefixLines: number; suffixLines: number; maxLines: number }): InfillWindow {
  const cur = lines[line] ?? '';
  const linePrefix = cur.slice(0, character);
  const lineSuffix = cur.slice(character);
  const fromLine = Math.max(0, line - opts.prefixLines);
  const toLine = Math.min(lines.length - 1, line + opts.suffixLines);
  const prevLines = lines.slice(fromLine, line);
  const nextLines = lines.slice(line + 1, toLine + 1);
  return {
    prefix: [...prevLines, linePrefix].join('\n'),
    suffix: [lineSuffix, ...nextLines].join('\n'),
    cursor: { linePrefix, lineSuffix, prevLines, nextLines, maxLines: opts.maxLines },
    fromLine,
    toLine: Math.max(toLine, line),
  };
}
