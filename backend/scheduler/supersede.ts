// "Latest wins" for requests that carry a supersede key (an editor's document): a newer request
// with the same key makes the older ones obsolete, wherever they are (the scheduler cancels
// them: queued ones leave at once, running ones at the engine's next step boundary). And while
// a key's requests arrive faster than `holdMs` apart (a keystroke burst), each new one is held
// that long before admission, so one that the next keystroke supersedes costs nothing.
// Pure bookkeeping on the scheduler's clock; the scheduler does the cancelling.

export interface KeyedArrival<J> {
  /** Earlier live requests of the key, to be cancelled as superseded. */
  superseded: J[];
  /** Hold the new request until this time; null = admit at once. */
  notBefore: number | null;
}

export class SupersedeIndex<J> {
  private readonly live = new Map<string, Set<J>>();
  private readonly lastArrival = new Map<string, number>();

  /** Records a new request of `key` at `now`; returns what it supersedes and how long to hold it. */
  arrive(key: string, job: J, now: number, holdMs: number): KeyedArrival<J> {
    const set = this.live.get(key) ?? new Set<J>();
    const superseded = [...set];
    set.clear();
    set.add(job);
    this.live.set(key, set);
    const last = this.lastArrival.get(key);
    this.lastArrival.set(key, now);
    this.prune(now, holdMs);
    const burst = holdMs > 0 && last !== undefined && now - last < holdMs;
    return { superseded, notBefore: burst ? now + holdMs : null };
  }

  /** The request ended (any way): it no longer counts as live for its key. */
  forget(key: string, job: J): void {
    const set = this.live.get(key);
    if (!set) return;
    set.delete(job);
    if (set.size === 0) this.live.delete(key);
  }

  /** Keys with live requests (diagnostics and tests). */
  get size(): number { return this.live.size; }

  // Arrival times matter for holdMs only; a key idle longer than that is forgotten.
  private prune(now: number, holdMs: number): void {
    if (this.lastArrival.size < 1024) return;
    for (const [k, t] of this.lastArrival) if (now - t >= holdMs && !this.live.has(k)) this.lastArrival.delete(k);
  }
}
