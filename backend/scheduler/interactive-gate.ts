// Server-wide: background work (embedding and rerank requests, the codebase index's) yields to
// interactive work (chat, completion, infill, edit) on any model of the server. Every model's
// scheduler tells the gate when an interactive request is queued and when it ends; while any is,
// the schedulers dispatch no background request, unless it has waited maxWaitMs (so a stream of
// chats never starves the index). A background request already dispatched finishes: the engine's
// step is not interrupted. Two models on the same cores is the case this is for: the engine
// priority (engine/priority.ts) only orders threads that both want a core now, while a step the
// embedding engine has begun keeps its core until the kernel preempts it.

export class InteractiveGate {
  private readonly active = new Set<object>();
  private readonly listeners = new Set<() => void>();
  private notifyQueued = false;

  /** `maxWaitMs`: the longest a background request waits for interactive work to end (0: never waits). */
  constructor(readonly maxWaitMs: number = 2000) {
    if (!(maxWaitMs >= 0)) throw new RangeError('maxWaitMs must be >= 0');
  }

  /** Interactive requests queued or running, on every model. */
  get count(): number { return this.active.size; }
  get busy(): boolean { return this.active.size > 0; }

  /** An interactive request is queued (idempotent per request). */
  enter(request: object): void { this.active.add(request); }

  /** It ended (finished, cancelled or refused; idempotent). The last one wakes the schedulers. */
  leave(request: object): void {
    if (!this.active.delete(request) || this.active.size > 0) return;
    // Not inside the caller's bookkeeping (a 'done' from an engine): once it is over.
    if (this.notifyQueued) return;
    this.notifyQueued = true;
    queueMicrotask(() => {
      this.notifyQueued = false;
      if (this.active.size === 0) for (const l of [...this.listeners]) l();
    });
  }

  /** Whether a background request queued at `enqueuedAt` must still wait at `now`. */
  holds(enqueuedAt: number, now: number): boolean {
    return this.busy && now - enqueuedAt < this.maxWaitMs;
  }

  /** Called when interactive work goes idle; returns the unsubscribe. */
  onIdle(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
