import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Metrics } from '../../contract/metrics.js';
import { liveTokS, MetricsFeed } from '../../extension/status/metrics-feed.js';
import { serverSource, type ServerView } from '../../contract/panel.js';

const metrics = (running: number, tokS: Array<number | null> = []): Metrics => ({
  state: 'ok', queued: 0, admitting: 0, running, finishing: 0,
  slots: tokS.map((t, i) => ({ slot: i, replica: 0, state: t ? 'decode' : 'idle', heldTokens: 0, requestId: null, tokS: t })),
  requests: [], totals: {}, cache: { parked: 0, bytes: 0, budget: 0, hits: 0, misses: 0, evictions: 0 }, engines: [], staleFrames: 0,
});

describe('MetricsFeed', () => {
  beforeEach(() => { vi.useFakeTimers(); });
  afterEach(() => { vi.useRealTimers(); });

  function feed(answer: () => Metrics) {
    let calls = 0;
    const f = new MetricsFeed(() => { calls++; return Promise.resolve(answer()); }, undefined, { busyIntervalMs: 1000, visibleIntervalMs: 2000 });
    return { f, calls: () => calls };
  }

  it('never polls while idle and no panel is visible', async () => {
    const { calls } = feed(() => metrics(0));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls()).toBe(0);
  });

  it('polls every second while busy, then once more when the work ends, then stops', async () => {
    let running = 1;
    const { f, calls } = feed(() => metrics(running));
    f.setBusy(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(calls()).toBe(1);
    await vi.advanceTimersByTimeAsync(3000);
    expect(calls()).toBe(4);
    running = 0;
    f.setBusy(false);
    await vi.advanceTimersByTimeAsync(0);
    expect(calls()).toBe(5);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(calls()).toBe(5);
  });

  it('keeps polling while the server reports work from other clients', async () => {
    let running = 2;
    const { f, calls } = feed(() => metrics(running));
    f.refreshNow();
    await vi.advanceTimersByTimeAsync(2000);
    expect(calls()).toBe(3);
    running = 0;
    await vi.advanceTimersByTimeAsync(1000);
    const n = calls();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls()).toBe(n);
  });

  it('polls slowly while a panel is visible, and stops when hidden', async () => {
    const { f, calls } = feed(() => metrics(0));
    const seen: Metrics[] = [];
    f.onMetrics((m) => seen.push(m));
    f.setPanelVisible(true);
    await vi.advanceTimersByTimeAsync(4000);
    expect(calls()).toBe(3);
    expect(seen).toHaveLength(3);
    f.setPanelVisible(false);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls()).toBe(3);
  });

  it('reset forgets the figures at once and tells its listeners; a fetch begun before it is dropped and the new server asked', async () => {
    const old = { ...metrics(0), engines: [{ replica: 0, epoch: 1, restarts: 5, alive: false }] } as unknown as Metrics;
    const fresh = metrics(0);
    let release: (m: Metrics) => void = () => {};
    const answers: Array<() => Promise<Metrics>> = [
      () => new Promise<Metrics>((r) => { release = r; }),
      () => Promise.resolve(fresh),
    ];
    let calls = 0;
    const f = new MetricsFeed(() => answers[calls++]!(), undefined, { busyIntervalMs: 1000, visibleIntervalMs: 2000 });
    const seen: Metrics[] = [];
    let resets = 0;
    f.onMetrics((m) => seen.push(m));
    f.onReset(() => { resets++; expect(f.last).toBeUndefined(); });
    f.refreshNow();
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toBe(1);
    f.reset();
    expect(resets).toBe(1);
    release(old);
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toBe(2);
    expect(seen).toEqual([fresh]);
    expect(f.last).toBe(fresh);
  });

  it('the figures\' source changes with readiness, mode and address, so a managed-to-remote switch that stays ready forgets them', () => {
    const s = (state: ServerView['state'], mode: ServerView['mode'], url: string | null): ServerView => ({ state, busy: false, mode, model: 'm', url, message: null });
    expect(serverSource(s('ready', 'managed', 'http://127.0.0.1:1'))).not.toBe(serverSource(s('ready', 'remote', 'http://127.0.0.1:2')));
    expect(serverSource(s('ready', 'remote', 'http://127.0.0.1:1'))).not.toBe(serverSource(s('ready', 'remote', 'http://127.0.0.1:2')));
    expect(serverSource(s('ready', 'managed', 'http://127.0.0.1:1'))).toBe(serverSource(s('ready', 'managed', 'http://127.0.0.1:1')));
    expect(serverSource(s('starting', 'managed', null))).toBe(serverSource(s('failed', 'managed', null)));
    expect(serverSource(s('starting', 'managed', null))).not.toBe(serverSource(s('ready', 'managed', 'http://127.0.0.1:1')));
  });

  it('sums live tok/s over decoding slots', () => {
    expect(liveTokS(metrics(2, [10, null, 5.5]))).toBe(15.5);
    expect(liveTokS(metrics(0, [null]))).toBeNull();
  });
});
