// One next-edit proposal while it is offered: its hunks one after another, and what Tab does now.
// Tab on a hunk away from the cursor jumps to it; Tab at the hunk accepts it, and the next hunk is
// offered; Esc (or any edit of the user's) dismisses the rest. Pure: the editor glue (controller.ts)
// moves the cursor and applies the text.
import { shiftAfter, type Hunk } from './hunks.js';

export type TabAction =
  | { kind: 'jump'; line: number }
  | { kind: 'accept'; hunk: Hunk };

export class Proposal {
  private hunks: Hunk[];

  /** `hunks` in the order to offer them (orderHunks). */
  constructor(readonly documentKey: string, hunks: readonly Hunk[]) {
    this.hunks = [...hunks];
  }

  /** The hunk offered now, undefined once all were accepted or dismissed. */
  get current(): Hunk | undefined {
    return this.hunks[0];
  }

  /** Hunks left, the current one included. */
  get remaining(): number {
    return this.hunks.length;
  }

  /** Whether the cursor's line is on the current hunk (an insertion: the line before it or its own). */
  isAt(cursorLine: number): boolean {
    const h = this.current;
    if (!h) return false;
    if (h.oldLines.length === 0) return cursorLine === h.startLine - 1 || cursorLine === h.startLine;
    return cursorLine >= h.startLine && cursorLine < h.startLine + h.oldLines.length;
  }

  /** What Tab does with the cursor on `cursorLine`; undefined when nothing is offered. */
  tab(cursorLine: number): TabAction | undefined {
    const h = this.current;
    if (!h) return undefined;
    if (this.isAt(cursorLine)) return { kind: 'accept', hunk: h };
    return { kind: 'jump', line: jumpLine(h) };
  }

  /** The current hunk was applied: offer the next (moved by the lines it added). */
  accepted(): Hunk | undefined {
    const [done, ...rest] = this.hunks;
    if (!done) return undefined;
    this.hunks = shiftAfter(rest, done);
    return this.current;
  }

  dismiss(): void {
    this.hunks = [];
  }
}

/** Where a jump puts the cursor: the hunk's first line (an insertion: the line before it). */
export function jumpLine(h: Hunk): number {
  return h.oldLines.length === 0 && h.startLine > 0 ? h.startLine - 1 : h.startLine;
}
