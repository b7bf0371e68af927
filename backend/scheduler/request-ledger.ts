// The one record of every request the server has accepted, and the only code that writes it.
// Each record is, at every moment, in exactly one state: queued -> admitting -> running ->
// finishing -> ended. /metrics and /v1/traces read the ledger; routes hold a read-only view of
// their record and state what they know through intents (RequestHandle in scheduler.ts), which
// the scheduler turns into the ledger calls below. Nothing else writes a record.
//
// Who changes a request, in order (ledger method <- its caller):
//
//   field                       written by                      when
//   id kind stream acceptedAt   accept()      <- the route      booked (before its prompt is tokenized)
//   state queued                accept()
//   promptTokens                queued()      <- Scheduler.submit: the prompt's length
//   state admitting             dispatched()  <- Scheduler.dispatch: a replica had a free slot
//     dispatchedAt replica epoch
//   engineId epoch              submitted()   <- Scheduler.drive: the engine client took it
//   state running               admitted()    <- the engine's 'admitted' event
//     admittedAt slot promptTokens reused restored
//   promptRead                  progress()    <- its 'progress' events
//   firstTokenAt generated rate tokens()      <- its 'tokens' events
//   state running admittedAt    embedding()   <- an embedding request's first 'embedding' event
//   state finishing             cancelled()   <- Scheduler.cancel while admitting/running (the engine
//                                                still owns the slot until its 'done')
//     facts.cancel                               (the first cancel intent; later ones change nothing)
//   state finishing             engineDone()  <- the engine's 'done' (or its client's, when the engine died)
//     engineDoneAt promptTokens reused promptMs decodeMs generated drafted accepted,
//     facts.engineFinish/engineFailed
//   state finishing             endedQueued() <- a request that never reached an engine: cancelled
//     facts.cancel/engineFailed                  while queued, the queue drained (no engine), shutdown
//   facts.outcome               outcome()     <- the route: the answer was tool calls
//   facts.refusal               refused()     <- the route: a 4xx ('rejected') or 5xx ('error') answer
//   facts.clientGone            clientGone()  <- the route: the client left
//   error                       noteError()   <- any of the above with a message; the first one stays
//   state ended end endedAt     end()         <- the route, when it is done (RequestHandle.close());
//                                                decideEnd() picks the end from the facts
import type { EndReason, HistoryEntry, RequestKind, RequestState, Totals } from '../../contract/metrics.js';
import type { FinishReason } from '../../native/lib/addon.js';
import { RateMeter } from './rate-meter.js';

const order: Record<RequestState, number> = { queued: 0, admitting: 1, running: 2, finishing: 3, ended: 4 };
/** Allowed moves. Cancelled while queued skips to finishing; an engine 'done' before 'admitted' too. */
const allowed: Record<RequestState, RequestState[]> = {
  queued: ['admitting', 'finishing', 'ended'],
  admitting: ['running', 'finishing'],
  running: ['finishing'],
  finishing: ['ended'],
  ended: [],
};

/** Reasons a caller may give for ending a request early; 'stop'/'length' are a route's own stops (infill). */
export type CancelReason = Extract<EndReason, 'cancel' | 'disconnected' | 'shutdown' | 'stop' | 'length' | 'superseded'>;

/** What happened to a request, as decideEnd weighs it. */
export interface EndFacts {
  /** The engine failed or died on it, or no engine could serve it while it waited. */
  engineFailed: boolean;
  /** The first cancel intent (a disconnect, shutdown, a newer request of its key, a route's own stop). */
  cancel: CancelReason | null;
  /** The route's own reading of a normal answer. */
  outcome: 'tool_calls' | null;
  /** How the engine ended it, when it did and did not fail. */
  engineFinish: Exclude<FinishReason, 'error'> | null;
  /** The route answered with an error status: 4xx 'rejected', 5xx 'error'. */
  refusal: 'rejected' | 'error' | null;
  /** The client left. */
  clientGone: boolean;
}

/**
 * How a request ended, from what happened to it; null while nothing decides it yet. Precedence,
 * highest first (test/unit/scheduler-end-reason.test.ts pins the table):
 *   1. 'error'        the engine failed or died, or no engine could serve it (whatever else happened)
 *   2. the cancel     the first cancel intent: 'superseded', 'shutdown', 'disconnected', 'cancel', or
 *                     a route's own 'stop' / 'length' (the engine then says 'cancel')
 *   3. 'tool_calls'   the route's outcome, over the engine's own 'stop' or 'length'
 *   4. the engine's   'stop', 'length' or 'cancel' (cancelled inside the engine: shutdown of the engine)
 *   5. the refusal    'rejected' (4xx) or 'error' (5xx) before or instead of any engine work
 *   6. 'disconnected' the client left and nothing above happened
 */
export function decideEnd(f: Readonly<EndFacts>): EndReason | null {
  if (f.engineFailed) return 'error';
  if (f.cancel !== null) return f.cancel;
  if (f.outcome !== null && (f.engineFinish === 'stop' || f.engineFinish === 'length')) return f.outcome;
  if (f.engineFinish !== null) return f.engineFinish;
  if (f.refusal !== null) return f.refusal;
  if (f.clientGone) return 'disconnected';
  return null;
}

/** A request's record as everyone but this file sees it. */
export interface RequestRecord {
  readonly id: number;
  readonly kind: RequestKind;
  readonly stream: boolean;
  readonly state: RequestState;
  /** Wall-clock ms of each mark. */
  readonly acceptedAt: number;
  readonly dispatchedAt: number | null;
  readonly admittedAt: number | null;
  readonly firstTokenAt: number | null;
  readonly engineDoneAt: number | null;
  readonly endedAt: number | null;
  readonly replica: number | null;
  readonly epoch: number | null;
  readonly engineId: number | null;
  readonly slot: number | null;
  readonly promptTokens: number | null;
  /** Figures the engine reports; null until (unless) it does. */
  readonly reused: number | null;
  readonly restored: boolean | null;
  readonly promptMs: number | null;
  readonly decodeMs: number | null;
  readonly generated: number;
  /** Prompt tokens read so far (progress events). */
  readonly promptRead: number;
  /** Speculative tokens verified and accepted (engine figures; 0 without speculation). */
  readonly drafted: number;
  readonly accepted: number;
  /** decideEnd of the facts so far (final once ended); null while nothing decides it. */
  readonly end: EndReason | null;
  /** The first cancel intent, if any (a route reads why its request was cancelled). */
  readonly cancelIntent: CancelReason | null;
  readonly error: string | null;
  readonly rate: { perSecond(): number | null };
}

type Writable<T> = { -readonly [K in keyof T]: T[K] };

/** The record as this file writes it. */
interface Entry extends Writable<Omit<RequestRecord, 'end' | 'cancelIntent' | 'rate'>> {
  readonly facts: EndFacts;
  readonly end: EndReason | null;
  readonly cancelIntent: CancelReason | null;
  readonly rate: RateMeter;
  final: EndReason | null;
}

/** The figures an engine's (or its client's) 'done' carries. */
export interface DoneFigures {
  finish: FinishReason;
  error?: string;
  promptTokens: number;
  reused: number;
  promptMs: number | null;
  decodeMs: number | null;
  generated: number;
  drafted?: number;
  accepted?: number;
}

export interface RequestLedgerOptions {
  historySize?: number;
  now?: () => number;
  onInvariantViolation?: (msg: string) => void;
  /** Request ids (default: 1, 2, ...); a server with several models shares one counter so ids stay unique. */
  nextId?: () => number;
}

export class RequestLedger {
  private readonly nextId: () => number;
  private readonly live = new Map<number, Entry>();
  private readonly history: HistoryEntry[] = [];
  private readonly historySize: number;
  private readonly now: () => number;
  private readonly onViolation: (msg: string) => void;
  private readonly listeners = new Set<(r: RequestRecord) => void>();
  readonly totals: Totals = {
    accepted: 0, ended: 0, by_finish: {}, prompt_tokens: 0, reused_tokens: 0, output_tokens: 0,
    prompt_ms: 0, prompt_ms_requests: 0, decode_ms: 0, decode_ms_requests: 0, drafted_tokens: 0, accepted_tokens: 0,
    invariant_violations: 0,
  };

  constructor(opts: RequestLedgerOptions = {}) {
    this.historySize = opts.historySize ?? 500;
    this.now = opts.now ?? Date.now;
    let id = 1;
    this.nextId = opts.nextId ?? (() => id++);
    this.onViolation = opts.onInvariantViolation ?? (() => {});
  }

  /** Books a new request in 'queued'. */
  accept(kind: RequestKind, stream: boolean): RequestRecord {
    const facts: EndFacts = { engineFailed: false, cancel: null, outcome: null, engineFinish: null, refusal: null, clientGone: false };
    const rec: Entry = {
      id: this.nextId(), kind, stream, state: 'queued', acceptedAt: this.now(),
      dispatchedAt: null, admittedAt: null, firstTokenAt: null, engineDoneAt: null, endedAt: null,
      replica: null, epoch: null, engineId: null, slot: null, promptTokens: null, reused: null,
      restored: null, promptMs: null, decodeMs: null, generated: 0, promptRead: 0, drafted: 0, accepted: 0, error: null,
      rate: new RateMeter(2000, this.now), facts, final: null,
      get end() { return this.final ?? decideEnd(this.facts); },
      get cancelIntent() { return this.facts.cancel; },
    };
    this.live.set(rec.id, rec);
    this.totals.accepted++;
    this.emit(rec);
    return rec;
  }

  // --- the scheduler's steps (in the order they happen) ------------------------------------

  queued(r: RequestRecord, promptTokens: number): void { this.entry(r).promptTokens = promptTokens; }

  dispatched(r: RequestRecord, replica: number, epoch: number): void {
    const rec = this.entry(r);
    rec.replica = replica;
    rec.epoch = epoch;
    rec.dispatchedAt = this.now();
    this.move(rec, 'admitting');
  }

  submitted(r: RequestRecord, engineId: number, epoch: number): void {
    const rec = this.entry(r);
    rec.engineId = engineId;
    rec.epoch = epoch;
  }

  admitted(r: RequestRecord, ev: { slot: number; promptTokens: number; reused: number; restored: boolean }): void {
    const rec = this.entry(r);
    rec.slot = ev.slot; rec.promptTokens = ev.promptTokens; rec.reused = ev.reused; rec.restored = ev.restored;
    rec.admittedAt = this.now();
    if (rec.state === 'admitting') this.move(rec, 'running');
  }

  progress(r: RequestRecord, read: number): void { this.entry(r).promptRead = read; }

  tokens(r: RequestRecord, n: number): void {
    const rec = this.entry(r);
    if (rec.firstTokenAt === null) rec.firstTokenAt = this.now();
    rec.generated += n;
    rec.rate.add(n);
  }

  /** An embedding request has no 'admitted' event: its first result marks it running. */
  embedding(r: RequestRecord): void {
    const rec = this.entry(r);
    if (rec.admittedAt !== null) return;
    rec.admittedAt = this.now();
    if (rec.state === 'admitting') this.move(rec, 'running');
  }

  /** A cancel intent (the first one counts); in an engine, the request is ending until its 'done'. */
  cancelled(r: RequestRecord, reason: CancelReason): void {
    const rec = this.entry(r);
    if (rec.facts.cancel === null) rec.facts.cancel = reason;
    if (rec.state === 'admitting' || rec.state === 'running') this.move(rec, 'finishing');
  }

  /** The engine's 'done' (its client's when the engine died): the engine's figures and how it ended. */
  engineDone(r: RequestRecord, done: DoneFigures): void {
    const rec = this.entry(r);
    rec.engineDoneAt = this.now();
    rec.promptTokens = done.promptTokens || rec.promptTokens;
    if (done.finish !== 'error' || rec.admittedAt !== null) rec.reused = done.reused;
    rec.promptMs = done.promptMs;
    rec.decodeMs = done.decodeMs;
    rec.generated = Math.max(rec.generated, done.generated);
    rec.drafted = done.drafted ?? 0;
    rec.accepted = done.accepted ?? 0;
    if (done.finish === 'error') {
      rec.facts.engineFailed = true;
      this.noteError(rec, done.error ?? 'engine error');
    } else {
      rec.facts.engineFinish = done.finish;
    }
    this.move(rec, 'finishing');
  }

  /** A request that never reached an engine leaves the queue: cancelled, or no engine can serve it. */
  endedQueued(r: RequestRecord, why: CancelReason | 'unavailable', error?: string): void {
    const rec = this.entry(r);
    if (why === 'unavailable') rec.facts.engineFailed = true;
    else if (rec.facts.cancel === null) rec.facts.cancel = why;
    if (error) this.noteError(rec, error);
    this.move(rec, 'finishing');
  }

  // --- what the route says (through its RequestHandle) -------------------------------------

  outcome(r: RequestRecord, outcome: 'tool_calls'): void { this.entry(r).facts.outcome = outcome; }

  refused(r: RequestRecord, refusal: 'rejected' | 'error', message: string): void {
    const rec = this.entry(r);
    if (rec.facts.refusal === null) rec.facts.refusal = refusal;
    this.noteError(rec, message);
  }

  clientGone(r: RequestRecord): void { this.entry(r).facts.clientGone = true; }

  /**
   * Ends a record (idempotent): its end is decideEnd of its facts, else `fallback`. From
   * queued/finishing it ends directly; from admitting or running it first passes through
   * finishing (a bookkeeping bug: counted).
   */
  end(r: RequestRecord, fallback: EndReason, error?: string): boolean {
    const rec = this.live.get(r.id);
    if (!rec || rec !== r || rec.state === 'ended') return false;
    if (rec.state === 'admitting' || rec.state === 'running') {
      // The caller ends a request whose engine 'done' it has not seen: only the scheduler
      // knows whether the engine is still working, so this is a bookkeeping bug. Count it.
      this.totals.invariant_violations++;
      this.onViolation(`request ${rec.id}: ended while ${rec.state}`);
      rec.state = 'finishing';
    }
    rec.final = decideEnd(rec.facts) ?? fallback;
    if (error !== undefined) this.noteError(rec, error);
    rec.state = 'ended';
    rec.endedAt = this.now();
    this.live.delete(rec.id);
    this.record(rec);
    this.emit(rec);
    return true;
  }

  // --- reading -----------------------------------------------------------------------------

  get(id: number): RequestRecord | undefined { return this.live.get(id); }
  liveRecords(): RequestRecord[] { return [...this.live.values()]; }
  recent(n = this.historySize): HistoryEntry[] { return this.history.slice(-n); }
  findHistory(id: number): HistoryEntry | undefined { return this.history.find((h) => h.id === id); }

  counts(): Record<Exclude<RequestState, 'ended'>, number> {
    const c = { queued: 0, admitting: 0, running: 0, finishing: 0 };
    for (const r of this.live.values()) if (r.state !== 'ended') c[r.state]++;
    return c;
  }

  /** Called on every change of state of a record (tests and waiters use it). Returns an unsubscribe. */
  onChange(listener: (r: RequestRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  static isBefore(a: RequestState, b: RequestState): boolean { return order[a] < order[b]; }

  private entry(r: RequestRecord): Entry {
    const rec = this.live.get(r.id);
    if (!rec || rec !== r) throw new Error(`internal: request ${r.id} is not live in this ledger`);
    return rec;
  }

  private noteError(rec: Entry, message: string): void {
    if (rec.error === null) rec.error = message;
  }

  /** Moves a record forward; refuses (and counts) anything else. */
  private move(rec: Entry, to: RequestState): void {
    if (rec.state === to) return;
    if (!allowed[rec.state].includes(to)) {
      this.totals.invariant_violations++;
      this.onViolation(`request ${rec.id}: refused move ${rec.state} -> ${to}`);
      return;
    }
    rec.state = to;
    this.emit(rec);
  }

  private emit(rec: RequestRecord): void {
    for (const l of this.listeners) {
      try { l(rec); } catch { /* a listener's bug must not break bookkeeping */ }
    }
  }

  private record(rec: Entry): void {
    const t = this.totals;
    const end = rec.final ?? 'error';
    t.ended++;
    t.by_finish[end] = (t.by_finish[end] ?? 0) + 1;
    if (end === 'rejected') return; // refused before the engine: no figures, no history row
    if (rec.promptTokens !== null && rec.engineDoneAt !== null) t.prompt_tokens += rec.promptTokens;
    if (rec.reused !== null) t.reused_tokens += rec.reused;
    t.output_tokens += rec.generated;
    if (rec.promptMs !== null) { t.prompt_ms += rec.promptMs; t.prompt_ms_requests++; }
    if (rec.decodeMs !== null) { t.decode_ms += rec.decodeMs; t.decode_ms_requests++; }
    t.drafted_tokens += rec.drafted;
    t.accepted_tokens += rec.accepted;
    const decodeTokS = rec.decodeMs !== null && rec.decodeMs > 0 && rec.generated > 0
      ? round2((rec.generated * 1000) / rec.decodeMs) : null;
    this.history.push({
      id: rec.id, kind: rec.kind, time: new Date(rec.acceptedAt).toISOString(),
      duration_s: round2(((rec.endedAt ?? this.now()) - rec.acceptedAt) / 1000),
      queue_ms: rec.dispatchedAt !== null ? rec.dispatchedAt - rec.acceptedAt : null,
      finish: end, error: rec.error, replica: rec.replica, epoch: rec.epoch,
      prompt_tokens: rec.promptTokens, reused: rec.reused, restored: rec.restored,
      output_tokens: rec.generated, prompt_ms: round3(rec.promptMs), decode_ms: round3(rec.decodeMs), decode_tok_s: decodeTokS,
      drafted: rec.drafted, accepted: rec.accepted,
    });
    if (this.history.length > this.historySize) this.history.splice(0, this.history.length - this.historySize);
  }
}

export function round2(x: number): number { return Math.round(x * 100) / 100; }
function round3(x: number | null): number | null { return x === null ? null : Math.round(x * 1000) / 1000; }
