// Watches one client while we answer it. It is "gone" when its connection closes before the
// answer is complete, or when it stops reading: a write that does not drain within
// writeStallMs (the socket makes no progress) counts as a disconnect, so a stuck reader can
// never hold an engine slot. Whoever owns the request cancels it on onGone.
import type { ServerResponse } from 'node:http';

export type GoneReason = 'closed' | 'stalled';

export class ClientConnection {
  private reason: GoneReason | null = null;
  private stallTimer: NodeJS.Timeout | null = null;
  private readonly listeners: Array<(why: GoneReason) => void> = [];

  constructor(readonly res: ServerResponse, private readonly writeStallMs: number) {
    res.on('close', () => {
      this.clearStall();
      if (!res.writableFinished) this.markGone('closed');
    });
    res.on('drain', () => this.clearStall());
  }

  get gone(): GoneReason | null { return this.reason; }

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
    return true;
  }

  end(data?: string): void {
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
