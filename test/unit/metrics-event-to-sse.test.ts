// The server's overhead per streamed token event: the histogram behind it (with a forced
// clock), its JSON and Prometheus forms, and the share of one bench run (two scrapes).
import { describe, expect, it } from 'vitest';
import { histogramDelta, LatencyHistogram, monotonicMs, quantileFromBuckets } from '../../backend/metrics/latency-histogram.js';
import type { HistogramSnapshot } from '../../contract/metrics.js';
import { buildMetrics } from '../../backend/metrics/metrics-json.js';
import { prometheusText } from '../../backend/metrics/prometheus.js';
import { RequestLedger } from '../../backend/scheduler/request-ledger.js';
import { Scheduler } from '../../backend/scheduler/scheduler.js';
import { FakeEngineClient } from '../helpers/fake-engine-client.js';

/** A histogram whose clock reads `clock.t` (ms). */
function forced(bounds = [0.1, 0.5, 1, 10]) {
  const clock = { t: 1000 };
  return { clock, h: new LatencyHistogram(bounds, () => clock.t) };
}

describe('LatencyHistogram', () => {
  it('observes now - stamp into cumulative buckets with count, sum and mean', () => {
    const { clock, h } = forced();
    clock.t = 2000;
    expect(h.observeSince(1999.95)).toBeCloseTo(0.05, 9); // <= 0.1
    expect(h.observeSince(1999.9)).toBeCloseTo(0.1, 9); //   on a bound: that bucket
    expect(h.observeSince(1999.7)).toBeCloseTo(0.3, 9); //   <= 0.5
    expect(h.observeSince(1998)).toBeCloseTo(2, 9); //       <= 10
    expect(h.observeSince(1950)).toBeCloseTo(50, 9); //      above every bound: +Inf only
    const s = h.snapshot();
    expect(s.buckets.map((b) => [b.le_ms, b.count])).toEqual([[0.1, 2], [0.5, 3], [1, 3], [10, 4]]);
    expect(s.count).toBe(5);
    expect(s.sum_ms).toBeCloseTo(52.45, 9);
    expect(s.mean_ms).toBeCloseTo(10.49, 9);
    expect(s.rejected).toBe(0);
  });

  it('rejects stamps from the future or over an hour old (another clock) without counting them', () => {
    const { clock, h } = forced();
    clock.t = 5000;
    expect(h.observeSince(5000.5)).toBeNull();
    expect(h.observeSince(5000 - 3_600_001)).toBeNull();
    expect(h.observeSince(Number.NaN)).toBeNull();
    expect(h.observeSince(5000)).toBe(0);
    expect(h.snapshot()).toMatchObject({ count: 1, rejected: 3, sum_ms: 0 });
  });

  it('interpolates quantiles inside their bucket and caps them at the last bound', () => {
    const { clock, h } = forced();
    expect(h.snapshot()).toMatchObject({ count: 0, mean_ms: null, p50_ms: null, p95_ms: null });
    clock.t = 100;
    for (let i = 0; i < 10; i++) h.observeSince(100 - 0.3); // all in (0.1, 0.5]
    const s = h.snapshot();
    expect(s.p50_ms).toBeCloseTo(0.3, 9); // halfway through (0.1, 0.5]
    expect(s.p95_ms).toBeCloseTo(0.48, 9);
    expect(quantileFromBuckets([{ le_ms: 1, count: 0 }, { le_ms: 2, count: 1 }], 4, 0.95)).toBe(2); // the rest above 2 ms
  });

  it('refuses bounds that are not ascending and positive', () => {
    expect(() => new LatencyHistogram([1, 1])).toThrow(/ascending/);
    expect(() => new LatencyHistogram([0, 1])).toThrow(/positive/);
    expect(() => new LatencyHistogram([])).toThrow(RangeError);
  });

  it('reads the monotonic clock of process.hrtime in ms', () => {
    const a = monotonicMs();
    const ns = Number(process.hrtime.bigint());
    const b = monotonicMs();
    expect(ns / 1e6).toBeGreaterThanOrEqual(a);
    expect(ns / 1e6).toBeLessThanOrEqual(b);
  });

  it('gives the share of one run as the difference of two snapshots', () => {
    const { clock, h } = forced();
    clock.t = 10;
    h.observeSince(9); // 1 ms, before the run
    const before = h.snapshot();
    h.observeSince(9.8); // 0.2
    h.observeSince(9.6); // 0.4
    const d = histogramDelta(before, h.snapshot())!;
    expect(d.count).toBe(2);
    expect(d.mean_ms).toBeCloseTo(0.3, 9);
    expect(d.buckets.map((b) => b.count)).toEqual([0, 2, 2, 2]);
    expect(d.p50_ms).toBeCloseTo(0.3, 9);
    const other: HistogramSnapshot = { ...before, buckets: before.buckets.slice(1) };
    expect(histogramDelta(other, h.snapshot())).toBeNull();
  });
});

describe('event_to_sse in /metrics', () => {
  it('is in the JSON metrics and in Prometheus text as a histogram in seconds', async () => {
    const engine = new FakeEngineClient({ slots: 1 });
    await engine.start();
    const ledger = new RequestLedger();
    const scheduler = new Scheduler([engine], ledger, { auditMs: 0 });
    const { clock, h } = forced([0.25, 1]);
    clock.t = 50;
    h.observeSince(49.9); // 0.1 ms
    h.observeSince(49.5); // 0.5 ms
    const src = {
      ledger, scheduler, engines: [engine], model: null, stopping: false, startedAt: Date.now(), logDropped: 0,
      eventToSse: h.snapshot(),
    };
    const m = await buildMetrics(src);
    expect(m.event_to_sse).toMatchObject({ count: 2, buckets: [{ le_ms: 0.25, count: 1 }, { le_ms: 1, count: 2 }] });
    expect(m.event_to_sse!.sum_ms).toBeCloseTo(0.6, 9);
    const text = prometheusText(m);
    expect(text).toMatch(/^# TYPE strata:event_to_sse_seconds histogram$/m);
    expect(text).toMatch(/^strata:event_to_sse_seconds_bucket\{le="0.00025"\} 1$/m);
    expect(text).toMatch(/^strata:event_to_sse_seconds_bucket\{le="0.001"\} 2$/m);
    expect(text).toMatch(/^strata:event_to_sse_seconds_bucket\{le="\+Inf"\} 2$/m);
    expect(text).toMatch(/^strata:event_to_sse_seconds_count 2$/m);
    const sum = Number(/^strata:event_to_sse_seconds_sum (\S+)$/m.exec(text)![1]);
    expect(sum).toBeCloseTo(0.0006, 12);
    // A server that keeps no such histogram leaves it out.
    expect(prometheusText(await buildMetrics({ ...src, eventToSse: null }))).not.toMatch(/event_to_sse/);
    scheduler.close();
  });
});
