// The native Engine's step plan (real tiny model): decoding sequences add a token every step
// while a long prompt is read, the rest of the n_batch budget goes to the shortest remaining
// prompt first, admission follows priority then arrival, and the trace records say so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineEvent } from '../../native/lib/addon.js';
import { ensureTestModel } from '../helpers/models.js';
import { EngineDriver, longReadBesideDecoder, promptText } from './engine-driver.js';

const BATCH = 32;
let eng: EngineDriver;

beforeAll(async () => {
  const model = await ensureTestModel({});
  eng = await EngineDriver.load({ model, ctx: 2048, slots: 3, batch: BATCH, threads: 2, traceSteps: 100_000 });
});
afterAll(async () => {
  await eng?.close();
});

describe('step plan', () => {
  it('keeps decoders and short prompts moving while a long prompt is read', async () => {
    const longPrompt = eng.tokens(promptText('a very long document to read', 900));
    expect(longPrompt.length).toBeGreaterThan(20 * BATCH);
    // A short prompt arriving while the long one is being read.
    const { decoder, long: longRun, short, traces: t } = await longReadBesideDecoder(eng, longPrompt, eng.tokens(promptText('short', 40)));
    const long = { id: longRun.done.id };

    // The short request finished its prompt long before the long one.
    const rec = (id: number) => t.requests.find((r) => r.id === id)!;
    expect(rec(short.done.id).promptDone!).toBeLessThan(rec(long.id).promptDone!);
    const shortSteps = rec(short.done.id).promptLegs.length;
    expect(shortSteps).toBeLessThanOrEqual(2);

    // Every step stays within n_batch; while the long prompt was read the decoder was in every step.
    const readingLong = t.steps.filter((s) => s.t >= rec(long.id).admitted! && s.t < rec(long.id).promptDone!);
    expect(readingLong.length).toBeGreaterThanOrEqual(Math.floor(longPrompt.length / BATCH));
    for (const s of t.steps) expect(s.decodeTokens + s.promptTokens).toBeLessThanOrEqual(BATCH);
    for (const s of readingLong) expect(s.decodeTokens).toBeGreaterThanOrEqual(1);

    // The decoder got one token per step throughout (one tokens event per onEvents call).
    const decoderTokens = eng.eventsOf(decoder.id).filter((e) => e.type === 'tokens').length;
    expect(decoderTokens).toBeGreaterThanOrEqual(readingLong.length);

    // Prompt legs add up to what was read; the request record is ordered in time.
    const longRec = rec(long.id);
    expect(longRec.promptLegs.reduce((n, l) => n + l.tokens, 0)).toBe(longPrompt.length - longRun.admitted!.reused);
    expect(longRec.queued).toBeLessThanOrEqual(longRec.admitted!);
    expect(longRec.admitted!).toBeLessThanOrEqual(longRec.promptDone!);
    expect(longRec.promptDone!).toBeLessThanOrEqual(longRec.firstToken!);
    expect(longRec.firstToken!).toBeLessThanOrEqual(longRec.finished!);
  });

  it('reads prompts in small chunks while sequences decode, and in bigger ones alone', async () => {
    expect(eng.engine.info.decodePromptBudget).toBe(BATCH);  // auto on CPU: min(64, batch)
    const model = await ensureTestModel({});
    const small = await EngineDriver.load({ model, ctx: 2048, slots: 2, batch: 64, decodePromptBudget: 8, threads: 2, traceSteps: 100_000 });
    try {
      expect(small.engine.info.decodePromptBudget).toBe(8);
      const decoder = small.start({ prompt: small.tokens(promptText('decoder', 8)), maxTokens: 1000, ignoreEos: true });
      await small.next((e) => e.type === 'tokens' && e.id === decoder.id, 'the decoder decoding');
      small.engine.traces();
      const longPrompt = small.tokens(promptText('a long read beside a decoder', 200));
      const long = small.start({ prompt: longPrompt, maxTokens: 1, ignoreEos: true });
      // Cancel the decoder half-way through the read: later steps may use the whole batch.
      small.when((e) => e.type === 'progress' && e.id === long.id && e.read >= 80, () => small.engine.cancel(decoder.id));
      await long.done;
      await decoder.done;
      const steps = small.engine.traces().steps.filter((s) => s.promptTokens > 0);
      const withDecoder = steps.filter((s) => s.decodeTokens > 0);
      const alone = steps.filter((s) => s.decodeTokens === 0);
      expect(withDecoder.length).toBeGreaterThanOrEqual(10);
      for (const s of withDecoder) expect(s.promptTokens).toBeLessThanOrEqual(8);
      expect(alone.length).toBeGreaterThan(0);
      expect(Math.max(...alone.map((s) => s.promptTokens))).toBeGreaterThan(8);
      // Alone, a long prompt still reads at most 4x the budget a step, so a newcomer never waits long.
      for (const s of alone) expect(s.promptTokens).toBeLessThanOrEqual(32);
    } finally {
      await small.close();
    }
  });

  it('finishes short prompts that arrive together in one step beside a decoder, up to 4x the budget', async () => {
    const model = await ensureTestModel({});
    const e4 = await EngineDriver.load({ model, ctx: 1024, slots: 4, batch: 64, decodePromptBudget: 8, threads: 2, traceSteps: 100_000 });
    try {
      const decoder = e4.start({ prompt: e4.tokens(promptText('decoder', 8)), maxTokens: 1000, ignoreEos: true });
      await e4.next((e) => e.type === 'tokens' && e.id === decoder.id, 'the decoder decoding');
      e4.engine.traces();
      // Three prompts of 7 tokens (21 > P = 8): before, the second and third were cut over later steps.
      const shorts = [0, 1, 2].map((i) => e4.start({ prompt: Array.from({ length: 7 }, (_, k) => 1000 + 10 * i + k), maxTokens: 1, ignoreEos: true }));
      await Promise.all(shorts.map((r) => r.done));
      e4.engine.cancel(decoder.id);
      await decoder.done;
      const { requests, steps } = e4.engine.traces();
      for (const r of shorts) {
        const rec = requests.find((t) => t.id === r.id)!;
        expect(rec.promptLegs.map((l) => l.tokens)).toEqual([7]);
      }
      for (const st of steps.filter((x) => x.decodeTokens > 0)) expect(st.promptTokens).toBeLessThanOrEqual(8 + 4 * 8);
    } finally {
      await e4.close();
    }
  });

  it('reads in quarter chunks while every slot is taken, so decoders free their slots sooner', async () => {
    const model = await ensureTestModel({});
    const e3 = await EngineDriver.load({ model, ctx: 2048, slots: 3, batch: 64, decodePromptBudget: 32, threads: 2, traceSteps: 100_000 });
    try {
      const d1 = e3.start({ prompt: e3.tokens(promptText('first decoder', 8)), maxTokens: 1000, ignoreEos: true });
      await e3.next((e) => e.type === 'tokens' && e.id === d1.id, 'the first decoder decoding');
      e3.engine.traces();
      const long = e3.start({ prompt: e3.tokens(promptText('a long read while slots fill up', 600)), maxTokens: 1, ignoreEos: true });
      let d2: { id: number; done: Promise<unknown> } | undefined;
      e3.when((e) => e.type === 'progress' && e.id === long.id && e.read >= 100, () => {
        d2 = e3.start({ prompt: e3.tokens(promptText('second decoder', 4)), maxTokens: 1000, ignoreEos: true });
      });
      e3.when((e) => e.type === 'progress' && e.id === long.id && e.read >= 300, () => {
        e3.engine.cancel(d1.id);
        if (d2) e3.engine.cancel(d2.id);
      });
      await long.done;
      await d1.done;
      expect(d2).toBeDefined();
      await d2!.done;
      const steps = e3.engine.traces().steps.filter((s) => s.promptTokens > 0);
      const oneDecoder = steps.filter((s) => s.decodeTokens === 1);  // two of three slots taken
      const allSlots = steps.filter((s) => s.decodeTokens === 2);    // every slot taken
      for (const s of oneDecoder) expect(s.promptTokens).toBeLessThanOrEqual(32);
      expect(Math.max(...oneDecoder.map((s) => s.promptTokens))).toBeGreaterThan(8);
      expect(allSlots.length).toBeGreaterThanOrEqual(5);
      for (const s of allSlots) expect(s.promptTokens).toBeLessThanOrEqual(8);
    } finally {
      await e3.close();
    }
  });

  it('admits by priority, then in arrival order', async () => {
    // Fill every slot, queue four requests, and release the slots together.
    const blockers = [0, 1, 2].map((i) => eng.start({ prompt: eng.tokens(promptText(`blocker ${i}`, 8)), maxTokens: 1000, ignoreEos: true }));
    await Promise.all(blockers.map((b) => eng.next((e) => e.type === 'tokens' && e.id === b.id, 'blockers decoding')));
    const queued = [
      { name: 'low-1', priority: 0 },
      { name: 'high', priority: 5 },
      { name: 'low-2', priority: 0 },
      { name: 'mid', priority: 1 },
    ].map((q) => ({ ...q, req: eng.start({ prompt: eng.tokens(promptText(q.name, 8)), maxTokens: 1, ignoreEos: true, priority: q.priority }) }));
    const order: number[] = [];
    const listen = (e: EngineEvent): void => { if (e.type === 'admitted') order.push(e.id); };
    const ids = new Set(queued.map((q) => q.req.id));
    for (let i = 0; i < 4; i++) eng.when((e) => e.type === 'admitted' && ids.has(e.id) && !order.includes(e.id), listen);
    // One slot frees at a time: each admission is a free choice among the waiting.
    expect(order).toEqual([]);
    for (const b of blockers) {
      eng.engine.cancel(b.id);
      await b.done;
    }
    await Promise.all(queued.map((q) => q.req.done));
    const byId = new Map(queued.map((q) => [q.req.id, q.name]));
    expect(order.map((id) => byId.get(id))).toEqual(['high', 'mid', 'low-1', 'low-2']);
  });
});
