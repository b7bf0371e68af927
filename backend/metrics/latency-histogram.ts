// The server's own overhead per streamed token event: from the engine thread handing a step
// over (a CLOCK_MONOTONIC stamp taken in the engine process) to the SSE bytes of its text
// being written to the socket in the server process. process.hrtime reads the same clock, so
// the difference is valid across the two processes. Fixed buckets, so /metrics can export it
// as a Prometheus histogram and a bench can subtract two scrapes.

import type { HistogramBucket, HistogramSnapshot } from '../../contract/metrics.js';

/** Upper bounds in ms: fine below 1 ms, where the figure should sit, coarse above. */
export const EVENT_TO_SSE_BOUNDS_MS: readonly number[] = [0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 2, 5, 10, 25, 50, 100, 250, 1000];

/** A delay this long means the stamp came from another clock: it is rejected, not observed. */
const MAX_PLAUSIBLE_MS = 3_600_000;

/** CLOCK_MONOTONIC in ms (the engine's stamps use the same clock and unit). */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

export class LatencyHistogram {
  private readonly perBucket: number[];
  private n = 0;
  private sumMs = 0;
  private rejected = 0;

  constructor(
    readonly boundsMs: readonly number[] = EVENT_TO_SSE_BOUNDS_MS,
    private readonly now: () => number = monotonicMs,
  ) {
    if (boundsMs.length === 0 || boundsMs.some((b, i) => !(b > 0) || !Number.isFinite(b) || (i > 0 && b <= boundsMs[i - 1]!))) {
      throw new RangeError(`histogram bounds must be positive, finite and ascending, got [${boundsMs.join(', ')}]`);
    }
    this.perBucket = new Array<number>(boundsMs.length + 1).fill(0);
  }

  /** Observes now - stampMs (both monotonic ms); returns the delay, or null when rejected. */
  observeSince(stampMs: number): number | null {
    const ms = this.now() - stampMs;
    if (!Number.isFinite(ms) || ms < 0 || ms > MAX_PLAUSIBLE_MS) { this.rejected++; return null; }
    this.observe(ms);
    return ms;
  }

  observe(ms: number): void {
    let i = 0;
    while (i < this.boundsMs.length && ms > this.boundsMs[i]!) i++;
    this.perBucket[i]!++;
    this.n++;
    this.sumMs += ms;
  }

  snapshot(): HistogramSnapshot {
    let cum = 0;
    const buckets = this.boundsMs.map((le, i) => ({ le_ms: le, count: (cum += this.perBucket[i]!) }));
    return summarizeBuckets(buckets, this.n, this.sumMs, this.rejected);
  }
}

/** Count, sum, mean and quantiles of cumulative buckets (also of the difference of two scrapes). */
export function summarizeBuckets(buckets: HistogramBucket[], count: number, sumMs: number, rejected = 0): HistogramSnapshot {
  return {
    count, sum_ms: sumMs, mean_ms: count > 0 ? sumMs / count : null,
    p50_ms: quantileFromBuckets(buckets, count, 0.5), p95_ms: quantileFromBuckets(buckets, count, 0.95),
    rejected, buckets,
  };
}

/**
 * The q-quantile of cumulative buckets holding `count` observations, interpolated linearly
 * inside its bucket (as Prometheus' histogram_quantile); null when empty.
 */
export function quantileFromBuckets(buckets: readonly HistogramBucket[], count: number, q: number): number | null {
  if (count <= 0 || buckets.length === 0) return null;
  const rank = q * count;
  let lower = 0;
  let below = 0;
  for (const b of buckets) {
    if (b.count >= rank && b.count > below) return lower + ((b.le_ms - lower) * (rank - below)) / (b.count - below);
    lower = b.le_ms;
    below = b.count;
  }
  return buckets[buckets.length - 1]!.le_ms;
}

/** after - before of two snapshots of the same histogram (a bench run's share); null when the bounds differ. */
export function histogramDelta(before: HistogramSnapshot, after: HistogramSnapshot): HistogramSnapshot | null {
  if (before.buckets.length !== after.buckets.length || before.buckets.some((b, i) => b.le_ms !== after.buckets[i]!.le_ms)) return null;
  const buckets = after.buckets.map((b, i) => ({ le_ms: b.le_ms, count: b.count - before.buckets[i]!.count }));
  return summarizeBuckets(buckets, after.count - before.count, after.sum_ms - before.sum_ms, after.rejected - before.rejected);
}
