// Only the newest completion request matters. Each call waits out the debounce delay; a newer
// call supersedes it: a waiting one resolves null, a running one has its signal aborted (which
// closes its HTTP request, so the server frees the slot at once).

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

interface Pending { controller: AbortController; timer: unknown; resolve: (signal: AbortSignal | null) => void; settled: boolean }

export class LatestOnlyScheduler {
  private current: Pending | undefined;

  constructor(private readonly timers: Timers = realTimers) {}

  /**
   * Resolves after delayMs with the signal the work must use, or null when superseded (or
   * cancelled) first. `cancel` (e.g. VS Code's token) aborts this call only.
   */
  wait(delayMs: number, onCancel?: (listener: () => void) => void): Promise<AbortSignal | null> {
    this.supersede();
    const controller = new AbortController();
    return new Promise((resolve) => {
      const p: Pending = { controller, timer: undefined, resolve, settled: false };
      this.current = p;
      const settle = (value: AbortSignal | null): void => {
        if (p.settled) return;
        p.settled = true;
        resolve(value);
      };
      p.resolve = settle;
      onCancel?.(() => {
        this.timers.clearTimeout(p.timer);
        controller.abort();
        settle(null);
        if (this.current === p) this.current = undefined;
      });
      if (controller.signal.aborted) return;
      if (delayMs <= 0) settle(controller.signal);
      else p.timer = this.timers.setTimeout(() => settle(controller.signal), delayMs);
    });
  }

  /** Aborts whatever is waiting or running. */
  cancel(): void {
    this.supersede();
  }

  private supersede(): void {
    const p = this.current;
    this.current = undefined;
    if (!p) return;
    this.timers.clearTimeout(p.timer);
    p.controller.abort();
    p.resolve(null);
  }
}
