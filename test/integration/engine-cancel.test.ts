// Cancellation and close() on the native Engine (real tiny model): a request cancelled while
// queued, mid-prompt or mid-decode gets exactly one terminal event and frees its slot; close()
// ends everything with 'cancel'. Schedules are forced by reacting to the engine's own events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { EngineDriver, promptText } from './engine-driver.js';

let model = '';
let eng: EngineDriver;

beforeAll(async () => {
  model = await ensureTestModel({});
  // One slot and a small batch: a long prompt takes many steps, a second request must queue.
  eng = await EngineDriver.load({ model, ctx: 1024, slots: 1, batch: 16, threads: 2 });
});
afterAll(async () => {
  await eng?.close();
});

function idle(): void {
  const snap = eng.engine.snapshot();
  expect(snap.queued).toBe(0);
  for (const s of snap.slots) expect(s).toMatchObject({ state: 'idle', requestId: null });
}

describe('cancel', () => {
  it('while queued: one done, never admitted', async () => {
    const running = eng.start({ prompt: eng.tokens(promptText('running', 10)), maxTokens: 200, ignoreEos: true });
    await eng.next((e) => e.type === 'tokens' && e.id === running.id, 'first token of the running request');
    const queued = eng.start({ prompt: eng.tokens(promptText('queued', 10)), maxTokens: 10 });
    expect(eng.engine.snapshot().slots[0]!.requestId).toBe(running.id);
    eng.engine.cancel(queued.id);
    const q = await queued.done;
    expect(q.dones).toHaveLength(1);
    expect(q.done).toMatchObject({ finish: 'cancel', generated: 0, reused: 0 });
    expect(q.events.map((e) => e.type)).toEqual(['done']);
    eng.engine.cancel(running.id);
    const r = await running.done;
    expect(r.dones).toHaveLength(1);
    expect(r.done.finish).toBe('cancel');
    idle();
  });

  it('mid-prompt: one done, no tokens, the slot keeps what was read', async () => {
    const prompt = eng.tokens(promptText('a long prompt to read in many steps', 600));
    expect(prompt.length).toBeGreaterThan(500);
    const req = eng.start({ prompt, maxTokens: 10 });
    const progress = await eng.next((e) => e.type === 'progress' && e.id === req.id, 'first prompt chunk');
    expect(progress).toMatchObject({ read: 16, total: prompt.length });
    eng.engine.cancel(req.id);
    const r = await req.done;
    expect(r.dones).toHaveLength(1);
    expect(r.done).toMatchObject({ finish: 'cancel', generated: 0, promptTokens: prompt.length });
    expect(r.ids).toEqual([]);
    const read = Math.max(...r.events.filter((e) => e.type === 'progress').map((e) => (e as { read: number }).read));
    expect(read).toBeLessThan(prompt.length);
    idle();
    expect(eng.engine.snapshot().slots[0]!.heldTokens).toBe(read);

    // The partial read is reused by the next request with that prompt.
    const again = await eng.run({ prompt, maxTokens: 1 });
    expect(again.admitted!.reused).toBe(read);
  });

  it('mid-decode: one done after some tokens, slot freed', async () => {
    const req = eng.start({ prompt: eng.tokens(promptText('decoding', 10)), maxTokens: 500, ignoreEos: true });
    eng.when((e) => e.type === 'tokens' && e.id === req.id, () => eng.engine.cancel(req.id));
    const r = await req.done;
    expect(r.dones).toHaveLength(1);
    expect(r.done.finish).toBe('cancel');
    expect(r.done.generated).toBeGreaterThanOrEqual(1);
    expect(r.done.generated).toBeLessThan(500);
    expect(r.ids).toHaveLength(r.done.generated);
    idle();
  });

  it('right after submit, and for unknown ids (ignored)', async () => {
    const req = eng.start({ prompt: eng.tokens('cancelled at once'), maxTokens: 10 });
    eng.engine.cancel(req.id);
    eng.engine.cancel(req.id);
    eng.engine.cancel(987654321);
    const r = await req.done;
    expect(r.dones).toHaveLength(1);
    expect(r.done.finish).toBe('cancel');
    // The id is free again once its done was delivered.
    const reuse = await eng.run({ id: req.id, prompt: eng.tokens('same id again'), maxTokens: 2, ignoreEos: true });
    expect(reuse.done.finish).toBe('length');
    idle();
  });
});

describe('close', () => {
  it('ends running and queued requests with exactly one cancel each, then refuses work', async () => {
    const other = await EngineDriver.load({ model, ctx: 512, slots: 1, batch: 16, threads: 2 });
    const running = other.start({ prompt: other.tokens(promptText('close running', 10)), maxTokens: 500, ignoreEos: true });
    await other.next((e) => e.type === 'tokens' && e.id === running.id, 'running request decoding');
    const queued = other.start({ prompt: other.tokens(promptText('close queued', 10)), maxTokens: 5 });
    const closing = other.engine.close();
    const again = other.engine.close();
    const [r, q] = await Promise.all([running.done, queued.done]);
    await Promise.all([closing, again]);
    expect(r.dones).toHaveLength(1);
    expect(r.done.finish).toBe('cancel');
    expect(q.dones).toHaveLength(1);
    expect(q.done.finish).toBe('cancel');
    expect(() => other.engine.submit({ id: 99, prompt: [1, 2, 3], maxTokens: 1 })).toThrow(/engine is closed/);
    expect(() => other.engine.tokenize('x')).toThrow(/engine is closed/);
    await expect(other.engine.saveSession('/tmp/x', [1], 'id')).rejects.toThrow(/engine is closed/);
    await other.engine.close();
    // Every request of that engine ended exactly once.
    const dones = other.all.filter((e) => e.type === 'done').map((e) => e.id);
    expect(new Set(dones).size).toBe(dones.length);
  });
});

describe('every request ends exactly once', () => {
  it('holds across this file', () => {
    const dones = eng.all.filter((e) => e.type === 'done').map((e) => e.id);
    const admitted = eng.all.filter((e) => e.type === 'admitted').map((e) => e.id);
    // Ids may be reused after their done, so count per admission/done pair in order.
    const open = new Set<number>();
    for (const e of eng.all) {
      if (e.type === 'admitted') { expect(open.has(e.id)).toBe(false); open.add(e.id); }
      if (e.type === 'done') open.delete(e.id);
    }
    expect(open.size).toBe(0);
    expect(dones.length).toBeGreaterThanOrEqual(admitted.length);
  });
});
