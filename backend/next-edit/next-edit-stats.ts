// Counters of next-edit requests for /metrics: how each ended (the answer's outcome, or failed)
// and how much of the region the answers repeated (the prediction's accepted and rejected tokens).
// One set per request ledger (one per served model), so several servers in one process keep theirs.
import type { NextEditOutcome } from '../../contract/next-edit.js';
import type { NextEditMetrics } from '../../contract/metrics.js';

export class NextEditCounters {
  private readonly byOutcome: Record<NextEditOutcome | 'failed', number> = { edited: 0, unchanged: 0, unparsed: 0, failed: 0 };
  private accepted = 0;
  private rejected = 0;
  private completion = 0;

  answered(outcome: NextEditOutcome, figures: { accepted: number; rejected: number; completionTokens: number }): void {
    this.byOutcome[outcome]++;
    this.accepted += figures.accepted;
    this.rejected += figures.rejected;
    this.completion += figures.completionTokens;
  }

  /** Ended without an answer (bad input after acceptance, superseded, engine error, client gone). */
  failed(): void { this.byOutcome.failed++; }

  snapshot(): NextEditMetrics {
    return {
      requests: { ...this.byOutcome },
      completion_tokens: this.completion,
      accepted_prediction_tokens: this.accepted,
      rejected_prediction_tokens: this.rejected,
    };
  }
}

const counters = new WeakMap<object, NextEditCounters>();

/** The counters kept beside `owner` (the app's request ledger). */
export function nextEditCounters(owner: object): NextEditCounters {
  let c = counters.get(owner);
  if (!c) { c = new NextEditCounters(); counters.set(owner, c); }
  return c;
}
