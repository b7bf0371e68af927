// Request and step traces. Engines hand over their traces when drained (engine.traces()
// empties its buffers), so the server keeps its own rings: the server-side timeline of each
// ended request (accepted, dispatched, admitted, first token, engine done, ended) joined
// with the engine's own trace of it (queue, prefix reuse or restore, prompt legs), and the
// per-step records of each replica.
import type { RequestTrace, StepTrace } from '../../native/lib/addon.js';
import type { EngineClient } from '../engine/client.js';
import type { Logger } from '../log/logger.js';
import type { RequestRecord, RequestLedger } from '../scheduler/request-ledger.js';
import { LatencyHistogram } from './latency-histogram.js';
import type { StepEntry, TraceEntry } from '../../contract/traces.js';


export class TraceCollector {
  /** Per streamed token event: engine thread hand-over -> its SSE bytes written (generation.ts). */
  readonly eventToSse = new LatencyHistogram();
  private readonly entries: TraceEntry[] = [];
  private readonly byEngineKey = new Map<string, TraceEntry>();
  /** Engine traces that arrived before their request ended on our side. */
  private readonly pendingEngine = new Map<string, RequestTrace>();
  private readonly steps: StepEntry[] = [];
  private readonly timer: NodeJS.Timeout | null;
  private readonly unsubscribe: () => void;
  private draining: Promise<void> | null = null;

  constructor(
    private readonly engines: readonly EngineClient[],
    ledger: RequestLedger,
    private readonly opts: { maxRequests?: number; maxSteps?: number; drainMs?: number; log?: Logger } = {},
  ) {
    this.unsubscribe = ledger.onChange((r) => { if (r.state === 'ended') this.onEnded(r); });
    const every = opts.drainMs ?? 5000;
    this.timer = every > 0 ? setInterval(() => { void this.drain(); }, every) : null;
    this.timer?.unref();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.unsubscribe();
  }

  /** Pulls traces from every ready engine (one drain at a time). */
  drain(): Promise<void> {
    this.draining ??= this.drainAll().finally(() => { this.draining = null; });
    return this.draining;
  }

  list(limit = 100): TraceEntry[] { return this.entries.slice(-limit).reverse(); }

  get(id: number): { request: TraceEntry; steps: StepEntry[] } | null {
    const request = this.entries.find((e) => e.id === id);
    if (!request) return null;
    const eng = request.engine;
    let steps: StepEntry[] = [];
    if (eng && eng.admitted !== undefined) {
      const from = eng.admitted;
      const to = eng.finished ?? Infinity;
      steps = this.steps.filter((s) => s.replica === request.replica && s.epoch === request.epoch && s.t >= from && s.t <= to);
    }
    return { request, steps };
  }

  recentSteps(limit = 256): StepEntry[] { return this.steps.slice(-limit); }

  private async drainAll(): Promise<void> {
    await Promise.all(this.engines.map(async (e) => {
      const st = e.status();
      if (st.state !== 'ready') return;
      let got: { steps: StepTrace[]; requests: RequestTrace[] };
      try { got = await e.traces(); } catch (err) {
        this.opts.log?.debug('trace drain failed', { replica: e.replica, error: String(err) });
        return;
      }
      for (const s of got.steps) this.steps.push({ ...s, replica: e.replica, epoch: st.epoch });
      const maxSteps = this.opts.maxSteps ?? 4096;
      if (this.steps.length > maxSteps) this.steps.splice(0, this.steps.length - maxSteps);
      for (const rt of got.requests) {
        const key = `${e.replica}:${rt.id}`;
        const entry = this.byEngineKey.get(key);
        if (entry) entry.engine = rt;
        else {
          this.pendingEngine.set(key, rt);
          if (this.pendingEngine.size > 1000) this.pendingEngine.delete(this.pendingEngine.keys().next().value as string);
        }
      }
    }));
  }

  private onEnded(r: RequestRecord): void {
    const rel = (t: number | null) => (t === null ? null : t - r.acceptedAt);
    const key = r.engineId !== null && r.replica !== null ? `${r.replica}:${r.engineId}` : null;
    const entry: TraceEntry = {
      id: r.id, kind: r.kind, replica: r.replica, epoch: r.epoch, engine_id: r.engineId, slot: r.slot,
      finish: r.end, error: r.error, accepted: new Date(r.acceptedAt).toISOString(),
      marks: {
        dispatched: rel(r.dispatchedAt), admitted: rel(r.admittedAt), first_token: rel(r.firstTokenAt),
        engine_done: rel(r.engineDoneAt), ended: rel(r.endedAt),
      },
      prompt_tokens: r.promptTokens, reused: r.reused, restored: r.restored, generated: r.generated,
      drafted: r.drafted, draft_accepted: r.accepted,
      engine: null,
    };
    if (key) {
      entry.engine = this.pendingEngine.get(key) ?? null;
      this.pendingEngine.delete(key);
      this.byEngineKey.set(key, entry);
    }
    this.entries.push(entry);
    const max = this.opts.maxRequests ?? 500;
    while (this.entries.length > max) {
      const old = this.entries.shift()!;
      if (old.replica !== null && old.engine_id !== null) this.byEngineKey.delete(`${old.replica}:${old.engine_id}`);
    }
  }
}
