// Server-level admission and routing. Requests wait in one queue (priority + aging) and are
// dispatched to a replica only when it has a free slot (in flight < slots), so the engine
// never queues behind our back and /metrics always knows where every request is. Among
// replicas with a free slot, the cheapest wins: uncached prompt tokens + a load term.
//
// Everything here runs on the main thread and every state change calls pump(): there is
// no condition variable to lose a wake-up on. audit() re-checks the invariant anyway.
//
// The scheduler is the only writer of a request's record (through request-ledger.ts, whose
// header lists each field and the step that writes it). Engine events arrive through the
// engine request's sink, update the record and go into the request's one buffer (Job.channel),
// which the route reads; the route states what it knows through its RequestHandle.
import {
  synthesizedDone, type DoneEvent, type EngineClient, type EngineRequest, type EngineStatus, type GenerateInput, type RequestEvent,
} from '../engine/client.js';
import type { Logger } from '../log/logger.js';
import { silentLogger } from '../log/logger.js';
import { AdmissionQueue } from './admission-queue.js';
import { Channel } from './channel.js';
import type { InteractiveGate } from './interactive-gate.js';
import { PrefixIndex } from './prefix-index.js';
import { SupersedeIndex } from './supersede.js';
import type { CancelReason, RequestLedger, RequestRecord } from './request-ledger.js';
import type { RequestKind } from '../../contract/metrics.js';

/**
 * What a route submits: the engine's request (GenerateRequest, native/lib/addon.d.ts, where each
 * field is documented) with the prompt as an array, without what is set on the way (the id by
 * the engine client, the priority here), plus what only the server does with it. drive() passes
 * the engine's fields through as they are.
 */
export type GenerationSpec = Omit<GenerateInput, 'prompt' | 'priority'> & {
  prompt: number[];
  /**
   * Latest wins: a newer request with this key cancels the older ones (queued: at once; running:
   * at the next step boundary), and one arriving less than holdMs after the previous one of its
   * key waits holdMs before admission (0 = never held).
   */
  supersede?: { key: string; holdMs: number };
  /** Embedding models: pool these inputs instead of generating (`prompt` is then all of them, for accounting). */
  embed?: { inputs: number[][]; normalize?: boolean };
};

/** Timers the scheduler uses to release held requests (tests pass fake ones). */
export interface SchedulerTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Slots a job holds while in flight. */
function slotsOf(job: Job): number { return job.spec.n ?? 1; }

export interface SchedulerOptions {
  /** One priority level gained per this many ms of waiting (default 2000). */
  agingMs?: number;
  priorities?: Partial<Record<RequestKind, number>>;
  /** Routing cost of one request in flight, in prompt tokens (default 3000). */
  loadTokens?: number;
  /** Requests allowed to wait; more are refused with 503 (default 512). */
  maxQueued?: number;
  blockSize?: number;
  /** Period of the invariant audit, ms (0 = none; default 1000). */
  auditMs?: number;
  log?: Logger;
  now?: () => number;
  timers?: SchedulerTimers;
  /** The server's gate: background requests (embedding, rerank) wait while interactive ones are queued or running on any model. */
  gate?: InteractiveGate;
}

/** Why a request could not be accepted. The HTTP layer answers 503 with the message. */
export class SchedulerRefusal extends Error {
  constructor(readonly code: 'engine_unavailable' | 'server_busy' | 'shutting_down', message: string) {
    super(message);
  }
}

export class Job {
  readonly enqueuedAt: number;
  readonly channel = new Channel<RequestEvent>();
  engineRequest: EngineRequest | null = null;
  /** Its 'done' arrived (from the engine, or made here): nothing more is delivered. */
  finished = false;
  readonly outputIds: number[] = [];
  /** Held in the queue until then (an infill admission delay); undefined = ready. */
  notBefore?: number;
  /** Chained block keys of the prompt (routing). */
  readonly promptKeys: string[];
  /** Background work (embedding, rerank, any request on an embedding model): yields to interactive requests. */
  background = false;

  constructor(
    readonly record: RequestRecord,
    readonly spec: GenerationSpec,
    readonly priority: number,
    readonly seq: number,
    now: number,
    blockSize: number,
    private readonly cancelImpl: (job: Job, reason: CancelReason) => void,
  ) {
    this.enqueuedAt = now;
    this.promptKeys = PrefixIndex.blockKeys(spec.prompt, blockSize);
  }

  /** The request's events (its one buffer between the engine and the route); ends after exactly one 'done'. */
  get events(): AsyncIterable<RequestEvent> { return this.channel; }

  /** Ends the job wherever it is (queued: at once; in an engine: cancels there). Idempotent. */
  cancel(reason: CancelReason = 'cancel'): void { this.cancelImpl(this, reason); }
}

class Replica {
  readonly index: PrefixIndex;
  readonly inFlight = new Set<Job>();
  epoch: number;
  state: EngineStatus['state'];
  everReady = false;

  constructor(readonly client: EngineClient, blockSize: number) {
    this.index = new PrefixIndex(blockSize);
    const s = client.status();
    this.epoch = s.epoch;
    this.state = s.state;
    this.everReady = s.state === 'ready';
  }

  /** Slots held by requests of the current epoch in flight (an old epoch's cannot hold this epoch's slots). */
  busy(): number {
    let n = 0;
    for (const j of this.inFlight) if (j.record.epoch === this.epoch) n += slotsOf(j);
    return n;
  }

  slots(): number { return this.client.info?.slots ?? 0; }
  free(): number { return this.state === 'ready' ? Math.max(0, this.slots() - this.busy()) : 0; }
}

export interface ReplicaView {
  replica: number;
  state: EngineStatus['state'];
  epoch: number;
  slots: number;
  inFlight: number;
  indexedBlocks: number;
}

/**
 * What a route holds for its request: a read-only view of the record and the intents it may
 * state. Each intent becomes the ledger's write (request-ledger.ts); the route never writes the
 * record itself.
 */
export class RequestHandle {
  constructor(private readonly scheduler: Scheduler, private readonly ledger: RequestLedger, readonly record: RequestRecord) {}

  /** Queues it (Scheduler.submit); throws SchedulerRefusal when it cannot wait. */
  submit(spec: GenerationSpec): Job { return this.scheduler.submit(this.record, spec); }

  /** The answer was tool calls: the end says so (over the engine's 'stop' or 'length'). */
  outcome(outcome: 'tool_calls'): void {
    if (this.record.state !== 'ended') this.ledger.outcome(this.record, outcome);
  }

  /** The route answers with an error: 'rejected' for a 4xx, 'error' for a 5xx; the first message stays. */
  reject(status: number, message: string): void {
    if (this.record.state !== 'ended') this.ledger.refused(this.record, status < 500 ? 'rejected' : 'error', message);
  }

  /** The client left (disconnected, stopped reading or fell behind). */
  clientGone(): void {
    if (this.record.state !== 'ended') this.ledger.clientGone(this.record);
  }

  /**
   * The route is done with the request: its record ends (decideEnd of what happened, else
   * 'error'). Returns false when its engine work was still live, a bug the ledger counts.
   */
  close(): boolean {
    const { state } = this.record;
    if (state === 'ended') return true;
    const live = state === 'admitting' || state === 'running';
    this.ledger.end(this.record, 'error', live ? 'internal: request abandoned' : undefined);
    return !live;
  }
}

export class Scheduler {
  private readonly queue: AdmissionQueue<Job>;
  private readonly replicas: Replica[];
  private readonly opts: Required<Omit<SchedulerOptions, 'priorities' | 'log' | 'now' | 'timers' | 'gate'>>;
  private readonly gate: InteractiveGate | null;
  /** Wakes pump() when the earliest background request held by the gate has waited its longest. */
  private gateTimer: { handle: unknown; at: number } | null = null;
  private readonly priorities: Record<RequestKind, number>;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly unsubscribers: Array<() => void> = [];
  private readonly auditTimer: NodeJS.Timeout | null;
  private seq = 0;
  private readonly idleWaiters = new Set<() => void>();
  private readonly supersede = new SupersedeIndex<Job>();
  private readonly timers: SchedulerTimers;
  private heldTimer: { handle: unknown; at: number } | null = null;
  private pumpQueued = false;
  private stopping = false;
  /** Times the audit found a request that should have been dispatched (a bug if > 0). */
  missedDispatches = 0;

  constructor(clients: EngineClient[], private readonly ledger: RequestLedger, opts: SchedulerOptions = {}) {
    this.opts = {
      agingMs: opts.agingMs ?? 2000, loadTokens: opts.loadTokens ?? 3000, maxQueued: opts.maxQueued ?? 512,
      blockSize: opts.blockSize ?? 64, auditMs: opts.auditMs ?? 1000,
    };
    this.priorities = { infill: 2, next_edit: 2, chat: 0, completion: 0, embedding: 1, ...opts.priorities };
    this.log = opts.log ?? silentLogger;
    this.now = opts.now ?? Date.now;
    this.timers = opts.timers ?? { setTimeout: (fn, ms) => setTimeout(fn, ms).unref(), clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout) };
    this.queue = new AdmissionQueue<Job>(this.opts.agingMs, this.now);
    this.replicas = clients.map((c) => new Replica(c, this.opts.blockSize));
    for (const r of this.replicas) this.unsubscribers.push(r.client.onStatus((s) => this.onStatus(r, s)));
    this.gate = opts.gate ?? null;
    if (this.gate) this.unsubscribers.push(this.gate.onIdle(() => this.pump()));
    this.auditTimer = this.opts.auditMs > 0 ? setInterval(() => this.audit(), this.opts.auditMs) : null;
    this.auditTimer?.unref();
  }

  /** Books a request in the ledger; the route reads it and states what it knows through the handle. */
  accept(kind: RequestKind, stream: boolean): RequestHandle {
    return new RequestHandle(this, this.ledger, this.ledger.accept(kind, stream));
  }

  /** Queues a request already booked in the ledger. Throws SchedulerRefusal when it cannot wait. */
  submit(record: RequestRecord, spec: GenerationSpec): Job {
    if (this.stopping) throw new SchedulerRefusal('shutting_down', 'the server is shutting down');
    const why = this.unavailableReason();
    if (why) throw new SchedulerRefusal('engine_unavailable', why);
    if (this.queue.length >= this.opts.maxQueued) {
      throw new SchedulerRefusal('server_busy', `the server is busy: ${this.queue.length} requests are waiting (limit ${this.opts.maxQueued})`);
    }
    const job = new Job(record, spec, this.priorities[record.kind], this.seq++, this.now(), this.opts.blockSize,
      (j, reason) => this.cancel(j, reason));
    this.ledger.queued(record, spec.prompt.length);
    job.background = record.kind === 'embedding' || spec.embed !== undefined || this.replicas.some((r) => r.client.info?.embedding);
    if (!job.background) this.gate?.enter(job);
    if (spec.supersede) {
      const arrival = this.supersede.arrive(spec.supersede.key, job, this.now(), spec.supersede.holdMs);
      if (arrival.notBefore !== null) job.notBefore = arrival.notBefore;
      for (const old of arrival.superseded) old.cancel('superseded');
    }
    this.queue.push(job);
    this.pump();
    return job;
  }

  /** null when some replica can serve now; else why not (loading, died, closed). */
  unavailableReason(): string | null {
    if (this.replicas.some((r) => r.state === 'ready')) return null;
    if (this.replicas.length === 0) return 'no engine is configured';
    const reasons = this.replicas.map((r) => {
      const s = r.client.status();
      if (s.state === 'starting') return r.everReady ? `engine ${r.client.replica} is restarting` : `engine ${r.client.replica} is loading the model`;
      if (s.state === 'dead') return `engine ${r.client.replica} stopped${s.lastError ? ` (${s.lastError})` : ''}; restarting`;
      if (s.state === 'failed') return `engine ${r.client.replica} failed and is not restarted: ${s.lastError ?? 'unknown error'}`;
      return `engine ${r.client.replica} is closed`;
    });
    return reasons.join('; ');
  }

  isLoading(): boolean { return this.replicas.every((r) => !r.everReady); }

  /** A ready replica's client for tokenizing and other model-level work (least busy first). */
  anyReadyClient(): EngineClient | null {
    let best: Replica | null = null;
    for (const r of this.replicas) if (r.state === 'ready' && (!best || r.busy() < best.busy())) best = r;
    return best?.client ?? null;
  }

  /** Ready replicas ordered by how much of `tokens` they probably hold (most first). */
  replicasByCache(tokens: number[]): EngineClient[] {
    const keys = PrefixIndex.blockKeys(tokens, this.opts.blockSize);
    return this.replicas.filter((r) => r.state === 'ready')
      .map((r) => ({ r, cached: r.index.cachedKeys(keys) }))
      .sort((a, b) => b.cached - a.cached || a.r.busy() - b.r.busy())
      .map((x) => x.r.client);
  }

  /**
   * Whether a ready replica probably holds every whole block of `tokens` (an estimate: the engine
   * may have evicted since); false for fewer tokens than a block, which the index cannot tell.
   */
  holdsPrefix(tokens: number[]): boolean {
    const keys = PrefixIndex.blockKeys(tokens, this.opts.blockSize);
    return keys.length > 0 && this.replicas.some((r) => r.state === 'ready' && r.index.cachedKeys(keys) === keys.length);
  }

  /**
   * Tokens of the longest prefix of `tokens` a ready replica probably holds, in whole blocks (an
   * estimate, as holdsPrefix); `block` is the block size, the estimate's precision.
   */
  cachedPrefix(tokens: number[]): { tokens: number; block: number } {
    const keys = PrefixIndex.blockKeys(tokens, this.opts.blockSize);
    let most = 0;
    for (const r of this.replicas) if (r.state === 'ready') most = Math.max(most, r.index.cachedKeys(keys));
    return { tokens: most * this.opts.blockSize, block: this.opts.blockSize };
  }

  /** Tells the router a replica holds these tokens (e.g. a session loaded into its park). */
  noteCached(replica: number, tokens: number[]): void {
    this.replicas.find((r) => r.client.replica === replica)?.index.add(tokens);
  }

  views(): ReplicaView[] {
    return this.replicas.map((r) => ({
      replica: r.client.replica, state: r.state, epoch: r.epoch, slots: r.slots(), inFlight: r.inFlight.size,
      indexedBlocks: r.index.size,
    }));
  }

  queuedCount(): number { return this.queue.length; }
  queuePosition(job: Job): number { return this.queue.position(job); }

  /** Stops accepting; queued requests end at once, running ones are cancelled. */
  shutdown(): void {
    this.stopping = true;
    for (const job of this.queue.drain()) this.endQueued(job, 'shutdown');
    for (const r of this.replicas) for (const job of r.inFlight) this.cancel(job, 'shutdown');
  }

  /** Resolves true when nothing is in flight on any replica, false after timeoutMs. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.inFlightTotal() === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = (): void => { clearTimeout(timer); resolve(true); };
      const timer = setTimeout(() => { this.idleWaiters.delete(waiter); resolve(false); }, timeoutMs);
      this.idleWaiters.add(waiter);
    });
  }

  private inFlightTotal(): number { return this.replicas.reduce((n, r) => n + r.inFlight.size, 0); }

  close(): void {
    if (this.auditTimer) clearInterval(this.auditTimer);
    if (this.heldTimer) this.timers.clearTimeout(this.heldTimer.handle);
    this.heldTimer = null;
    if (this.gateTimer) this.timers.clearTimeout(this.gateTimer.handle);
    this.gateTimer = null;
    for (const u of this.unsubscribers.splice(0)) u();
  }

  /** Checks that no request waits while a replica has the free slots it needs; dispatches if one does. */
  audit(): void {
    const head = this.queue.peek(this.gateHolds);
    if (head && this.replicas.some((r) => r.free() >= slotsOf(head))) {
      this.missedDispatches++;
      this.log.warn('audit: a request was waiting while a slot was free; dispatching now', { queued: this.queue.length });
      this.pump();
    }
  }

  private cancel(job: Job, reason: CancelReason): void {
    const rec = job.record;
    if (rec.state === 'ended' || job.finished) return;
    if (this.queue.remove(job)) { this.endQueued(job, reason); this.pump(); return; }
    // The engine still owns the slot until its 'done'; the record shows the request is ending.
    this.ledger.cancelled(rec, reason);
    job.engineRequest?.cancel();
  }

  /** A job that never reached an engine: one terminal 'done', no engine figures. */
  private endQueued(job: Job, why: CancelReason | 'unavailable', error?: string): void {
    this.gate?.leave(job);
    this.ledger.endedQueued(job.record, why, error);
    this.forgetKey(job);
    const unavailable = why === 'unavailable';
    this.deliverDone(job, synthesizedDone(
      { finish: unavailable ? 'error' : 'cancel', ...(error ? { error } : {}), ...(unavailable ? { engineDied: true } : {}) },
      { promptTokens: job.spec.prompt.length, reused: 0, generated: 0 },
    ));
  }

  private deliverDone(job: Job, done: DoneEvent): void {
    job.finished = true;
    job.channel.push(done);
    job.channel.close();
  }

  private forgetKey(job: Job): void {
    if (job.spec.supersede) this.supersede.forget(job.spec.supersede.key, job);
  }

  /** Wakes pump() when the earliest held request becomes ready. */
  private armHeldTimer(): void {
    const at = this.queue.nextReadyAt();
    if (at === null || (this.heldTimer && this.heldTimer.at <= at)) return;
    if (this.heldTimer) this.timers.clearTimeout(this.heldTimer.handle);
    const handle = this.timers.setTimeout(() => { this.heldTimer = null; this.pump(); }, Math.max(0, at - this.now()));
    this.heldTimer = { handle, at };
  }

  private pump(): void {
    this.pump1();
    this.armHeldTimer();
    this.armGateTimer();
  }

  /** A background request the gate holds now (interactive work is queued or running, and it has not waited its longest). */
  private readonly gateHolds = (job: Job): boolean => job.background && (this.gate?.holds(job.enqueuedAt, this.now()) ?? false);

  /** Wakes pump() when the earliest background request held by the gate reaches its longest wait. */
  private armGateTimer(): void {
    let at: number | null = null;
    for (const j of this.queue.toArray()) {
      if (this.gateHolds(j) && (at === null || j.enqueuedAt + this.gate!.maxWaitMs < at)) at = j.enqueuedAt + this.gate!.maxWaitMs;
    }
    if (at === null || (this.gateTimer && this.gateTimer.at <= at)) return;
    if (this.gateTimer) this.timers.clearTimeout(this.gateTimer.handle);
    const handle = this.timers.setTimeout(() => { this.gateTimer = null; this.pump(); }, Math.max(0, at - this.now()));
    this.gateTimer = { handle, at };
  }

  private pump1(): void {
    for (;;) {
      const head = this.queue.peek(this.gateHolds);
      if (!head) return; // empty, or only held requests wait (an infill's delay, the gate)
      // The head waits for as many free slots as it has choices (it keeps its place meanwhile).
      // native/src/engine_admit.cpp (AdmitWaiting) states the same rule for its own queue, on
      // purpose: that queue serves direct users of the addon (tests, bench-engine) that submit past
      // the slots; here it is what lets a request with n choices be dispatched only whole, so the
      // engine's copy never has to wait on the served path.
      const need = slotsOf(head);
      const candidates = this.replicas.filter((r) => r.free() >= need);
      if (candidates.length === 0) return;
      const job = this.queue.shift(this.gateHolds)!;
      let best = candidates[0]!;
      let bestCost = Infinity;
      for (const r of candidates) {
        const uncached = job.spec.prompt.length - r.index.cachedKeys(job.promptKeys) * this.opts.blockSize;
        const cost = uncached + this.opts.loadTokens * r.busy();
        if (cost < bestCost) { best = r; bestCost = cost; }
      }
      this.dispatch(job, best);
    }
  }

  private dispatch(job: Job, replica: Replica): void {
    this.ledger.dispatched(job.record, replica.client.replica, replica.epoch);
    replica.inFlight.add(job);
    if (!job.spec.embed) replica.index.add(job.spec.prompt);
    this.drive(job, replica);
  }

  /** Hands the job to the engine; its events come back through the sink, in order, ending with one 'done'. */
  private drive(job: Job, replica: Replica): void {
    const rec = job.record;
    try {
      const { supersede: _supersede, embed, ...request } = job.spec;
      const sink = (ev: RequestEvent): void => this.onEngineEvent(job, replica, ev);
      const req = embed ? replica.client.embed(embed, sink) : replica.client.generate({ ...request, priority: job.priority }, sink);
      job.engineRequest = req;
      if (rec.state !== 'ended') this.ledger.submitted(rec, req.id, req.epoch);
      if (rec.cancelIntent !== null) req.cancel();
    } catch (err) {
      this.log.error('engine request failed', { request: rec.id, error: String(err) });
      if (!job.finished) {
        this.finish(job, replica, synthesizedDone(
          { finish: 'error', error: 'the engine ended the request without a result', engineDied: true },
          { promptTokens: job.spec.prompt.length, reused: rec.reused ?? 0, generated: rec.generated },
        ));
      }
    }
  }

  private onEngineEvent(job: Job, replica: Replica, ev: RequestEvent): void {
    if (job.finished) return;
    const rec = job.record;
    switch (ev.type) {
      case 'admitted':
        this.ledger.admitted(rec, ev);
        break;
      case 'progress':
        this.ledger.progress(rec, ev.read);
        break;
      case 'tokens':
        this.ledger.tokens(rec, ev.ids.length);
        // Choice 0's tokens follow the prompt in the slot (routing learns what it holds).
        if (!ev.choice) for (const id of ev.ids) job.outputIds.push(id);
        break;
      case 'embedding':
        this.ledger.embedding(rec);
        break;
      case 'done':
        this.finish(job, replica, ev);
        return;
    }
    job.channel.push(ev);
  }

  private finish(job: Job, replica: Replica, done: DoneEvent): void {
    const rec = job.record;
    replica.inFlight.delete(job);
    this.gate?.leave(job);
    this.forgetKey(job);
    this.ledger.engineDone(rec, done);
    if (done.finish !== 'error' && rec.epoch === replica.epoch && !job.spec.embed) replica.index.add([...job.spec.prompt, ...job.outputIds]);
    this.deliverDone(job, done);
    if (this.idleWaiters.size > 0 && this.inFlightTotal() === 0) {
      for (const w of [...this.idleWaiters]) w();
      this.idleWaiters.clear();
    }
    // Not now: a 'done' arrives inside the engine client's own bookkeeping (a dying engine ends
    // every request before it says it is dead) or inside dispatch; the freed slot is filled once that is over.
    this.pumpSoon();
  }

  private pumpSoon(): void {
    if (this.pumpQueued) return;
    this.pumpQueued = true;
    queueMicrotask(() => { this.pumpQueued = false; this.pump(); });
  }

  private onStatus(r: Replica, s: EngineStatus): void {
    if (s.epoch !== r.epoch) { r.index.clear(); r.epoch = s.epoch; }
    r.state = s.state;
    if (s.state === 'ready') { r.everReady = true; this.pump(); return; }
    // Nothing can serve the queue now: waiting would be invisible to the client, so say why.
    if (!this.replicas.some((x) => x.state === 'ready') && this.queue.length > 0) {
      const why = this.unavailableReason() ?? 'no engine is available';
      for (const job of this.queue.drain()) this.endQueued(job, 'unavailable', why);
    }
  }
}
