import { describe, expect, it } from 'vitest';
import { mean, median, percentile, quantile, spread } from '../../backend/bench/stats.js';

describe('bench stats', () => {
  it('interpolates percentiles linearly between sorted samples (numpy default)', () => {
    // numpy.percentile([1, 2, 3, 4], 95) == 3.85; [15, 20, 35, 40, 50] at 40 == 29
    expect(percentile([4, 1, 3, 2], 95)).toBeCloseTo(3.85, 10);
    expect(percentile([50, 15, 40, 20, 35], 40)).toBeCloseTo(29, 10);
    expect(percentile([10, 20], 50)).toBe(15);
  });

  it('p95 of a few samples is not their maximum', () => {
    const xs = [100, 110, 120, 130, 140, 150, 160, 1000];
    expect(percentile(xs, 95)).toBeLessThan(1000);
    expect(percentile(xs, 95)).toBeCloseTo(160 + 0.65 * 840, 6);
    expect(percentile(xs, 100)).toBe(1000);
    expect(percentile(xs, 0)).toBe(100);
  });

  it('median of odd and even counts', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it('ignores non-finite samples and gives NaN for none', () => {
    expect(median([Number.NaN, 5, Number.POSITIVE_INFINITY, 7])).toBe(6);
    expect(Number.isNaN(median([]))).toBe(true);
    expect(spread([Number.NaN])).toEqual({ n: 0, median: Number.NaN, min: Number.NaN, max: Number.NaN });
    expect(Number.isNaN(mean([]))).toBe(true);
  });

  it('spread gives median, min, max and count', () => {
    expect(spread([9, 3, 5, 7])).toEqual({ n: 4, median: 6, min: 3, max: 9 });
  });

  it('rejects a quantile outside [0, 1]', () => {
    expect(() => quantile([1, 2], 1.5)).toThrow(/\[0, 1\]/);
    expect(() => percentile([1, 2], -1)).toThrow(RangeError);
  });
});
