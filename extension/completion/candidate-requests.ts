// The request behind several candidates: one streamed infill whose first finished candidate is
// the answer at once, while the others keep coming in; once all are in they go into the cache, so
// cycling (Alt+], which VS Code asks as an explicit request) gets the whole list without asking
// again. A request still running for the same text is joined, never repeated. No vscode.
import type { InfillStreamEvent } from '../client/types.js';
import type { CompletionCache } from './cache.js';
import { CandidateCollector, uniqueCandidates } from './candidates.js';

interface Flight extends CandidateRun { id: number; prefix: string; suffix: string }

export interface CandidateRun {
  /** The first finished candidate worth showing ('' when none was), or the error that ended the stream before it. */
  first: Promise<string>;
  /** Every candidate, trimmed and without repeats, when the stream ends (the ones finished so far when it fails). */
  all: Promise<string[]>;
}

export class CandidateRequests {
  private flight: Flight | undefined;
  private seq = 0;

  constructor(private readonly cache: CompletionCache) {}

  /** The request running for this text, when one is. */
  pending(prefix: string, suffix: string): CandidateRun | undefined {
    const f = this.flight;
    return f && f.prefix === prefix && f.suffix === suffix ? f : undefined;
  }

  /** Reads `events` (the stream of one request) with `trim` applied to every finished candidate. */
  start(prefix: string, suffix: string, events: AsyncIterable<InfillStreamEvent>, trim: (raw: string) => string): CandidateRun {
    let showFirst!: (text: string) => void;
    let fail!: (err: unknown) => void;
    const first = new Promise<string>((resolve, reject) => { showFirst = resolve; fail = reject; });
    let shown = false;
    const id = ++this.seq;
    const collector = new CandidateCollector();
    const all = (async (): Promise<string[]> => {
      try {
        for await (const ev of events) {
          const ended = collector.push(ev);
          if (ended === undefined || shown) continue;
          const text = trim(collector.text(ended));
          if (text) { shown = true; showFirst(text); }
        }
      } catch (err) {
        if (!shown) fail(err);
        shown = true;
        return uniqueCandidates(collector.done().map(trim));
      } finally {
        if (this.flight?.id === id) this.flight = undefined;
      }
      const list = uniqueCandidates(collector.all().map(trim));
      this.cache.putAll(prefix, suffix, list);
      if (!shown) showFirst(list[0] ?? '');
      return list;
    })();
    this.flight = { id, prefix, suffix, first, all };
    return { first, all };
  }
}
