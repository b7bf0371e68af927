// Request ownership without a process: routing by id and epoch, stale-frame counting, and
// exactly one 'done' per request whatever happens.
import { describe, expect, it } from 'vitest';
import type { EngineEvent } from '../../native/lib/addon.js';
import type { EngineRequest, RequestEvent } from '../../backend/engine/client.js';
import { EngineRequestRouter } from '../../backend/engine/request-router.js';

const input = (n = 3) => ({ prompt: Array.from({ length: n }, (_, i) => i + 1), maxTokens: 8 });

function engineDone(id: number, over: Partial<Extract<EngineEvent, { type: 'done' }>> = {}): EngineEvent {
  return { type: 'done', id, finish: 'length', promptTokens: 3, reused: 0, promptMs: 5, decodeMs: 7, generated: 2, text: '', ...over };
}

async function collect(req: EngineRequest): Promise<RequestEvent[]> {
  const out: RequestEvent[] = [];
  for await (const ev of req.events) out.push(ev);
  return out;
}

describe('EngineRequestRouter', () => {
  it('routes a request\'s events in order and ends it once', async () => {
    const t = new EngineRequestRouter();
    const a = t.open(1, input(), () => {});
    const b = t.open(1, input(), () => {});
    expect(b.id).toBeGreaterThan(a.id);
    t.deliver(1, [
      { type: 'admitted', id: a.id, slot: 0, promptTokens: 3, reused: 1, restored: false },
      { type: 'tokens', id: b.id, ids: [9], text: 'B' },
      { type: 'tokens', id: a.id, ids: [5, 6], text: 'hi' },
    ]);
    t.deliver(1, [engineDone(a.id, { text: '!' }), engineDone(a.id)]);
    const events = await collect(a);
    expect(events.map((e) => e.type)).toEqual(['admitted', 'tokens', 'done']);
    expect(events[1]).toEqual({ type: 'tokens', ids: [5, 6], text: 'hi' });
    expect(await a.done).toEqual({
      type: 'done', finish: 'length', promptTokens: 3, reused: 0, promptMs: 5, decodeMs: 7, generated: 2, text: '!',
    });
    // The second 'done' for a finished request is stale; b is untouched.
    expect(t.staleFrames).toBe(1);
    expect(t.isLive(a.id)).toBe(false);
    expect(t.isLive(b.id)).toBe(true);
  });

  it('puts the step\'s hand-over stamp on its tokens events only', async () => {
    const t = new EngineRequestRouter();
    const a = t.open(1, input(), () => {});
    t.deliver(1, [
      { type: 'admitted', id: a.id, slot: 0, promptTokens: 3, reused: 0, restored: false },
      { type: 'tokens', id: a.id, ids: [4], text: 'x' },
    ], 5000.25);
    t.deliver(1, [{ type: 'tokens', id: a.id, ids: [5], text: 'y' }, engineDone(a.id)], 5020.5);
    const events = await collect(a);
    expect(events.slice(0, 3)).toEqual([
      { type: 'admitted', slot: 0, promptTokens: 3, reused: 0, restored: false },
      { type: 'tokens', ids: [4], text: 'x', handedAtMs: 5000.25 },
      { type: 'tokens', ids: [5], text: 'y', handedAtMs: 5020.5 },
    ]);
    expect(events[3]).not.toHaveProperty('handedAtMs');
  });

  it('drops and counts events of unknown ids and of another epoch', () => {
    const t = new EngineRequestRouter();
    const a = t.open(2, input(), () => {});
    expect(t.deliver(1, [{ type: 'tokens', id: a.id, ids: [1], text: 'x' }])).toBe(1); // older epoch
    expect(t.deliver(3, [engineDone(a.id)])).toBe(1); // an epoch it does not belong to
    expect(t.deliver(2, [{ type: 'progress', id: 999, read: 1, total: 2 }])).toBe(1); // unknown id
    expect(t.staleFrames).toBe(3);
    expect(t.isLive(a.id)).toBe(true);
    t.countStale(2);
    expect(t.staleFrames).toBe(5);
  });

  it('ids never repeat', () => {
    const t = new EngineRequestRouter();
    const ids = new Set<number>();
    for (let i = 0; i < 100; i++) {
      const r = t.open(1 + (i % 3), input(), () => {});
      ids.add(r.id);
      t.end(r.id, { finish: 'cancel' });
    }
    ids.add(t.openEnded(4, input(), { finish: 'error', engineDied: true, error: 'down' }).id);
    expect(ids.size).toBe(101);
  });

  it('endAll fails every live request once, with what was known, and later frames are stale', async () => {
    const t = new EngineRequestRouter();
    const queued = t.open(1, input(4), () => {});
    const decoding = t.open(1, input(), () => {});
    const finished = t.open(1, input(), () => {});
    t.deliver(1, [
      { type: 'admitted', id: decoding.id, slot: 1, promptTokens: 6, reused: 2, restored: true },
      { type: 'tokens', id: decoding.id, ids: [1, 2, 3], text: 'abc' },
      engineDone(finished.id),
    ]);
    const died = { finish: 'error' as const, engineDied: true, error: 'engine process exited (signal SIGKILL)' };
    expect(t.endAll(died)).toBe(2);
    expect(await queued.done).toEqual({
      type: 'done', finish: 'error', engineDied: true, error: died.error,
      promptTokens: 4, reused: 0, promptMs: null, decodeMs: null, generated: 0, text: '',
    });
    expect(await decoding.done).toMatchObject({ engineDied: true, promptTokens: 6, reused: 2, generated: 3, promptMs: null, decodeMs: null });
    expect((await finished.done).engineDied).toBeUndefined();
    expect(t.size).toBe(0);
    expect(t.endAll(died)).toBe(0);
    t.deliver(1, [engineDone(decoding.id)]);
    expect(t.staleFrames).toBe(1);
    expect((await collect(decoding)).filter((e) => e.type === 'done')).toHaveLength(1);
  });

  it('endAll with an epoch leaves other epochs alone', () => {
    const t = new EngineRequestRouter();
    const old = t.open(1, input(), () => {});
    const cur = t.open(2, input(), () => {});
    expect(t.endAll({ finish: 'error', engineDied: true }, 1)).toBe(1);
    expect(t.isLive(old.id)).toBe(false);
    expect(t.isLive(cur.id)).toBe(true);
  });

  it('cancel asks once while live and never after the end', async () => {
    const t = new EngineRequestRouter();
    const asked: number[] = [];
    const r = t.open(1, input(), (id) => asked.push(id));
    r.cancel();
    r.cancel();
    expect(asked).toEqual([r.id]);
    t.deliver(1, [engineDone(r.id, { finish: 'cancel', generated: 0 })]);
    r.cancel();
    expect(asked).toEqual([r.id]);
    expect((await r.done).finish).toBe('cancel');
  });

  it('reports phase durations the request never reached as null', async () => {
    const t = new EngineRequestRouter();
    const queued = t.open(1, input(), () => {});
    const admittedOnly = t.open(1, input(), () => {});
    t.deliver(1, [
      { type: 'admitted', id: admittedOnly.id, slot: 0, promptTokens: 3, reused: 0, restored: false },
      engineDone(queued.id, { finish: 'cancel', generated: 0, promptMs: 0, decodeMs: 0 }),
      engineDone(admittedOnly.id, { finish: 'cancel', generated: 0, promptMs: 4, decodeMs: 0 }),
    ]);
    expect(await queued.done).toMatchObject({ promptMs: null, decodeMs: null });
    expect(await admittedOnly.done).toMatchObject({ promptMs: 4, decodeMs: null });
  });

  it('a request that ends at once still yields its done through events and done', async () => {
    const t = new EngineRequestRouter();
    const r = t.openEnded(3, input(), { finish: 'error', engineDied: true, error: 'engine is restarting' });
    expect(r.epoch).toBe(3);
    expect(await collect(r)).toEqual([await r.done]);
    expect((await r.done).error).toBe('engine is restarting');
    expect(t.size).toBe(0);
  });

  it('events can be read only once', async () => {
    const t = new EngineRequestRouter();
    const r = t.open(1, input(), () => {});
    t.end(r.id, { finish: 'cancel' });
    await collect(r);
    await expect(collect(r)).rejects.toThrow(/read only once/);
  });

  it('a consumer waiting for events is woken by each delivery', async () => {
    const t = new EngineRequestRouter();
    const r = t.open(1, input(), () => {});
    const seen = collect(r);
    for (let i = 0; i < 5; i++) {
      t.deliver(1, [{ type: 'tokens', id: r.id, ids: [i], text: String(i) }]);
      await Promise.resolve();
    }
    t.deliver(1, [engineDone(r.id, { generated: 5 })]);
    const texts = (await seen).map((e) => (e.type === 'tokens' ? e.text : e.type));
    expect(texts).toEqual(['0', '1', '2', '3', '4', 'done']);
  });
});
