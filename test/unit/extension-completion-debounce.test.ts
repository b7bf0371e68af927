import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LatestOnlyScheduler } from '../../extension/completion/debounce.js';

describe('LatestOnlyScheduler', () => {
  beforeEach(() => { vi.useFakeTimers(); });
  afterEach(() => { vi.useRealTimers(); });

  it('waits the debounce delay before handing out a signal', async () => {
    const s = new LatestOnlyScheduler();
    let result: AbortSignal | null | undefined;
    void s.wait(150).then((r) => { result = r; });
    await vi.advanceTimersByTimeAsync(149);
    expect(result).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(result).toBeInstanceOf(AbortSignal);
    expect(result!.aborted).toBe(false);
  });

  it('a newer call supersedes a waiting one, which never starts', async () => {
    const s = new LatestOnlyScheduler();
    const first = s.wait(100);
    await vi.advanceTimersByTimeAsync(50);
    const second = s.wait(100);
    expect(await first).toBeNull();
    await vi.advanceTimersByTimeAsync(100);
    const sig = await second;
    expect(sig).not.toBeNull();
    expect(sig!.aborted).toBe(false);
  });

  it('a newer call aborts the signal of a running request (the fetch is cancelled)', async () => {
    const s = new LatestOnlyScheduler();
    const first = s.wait(0);
    const sig = await first;
    expect(sig!.aborted).toBe(false);
    void s.wait(100);
    expect(sig!.aborted).toBe(true);
  });

  it('the caller cancel hook aborts only its own call', async () => {
    const s = new LatestOnlyScheduler();
    let cancel: () => void = () => undefined;
    const p = s.wait(100, (l) => { cancel = l; });
    cancel();
    expect(await p).toBeNull();
    await vi.advanceTimersByTimeAsync(200);
    // A later call still works normally.
    const q = s.wait(10);
    await vi.advanceTimersByTimeAsync(10);
    expect(await q).not.toBeNull();
  });

  it('cancel() aborts the current request', async () => {
    const s = new LatestOnlyScheduler();
    const sig = await s.wait(0);
    s.cancel();
    expect(sig!.aborted).toBe(true);
  });
});
