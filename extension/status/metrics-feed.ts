// Fetches /metrics only when someone looks or something happens: while requests run, while
// the server reports work, or while a panel is visible. Idle and hidden means no requests at all.
// Pure: the fetch and the timers are injected.
import type { Metrics } from '../../contract/metrics.js';
import { realTimers, type Timers } from '../completion/debounce.js';

export interface MetricsFeedOptions {
  busyIntervalMs: number;
  visibleIntervalMs: number;
}

export class MetricsFeed {
  private busy = false;
  private panelVisible = false;
  private serverWorking = false;
  private timer: unknown;
  private inFlight = false;
  private latest: Metrics | undefined;
  /** Bumped by reset(): a fetch begun before it answers for a server that is gone. */
  private epoch = 0;
  private readonly listeners = new Set<(m: Metrics) => void>();
  private readonly resetListeners = new Set<() => void>();
  private disposed = false;

  constructor(
    /** Returns undefined when there is no server to ask. */
    private readonly fetchMetrics: () => Promise<Metrics> | undefined,
    private readonly timers: Timers = realTimers,
    private readonly opts: MetricsFeedOptions = { busyIntervalMs: 1000, visibleIntervalMs: 2000 },
  ) {}

  get last(): Metrics | undefined {
    return this.latest;
  }

  onMetrics(listener: (m: Metrics) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** The figures were forgotten (another server, or none): `last` is undefined until the next answer. */
  onReset(listener: () => void): { dispose(): void } {
    this.resetListeners.add(listener);
    return { dispose: () => this.resetListeners.delete(listener) };
  }

  /** Our own requests started or ended. Ending refreshes once so the final figures show. */
  setBusy(busy: boolean): void {
    if (busy === this.busy) return;
    this.busy = busy;
    this.refreshNow();
  }

  setPanelVisible(visible: boolean): void {
    if (visible === this.panelVisible) return;
    this.panelVisible = visible;
    if (visible) this.refreshNow();
    else this.reschedule();
  }

  /** The server went away or came back: forget old figures, look once. */
  reset(): void {
    this.epoch++;
    this.latest = undefined;
    this.serverWorking = false;
    for (const l of this.resetListeners) l();
    this.refreshNow();
  }

  refreshNow(): void {
    this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    void this.tick();
  }

  /** The interval to use now, or null when nothing should be polled. */
  interval(): number | null {
    if (this.busy || this.serverWorking) return this.opts.busyIntervalMs;
    if (this.panelVisible) return this.opts.visibleIntervalMs;
    return null;
  }

  dispose(): void {
    this.disposed = true;
    this.timers.clearTimeout(this.timer);
    this.listeners.clear();
    this.resetListeners.clear();
  }

  private async tick(): Promise<void> {
    if (this.disposed || this.inFlight) return;
    const p = this.fetchMetrics();
    if (!p) {
      this.serverWorking = false;
      return;
    }
    this.inFlight = true;
    const epoch = this.epoch;
    try {
      const m = await p;
      if (epoch === this.epoch) {
        this.latest = m;
        this.serverWorking = m.running + m.queued + m.admitting + m.finishing > 0;
        for (const l of this.listeners) l(m);
      }
    } catch {
      if (epoch === this.epoch) this.serverWorking = false;
    } finally {
      this.inFlight = false;
    }
    // A reset while this fetch ran asked the new server nothing yet: ask it now.
    if (epoch !== this.epoch) void this.tick();
    else this.reschedule();
  }

  private reschedule(): void {
    if (this.disposed) return;
    this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    const ms = this.interval();
    if (ms !== null) this.timer = this.timers.setTimeout(() => { this.timer = undefined; void this.tick(); }, ms);
  }
}

/** Live generation speed: the sum over slots that are decoding. */
export function liveTokS(m: Metrics): number | null {
  const speeds = m.slots.map((s) => s.tokS).filter((v): v is number => v !== null && v > 0);
  return speeds.length ? speeds.reduce((a, b) => a + b, 0) : null;
}
