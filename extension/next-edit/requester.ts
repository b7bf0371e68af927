// Asking for the next edit after the user's edits: wait out the delay (a newer edit starts the
// wait again), send one request at a time (a newer edit aborts the one in flight, and its
// supersede_key drops it inside the server too), and keep only an answer for the document as it
// still is. No vscode: the client and the document come in as interfaces.
import { StrataApiError } from '../client/client.js';
import type { NextEditResult } from '../client/types.js';
import { LatestOnlyScheduler } from '../completion/debounce.js';
import { diffRegion, orderHunks, type Hunk } from './hunks.js';
import type { NextEditPlan } from './request.js';

export interface NextEditClient {
  nextEdit(req: NextEditPlan['body'], signal: AbortSignal): Promise<NextEditResult>;
}

export type NextEditOutcome =
  | { kind: 'proposal'; hunks: Hunk[]; plan: NextEditPlan; result: NextEditResult }
  /** superseded: a newer edit came; stale: the document changed meanwhile; nothing: the answer changes nothing (or could not be read); cut: max_tokens cut it. */
  | { kind: 'superseded' | 'stale' | 'nothing' | 'cut' | 'skipped' };

export class NextEditRequester {
  constructor(private readonly scheduler = new LatestOnlyScheduler()) {}

  /**
   * After `delayMs` (unless a newer call came first), plans the request from the document as it is
   * then (undefined: skipped), asks, and diffs the answer against the region. `version` tells
   * whether the document is still the one planned from when the answer comes.
   */
  async ask(client: NextEditClient, delayMs: number, plan: () => NextEditPlan | undefined, version: () => number): Promise<NextEditOutcome> {
    const signal = await this.scheduler.wait(delayMs);
    if (!signal) return { kind: 'superseded' };
    const p = plan();
    if (!p) return { kind: 'skipped' };
    let result: NextEditResult;
    try {
      result = await client.nextEdit(p.body, signal);
    } catch (err) {
      // 409: the server ended it for a newer request with the same key (another window's, say).
      if (signal.aborted || (err instanceof StrataApiError && err.is('superseded'))) return { kind: 'superseded' };
      throw err;
    }
    if (signal.aborted) return { kind: 'superseded' };
    if (version() !== p.version) return { kind: 'stale' };
    if (result.finishReason === 'length') return { kind: 'cut' };
    if (result.outcome !== 'edited') return { kind: 'nothing' };
    const hunks = orderHunks(diffRegion(p.region.lines, p.region.startLine, result.region, p.regionEndsLine), p.cursor.line);
    return hunks.length ? { kind: 'proposal', hunks, plan: p, result } : { kind: 'nothing' };
  }

  /** Drops what waits or runs (the proposal was dismissed, the server went away). */
  cancel(): void {
    this.scheduler.cancel();
  }
}
