// Statistics for benchmark samples: percentiles by linear interpolation between the closest
// ranks of the sorted samples (Hyndman & Fan type 7, what numpy and R use by default), so a
// p95 of 8 samples is an interpolated value, never just the maximum under another name.

export interface Spread {
  /** Number of finite samples summarised. */
  n: number;
  median: number;
  min: number;
  max: number;
}

/** Finite values only, sorted ascending (a new array). */
export function sortedFinite(values: readonly number[]): number[] {
  return values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
}

/**
 * The q-quantile (0 <= q <= 1) of the samples by linear interpolation on the sorted samples:
 * position h = (n - 1) q, value = x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h]).
 * NaN when there are no finite samples.
 */
export function quantile(values: readonly number[], q: number): number {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile q must be in [0, 1], got ${q}`);
  const x = sortedFinite(values);
  if (x.length === 0) return Number.NaN;
  const h = (x.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, x.length - 1);
  return x[lo]! + (h - lo) * (x[hi]! - x[lo]!);
}

/** Percentile p in [0, 100]; see quantile. */
export function percentile(values: readonly number[], p: number): number {
  return quantile(values, p / 100);
}

export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/** Median, minimum and maximum of the finite samples (NaN fields when there are none). */
export function spread(values: readonly number[]): Spread {
  const x = sortedFinite(values);
  if (x.length === 0) return { n: 0, median: Number.NaN, min: Number.NaN, max: Number.NaN };
  return { n: x.length, median: quantile(x, 0.5), min: x[0]!, max: x[x.length - 1]! };
}

export function mean(values: readonly number[]): number {
  const x = sortedFinite(values);
  return x.length === 0 ? Number.NaN : x.reduce((s, v) => s + v, 0) / x.length;
}
