// Watches one client while we answer it. It is "gone" when its connection closes before the
// answer is complete, when it stops reading (a write that does not drain within writeStallMs:
// the socket makes no progress), or when a stream's client falls behind by more than the slow
// reader bound (slow-readers.ts), so a stuck or slow reader can never hold an engine slot.
// Whoever owns the request cancels it on onGone.
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { SlowReaderWatch, WatchedStream } from './slow-readers.js';

export type GoneReason = 'closed' | 'stalled' | 'slow';

export class ClientConnection implements WatchedStream {
  private reason: GoneReason | null = null;
  private stallTimer: NodeJS.Timeout | null = null;
  private readonly listeners: Array<(why: GoneReason) => void> = [];
  /** ms behind when it was cut as a slow reader. */
  lagMs: number | null = null;

  /** `readers`: the watch that streamed writes report to (null: not watched, e.g. a JSON answer). */
  constructor(readonly res: ServerResponse, private readonly writeStallMs: number, private readonly readers: SlowReaderWatch | null = null) {
    res.on('close', () => {
      this.clearStall();
      this.readers?.forget(this);
      if (!res.writableFinished) this.markGone('closed');
    });
    res.on('drain', () => this.clearStall());
  }

  get gone(): GoneReason | null { return this.reason; }
  get socket(): Socket | null { return this.res.socket; }

  cutSlowReader(lagMs: number): void {
    this.lagMs = lagMs;
    this.markGone('slow');
    this.res.destroy();
  }

  /** Called once when the client goes (at once if it already has). */
  onGone(listener: (why: GoneReason) => void): void {
    if (this.reason) { listener(this.reason); return; }
    this.listeners.push(listener);
  }

  /** Writes unless the client is gone; starts the stall clock when the buffer is full. */
  write(data: string): boolean {
    if (this.reason || this.res.destroyed || this.res.writableEnded) return false;
    const ok = this.res.write(data);
    if (!ok) this.armStall();
    this.readers?.wrote(this);
    return true;
  }

  end(data?: string): void {
    // The answer is complete: the request holds no slot any more, so its pace is the client's business.
    this.readers?.forget(this);
    if (this.res.writableEnded || this.res.destroyed) return;
    if (data !== undefined) {
      if (!this.res.write(data)) this.armStall();
    }
    this.res.end();
    // A full buffer at the end still needs a reader; the stall clock keeps running until
    // it drains (or destroys the socket).
  }

  private armStall(): void {
    if (this.stallTimer || this.writeStallMs <= 0) return;
    this.stallTimer = setTimeout(() => {
      this.stallTimer = null;
      this.markGone('stalled');
      this.res.destroy();
    }, this.writeStallMs);
  }

  private clearStall(): void {
    if (this.stallTimer) { clearTimeout(this.stallTimer); this.stallTimer = null; }
  }

  private markGone(why: GoneReason): void {
    if (this.reason) return;
    this.reason = why;
    for (const l of this.listeners.splice(0)) {
      try { l(why); } catch { /* a listener's failure must not stop the others */ }
    }
  }
}
