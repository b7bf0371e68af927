// Several completion candidates from one streamed infill: the pieces of each candidate gathered by
// index, the order they finished in (the first finished shows at once, as fast as a single one
// would), and the list VS Code cycles with Alt+] / Alt+[ once all are in: trimmed, without
// empty or repeated ones. Pure: the stream's events come in, candidates go out.
import { StrataApiError } from '../client/client.js';
import type { InfillStreamEvent } from '../client/types.js';

export class CandidateCollector {
  private readonly texts = new Map<number, string>();
  private readonly finished: number[] = [];

  /** Takes one event; returns the candidate's index when this event ended it. */
  push(ev: InfillStreamEvent): number | undefined {
    if (ev.type === 'text') {
      this.texts.set(ev.index, (this.texts.get(ev.index) ?? '') + ev.text);
      return undefined;
    }
    if (this.finished.includes(ev.index)) return undefined;
    this.finished.push(ev.index);
    return ev.index;
  }

  text(index: number): string {
    return this.texts.get(index) ?? '';
  }

  /** The finished candidates' texts in the order they finished. */
  done(): string[] {
    return this.finished.map((i) => this.text(i));
  }

  /** Every candidate's text by index (at the end of the stream: all of them). */
  all(): string[] {
    const indices = new Set([...this.texts.keys(), ...this.finished]);
    return [...indices].sort((a, b) => a - b).map((i) => this.text(i));
  }
}

/** The candidates worth showing, in order: no empty ones, none equal to an earlier one. */
export function uniqueCandidates(texts: readonly string[]): string[] {
  const out: string[] = [];
  for (const t of texts) if (t.trim() && !out.includes(t)) out.push(t);
  return out;
}

/** The server refused `n` (a Strata server before candidates, or another server): ask for one from now on. */
export function refusesCandidates(err: unknown): err is StrataApiError {
  return err instanceof StrataApiError && err.status === 400 && err.param === 'n';
}
