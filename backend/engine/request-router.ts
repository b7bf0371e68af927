// Request ownership on the engine client's side, with no I/O: which requests are live, which
// epoch each belongs to, routing of engine events to them, and exactly one 'done' per request.
// Events for an unknown, finished or older-epoch request are dropped and counted. (The
// server-wide lifecycle of a request is scheduler/request-ledger.ts's; this table only routes.)
import type { EngineEvent } from '../../native/lib/addon.js';
import { synthesizedDone, type DoneEvent, type EmbedInput, type EngineRequest, type GenerateInput, type LocalEnd, type RequestEvent, type RequestSink } from './client.js';

/** Prompt tokens of a request as submitted (all inputs of an embedding request). */
function promptTokensOf(input: GenerateInput | EmbedInput): number {
  return 'inputs' in input ? input.inputs.reduce((n, i) => n + i.length, 0) : input.prompt?.length ?? 0;
}

/**
 * One request's event stream: pushed to its sink when it has one (the scheduler's Job, so there
 * is one buffer between the engine and the route), else buffered for its single consumer.
 */
class RequestStream implements EngineRequest {
  readonly done: Promise<DoneEvent>;
  readonly events: AsyncIterable<RequestEvent>;
  private readonly buffered: RequestEvent[] = [];
  private wake: (() => void) | null = null;
  private finished = false;
  private consumed = false;
  private resolveDone!: (d: DoneEvent) => void;

  constructor(
    readonly id: number, readonly epoch: number, private readonly onCancel: () => void, private readonly sink: RequestSink | undefined,
  ) {
    this.done = new Promise((resolve) => { this.resolveDone = resolve; });
    this.events = { [Symbol.asyncIterator]: () => this.iterate() };
  }

  get ended(): boolean { return this.finished; }

  cancel(): void {
    if (!this.finished) this.onCancel();
  }

  push(ev: RequestEvent): void {
    if (this.finished) return;
    if (ev.type === 'done') this.finished = true;
    if (this.sink) this.sink(ev);
    else {
      this.buffered.push(ev);
      this.wake?.();
    }
    if (ev.type === 'done') this.resolveDone(ev);
  }

  private async *iterate(): AsyncGenerator<RequestEvent> {
    if (this.sink) throw new Error(`request ${this.id}: its events go to its sink`);
    if (this.consumed) throw new Error(`request ${this.id}: events can be read only once`);
    this.consumed = true;
    for (;;) {
      const ev = this.buffered.shift();
      if (ev) {
        yield ev;
        if (ev.type === 'done') return;
        continue;
      }
      await new Promise<void>((resolve) => { this.wake = resolve; });
      this.wake = null;
    }
  }
}

interface Entry {
  stream: RequestStream;
  admitted: boolean;
  promptTokens: number;
  reused: number;
  generated: number;
  cancelRequested: boolean;
}

export class EngineRequestRouter {
  private nextId = 1;
  private readonly live = new Map<number, Entry>();
  private stale = 0;

  /** Events and replies dropped because their request or epoch was not live. */
  get staleFrames(): number { return this.stale; }
  /** Live requests. */
  get size(): number { return this.live.size; }

  /**
   * Registers a new request of `epoch` under a fresh id (ids never repeat for this table).
   * `onCancel(id)` runs at the first cancel() while it is live; the engine's 'done' ends it.
   */
  open(epoch: number, input: GenerateInput | EmbedInput, onCancel: (id: number) => void, sink?: RequestSink): EngineRequest {
    const id = this.nextId++;
    const entry: Entry = {
      stream: new RequestStream(id, epoch, () => {
        if (entry.cancelRequested) return;
        entry.cancelRequested = true;
        onCancel(id);
      }, sink),
      admitted: false, promptTokens: promptTokensOf(input), reused: 0, generated: 0, cancelRequested: false,
    };
    this.live.set(id, entry);
    return entry.stream;
  }

  /** A request that ends at once without reaching an engine (e.g. the engine is down). */
  openEnded(epoch: number, input: GenerateInput | EmbedInput, end: LocalEnd, sink?: RequestSink): EngineRequest {
    const req = this.open(epoch, input, () => {}, sink);
    this.end(req.id, end);
    return req;
  }

  isLive(id: number): boolean { return this.live.has(id); }

  /**
   * Routes one engine step's events; returns how many were dropped as stale. `handedAtMs`
   * (the step's monotonic stamp) goes on its 'tokens' events.
   */
  deliver(epoch: number, events: readonly EngineEvent[], handedAtMs?: number): number {
    let dropped = 0;
    for (const ev of events) {
      const entry = this.live.get(ev.id);
      if (!entry || entry.stream.epoch !== epoch) {
        dropped++;
        continue;
      }
      // Gone from the table before its 'done' is pushed: the sink may submit the next request at once.
      if (ev.type === 'done') this.live.delete(ev.id);
      entry.stream.push(this.translate(entry, ev, handedAtMs));
    }
    this.stale += dropped;
    return dropped;
  }

  /** Counts frames dropped elsewhere (e.g. replies of an older epoch). */
  countStale(n = 1): void { this.stale += n; }

  /** Ends a live request locally; false when it was not live (nothing happens then). */
  end(id: number, end: LocalEnd): boolean {
    const entry = this.live.get(id);
    if (!entry) return false;
    this.live.delete(id);
    entry.stream.push(synthesizedDone(end, entry));
    return true;
  }

  /** Ends every live request (of one epoch, or all); returns how many. */
  endAll(end: LocalEnd, epoch?: number): number {
    let n = 0;
    for (const [id, entry] of [...this.live]) {
      if (epoch === undefined || entry.stream.epoch === epoch) n += this.end(id, end) ? 1 : 0;
    }
    return n;
  }

  /**
   * Engine event -> the request's event: the same fields without the engine-level id (plus the
   * step's stamp on 'tokens'), keeping the per-request figures a local end needs.
   */
  private translate(entry: Entry, ev: EngineEvent, handedAtMs: number | undefined): RequestEvent {
    const { id: _id, ...fields } = ev;
    switch (fields.type) {
      case 'admitted':
        entry.admitted = true;
        entry.promptTokens = fields.promptTokens;
        entry.reused = fields.reused;
        return fields;
      case 'progress':
        return fields;
      case 'tokens':
        entry.generated += fields.ids.length;
        return handedAtMs !== undefined ? { ...fields, handedAtMs } : fields;
      case 'embedding':
        // Embeddings come from the prompt read; a request that got one was admitted.
        entry.admitted = true;
        return fields;
      case 'done':
        // A phase the request never reached has no duration: null, not the engine's 0.
        return {
          ...fields,
          promptMs: entry.admitted ? fields.promptMs : null,
          decodeMs: fields.generated > 0 ? fields.decodeMs : null,
        };
    }
  }
}
