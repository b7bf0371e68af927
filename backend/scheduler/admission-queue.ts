// The server-level admission queue: higher priority first (infill before chat), FIFO
// within a priority, and aging so that nothing starves: every waiting request gains one
// priority level per `agingMs`, so after (max priority gap x agingMs) any waiter beats a
// newcomer. An item may be held until a time (`notBefore`, an infill admission delay): until
// then it is skipped, and it ages from when it becomes ready.
export interface Queued {
  readonly priority: number;
  readonly enqueuedAt: number;
  /** Tie-break: lower first (arrival order). */
  readonly seq: number;
  /** Not admitted before this time (same clock as `now`); absent = at once. */
  readonly notBefore?: number;
}

export class AdmissionQueue<T extends Queued> {
  private items: T[] = [];

  constructor(private readonly agingMs: number, private readonly now: () => number = Date.now) {
    if (!(agingMs > 0)) throw new RangeError('agingMs must be > 0');
  }

  get length(): number { return this.items.length; }

  push(item: T): void { this.items.push(item); }

  /** Removes an item (cancelled or disconnected while queued). Returns whether it was here. */
  remove(item: T): boolean {
    const i = this.items.indexOf(item);
    if (i < 0) return false;
    this.items.splice(i, 1);
    return true;
  }

  score(item: T, t = this.now()): number {
    return item.priority + (t - Math.max(item.enqueuedAt, item.notBefore ?? 0)) / this.agingMs;
  }

  private held(item: T, t: number): boolean {
    return item.notBefore !== undefined && item.notBefore > t;
  }

  /** The earliest time a held item becomes ready, or null when none is held. */
  nextReadyAt(): number | null {
    const t = this.now();
    let next: number | null = null;
    for (const it of this.items) if (this.held(it, t) && (next === null || it.notBefore! < next)) next = it.notBefore!;
    return next;
  }

  /** The ready item to admit next, without removing it; `skip`: items that may not go now (they keep their place). */
  peek(skip?: (item: T) => boolean): T | undefined {
    const t = this.now();
    let best: T | undefined;
    let bestScore = -Infinity;
    for (const it of this.items) {
      if (this.held(it, t) || skip?.(it)) continue;
      const s = this.score(it, t);
      if (s > bestScore || (s === bestScore && best !== undefined && it.seq < best.seq)) { best = it; bestScore = s; }
    }
    return best;
  }

  shift(skip?: (item: T) => boolean): T | undefined {
    const best = this.peek(skip);
    if (best) this.remove(best);
    return best;
  }

  /** Position (0 = next) of an item in admission order now. */
  position(item: T): number {
    const t = this.now();
    const s = this.score(item, t);
    let pos = 0;
    for (const it of this.items) {
      if (it === item) continue;
      const o = this.score(it, t);
      if (o > s || (o === s && it.seq < item.seq)) pos++;
    }
    return pos;
  }

  drain(): T[] {
    const all = this.items;
    this.items = [];
    return all;
  }

  toArray(): readonly T[] { return this.items; }
}
