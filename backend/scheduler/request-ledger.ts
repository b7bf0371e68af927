// The one table of every request the server has accepted. Each record is, at every moment,
// in exactly one state: queued -> admitting -> running -> finishing -> ended. The scheduler
// moves records forward; the HTTP route wrapper ends them (in a finally, so a record can
// never leave the bookkeeping while its client still waits). /metrics reads this table.
import type { EndReason, HistoryEntry, RequestKind, RequestState, Totals } from '../../contract/metrics.js';
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

export interface RequestRecord {
  readonly id: number;
  readonly kind: RequestKind;
  readonly stream: boolean;
  state: RequestState;
  /** Wall-clock ms of each mark. */
  readonly acceptedAt: number;
  dispatchedAt: number | null;
  admittedAt: number | null;
  firstTokenAt: number | null;
  engineDoneAt: number | null;
  endedAt: number | null;
  replica: number | null;
  epoch: number | null;
  engineId: number | null;
  slot: number | null;
  promptTokens: number | null;
  /** Figures the engine reports; null until (unless) it does. */
  reused: number | null;
  restored: boolean | null;
  promptMs: number | null;
  decodeMs: number | null;
  generated: number;
  /** Prompt tokens read so far (progress events). */
  promptRead: number;
  end: EndReason | null;
  error: string | null;
  readonly rate: RateMeter;
}

export interface RequestLedgerOptions {
  historySize?: number;
  now?: () => number;
  onInvariantViolation?: (msg: string) => void;
}

export class RequestLedger {
  private nextId = 1;
  private readonly live = new Map<number, RequestRecord>();
  private readonly history: HistoryEntry[] = [];
  private readonly historySize: number;
  private readonly now: () => number;
  private readonly onViolation: (msg: string) => void;
  private readonly listeners = new Set<(r: RequestRecord) => void>();
  readonly totals: Totals = {
    accepted: 0, ended: 0, by_finish: {}, prompt_tokens: 0, reused_tokens: 0, output_tokens: 0,
    prompt_ms: 0, prompt_ms_requests: 0, decode_ms: 0, decode_ms_requests: 0, invariant_violations: 0,
  };

  constructor(opts: RequestLedgerOptions = {}) {
    this.historySize = opts.historySize ?? 500;
    this.now = opts.now ?? Date.now;
    this.onViolation = opts.onInvariantViolation ?? (() => {});
  }

  /** Books a new request in 'queued'. */
  accept(kind: RequestKind, stream: boolean): RequestRecord {
    const rec: RequestRecord = {
      id: this.nextId++, kind, stream, state: 'queued', acceptedAt: this.now(),
      dispatchedAt: null, admittedAt: null, firstTokenAt: null, engineDoneAt: null, endedAt: null,
      replica: null, epoch: null, engineId: null, slot: null, promptTokens: null, reused: null,
      restored: null, promptMs: null, decodeMs: null, generated: 0, promptRead: 0, end: null, error: null,
      rate: new RateMeter(2000, this.now),
    };
    this.live.set(rec.id, rec);
    this.totals.accepted++;
    this.emit(rec);
    return rec;
  }

  /** Moves a record forward; refuses (and counts) anything else. Returns whether it moved. */
  move(rec: RequestRecord, to: RequestState): boolean {
    if (rec.state === to) return true;
    if (!allowed[rec.state].includes(to)) {
      this.totals.invariant_violations++;
      this.onViolation(`request ${rec.id}: refused move ${rec.state} -> ${to}`);
      return false;
    }
    if (to === 'ended') return this.end(rec, rec.end ?? 'error');
    rec.state = to;
    this.emit(rec);
    return true;
  }

  /**
   * Ends a record (idempotent). From queued/finishing it ends directly; from admitting or
   * running it first passes through finishing (the engine work was ended by its caller).
   */
  end(rec: RequestRecord, reason: EndReason, error?: string): boolean {
    if (rec.state === 'ended') return false;
    if (rec.state === 'admitting' || rec.state === 'running') {
      // The caller ends a request whose engine 'done' it has not seen: only the scheduler
      // knows whether the engine is still working, so this is a bookkeeping bug. Count it.
      this.totals.invariant_violations++;
      this.onViolation(`request ${rec.id}: ended while ${rec.state}`);
      rec.state = 'finishing';
    }
    rec.end = rec.end ?? reason;
    if (error !== undefined && rec.error === null) rec.error = error;
    rec.state = 'ended';
    rec.endedAt = this.now();
    this.live.delete(rec.id);
    this.record(rec);
    this.emit(rec);
    return true;
  }

  get(id: number): RequestRecord | undefined { return this.live.get(id); }
  liveRecords(): RequestRecord[] { return [...this.live.values()]; }
  recent(n = this.historySize): HistoryEntry[] { return this.history.slice(-n); }
  findHistory(id: number): HistoryEntry | undefined { return this.history.find((h) => h.id === id); }

  counts(): Record<Exclude<RequestState, 'ended'>, number> {
    const c = { queued: 0, admitting: 0, running: 0, finishing: 0 };
    for (const r of this.live.values()) if (r.state !== 'ended') c[r.state]++;
    return c;
  }

  /** Called on every change of a record (tests and waiters use it). Returns an unsubscribe. */
  onChange(listener: (r: RequestRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  static isBefore(a: RequestState, b: RequestState): boolean { return order[a] < order[b]; }

  private emit(rec: RequestRecord): void {
    for (const l of this.listeners) {
      try { l(rec); } catch { /* a listener's bug must not break bookkeeping */ }
    }
  }

  private record(rec: RequestRecord): void {
    const t = this.totals;
    const end = rec.end ?? 'error';
    t.ended++;
    t.by_finish[end] = (t.by_finish[end] ?? 0) + 1;
    if (end === 'rejected') return; // refused before the engine: no figures, no history row
    if (rec.promptTokens !== null && rec.engineDoneAt !== null) t.prompt_tokens += rec.promptTokens;
    if (rec.reused !== null) t.reused_tokens += rec.reused;
    t.output_tokens += rec.generated;
    if (rec.promptMs !== null) { t.prompt_ms += rec.promptMs; t.prompt_ms_requests++; }
    if (rec.decodeMs !== null) { t.decode_ms += rec.decodeMs; t.decode_ms_requests++; }
    const decodeTokS = rec.decodeMs !== null && rec.decodeMs > 0 && rec.generated > 0
      ? round2((rec.generated * 1000) / rec.decodeMs) : null;
    this.history.push({
      id: rec.id, kind: rec.kind, time: new Date(rec.acceptedAt).toISOString(),
      duration_s: round2(((rec.endedAt ?? this.now()) - rec.acceptedAt) / 1000),
      queue_ms: rec.dispatchedAt !== null ? rec.dispatchedAt - rec.acceptedAt : null,
      finish: end, error: rec.error, replica: rec.replica, epoch: rec.epoch,
      prompt_tokens: rec.promptTokens, reused: rec.reused, restored: rec.restored,
      output_tokens: rec.generated, prompt_ms: round3(rec.promptMs), decode_ms: round3(rec.decodeMs), decode_tok_s: decodeTokS,
    });
    if (this.history.length > this.historySize) this.history.splice(0, this.history.length - this.historySize);
  }
}

export function round2(x: number): number { return Math.round(x * 100) / 100; }
function round3(x: number | null): number | null { return x === null ? null : Math.round(x * 1000) / 1000; }
