// The native Engine's step plan (real tiny model): decoding sequences add a token every step
// while a long prompt is read, the rest of the n_batch budget goes to the shortest remaining
// prompt first (a whole batch beside decoders, less while a short request joins or every slot is
// taken), admission follows priority then arrival, and the trace records say so.
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

  it('reads a long prompt in n_batch chunks beside a decoding side request; a short one arriving mid-read is read in the next step', async () => {
    const B = 128;
    const P = 16;
    const model = await ensureTestModel({});
    const e = await EngineDriver.load({ model, ctx: 4096, slots: 4, batch: B, decodePromptBudget: P, threads: 2, traceSteps: 100_000 });
    try {
      const side = e.start({ prompt: e.tokens(promptText('side request: a title', 8)), maxTokens: 100_000, ignoreEos: true });
      await e.next((ev) => ev.type === 'tokens' && ev.id === side.id, 'the side request decoding');
      e.engine.traces();
      const mainPrompt = e.tokens(promptText('the main request of an agent', 2000));
      expect(mainPrompt.length).toBeGreaterThan(16 * B);
      const main = e.start({ prompt: mainPrompt, maxTokens: 1, ignoreEos: true });
      const shortPrompt = e.tokens(promptText('short', 6));
      expect(shortPrompt.length).toBeLessThanOrEqual(P);
      let short: { id: number; done: Promise<unknown> } | undefined;
      e.when((ev) => ev.type === 'progress' && ev.id === main.id && ev.read >= 2 * B, () => {
        short = e.start({ prompt: shortPrompt, maxTokens: 1, ignoreEos: true });
      });
      await main.done;
      expect(short).toBeDefined();
      await short!.done;
      e.engine.cancel(side.id);
      await side.done;
      const t = e.engine.traces();
      const mainRec = t.requests.find((r) => r.id === main.id)!;
      const shortRec = t.requests.find((r) => r.id === short!.id)!;
      const stepAt = (at: number) => t.steps.find((s) => s.t === at)!;
      expect(shortRec.admitted!).toBeLessThan(mainRec.promptDone!);  // it arrived mid-read

      // The short request: read whole in the first step after its admission, a small step (the
      // long read gave way to at most P tokens there), so its first token came out of that step.
      expect(shortRec.promptLegs.map((l) => l.tokens)).toEqual([shortPrompt.length]);
      const shortStep = stepAt(shortRec.promptLegs[0]!.t);
      expect(shortStep.promptTokens).toBeLessThanOrEqual(shortPrompt.length + P);
      const untilFirst = t.steps.filter((s) => s.t >= shortRec.admitted! && s.t < shortRec.firstToken!);
      expect(untilFirst.map((s) => s.step)).toEqual([shortStep.step]);

      // The main prompt: every other step of its read is a whole n_batch step that also carries the
      // side request's token (and the short one's once it decodes); only its last chunk is less.
      const legs = mainRec.promptLegs;
      expect(legs.reduce((n, l) => n + l.tokens, 0)).toBe(mainPrompt.length);
      for (const [i, leg] of legs.entries()) {
        const s = stepAt(leg.t);
        expect(s.decodeTokens).toBeGreaterThanOrEqual(1);
        if (s.step === shortStep.step || i === legs.length - 1) continue;
        expect(s.decodeTokens + s.promptTokens).toBe(B);
        expect(leg.tokens).toBeGreaterThanOrEqual(B - 2);
      }
      // n_batch chunks: the read takes the steps a whole batch a step needs, plus the short's step.
      expect(legs.length).toBeLessThanOrEqual(Math.ceil(mainPrompt.length / (B - 2)) + 1);
    } finally {
      await e.close();
    }
  });

  it('an agent\'s main request sent with its side request takes at most one step more than alone', async () => {
    const B = 128;
    const model = await ensureTestModel({});
    const e = await EngineDriver.load({ model, ctx: 4096, slots: 4, batch: B, decodePromptBudget: 16, threads: 2, traceSteps: 100_000 });
    try {
      const mainPrompt = e.tokens(promptText('the main request, sent together with a title request', 1200));
      const legsOf = (id: number) => e.engine.traces().requests.find((r) => r.id === id)!.promptLegs;
      e.engine.traces();
      const alone = await e.run({ prompt: mainPrompt, maxTokens: 1, ignoreEos: true, cachePrompt: false });
      const aloneLegs = legsOf(alone.done.id).length;
      expect(aloneLegs).toBe(Math.ceil(mainPrompt.length / B));  // alone: n_batch a step too

      // The side request (shorter, so it is read first) decodes through the whole read.
      const side = e.start({ prompt: e.tokens(promptText('side request: summarize the conversation', 60)), maxTokens: 100_000, ignoreEos: true });
      const main = e.start({ prompt: mainPrompt, maxTokens: 1, ignoreEos: true, cachePrompt: false });
      const beside = await main.done;
      e.engine.cancel(side.id);
      await side.done;
      const t = e.engine.traces();
      const legs = t.requests.find((r) => r.id === beside.done.id)!.promptLegs;
      expect(legs.reduce((n, l) => n + l.tokens, 0)).toBe(mainPrompt.length);
      expect(legs.length).toBeLessThanOrEqual(aloneLegs + 1);
      // The side request decoded in every step of the read after its own prompt.
      const reading = legs.map((l) => t.steps.find((s) => s.t === l.t)!).slice(1);
      for (const s of reading) expect(s.decodeTokens).toBeGreaterThanOrEqual(1);
    } finally {
      await e.close();
    }
  });

  it('reads a burst of prompts that each fit one step before any of them decodes', async () => {
    const B = 64;
    const model = await ensureTestModel({});
    const e = await EngineDriver.load({ model, ctx: 1024, slots: 4, batch: B, threads: 2, traceSteps: 100_000, admitWindowMs: 1000 });
    try {
      // Four prompts of 40 tokens sent together: 160 tokens, three steps of the batch.
      const prompts = [0, 1, 2, 3].map((i) => Array.from({ length: 40 }, (_, k) => 2000 + 50 * i + k));
      e.engine.traces();
      const runs = prompts.map((prompt) => e.start({ prompt, maxTokens: 4, ignoreEos: true }));
      await Promise.all(runs.map((r) => r.done));
      const t = e.engine.traces();
      const lastFirst = Math.max(...runs.map((r) => t.requests.find((x) => x.id === r.id)!.firstToken!));
      const reading = t.steps.filter((s) => s.t < lastFirst);
      // Whole steps of prompt tokens only: no step split between decode tokens and prompt chunks.
      expect(reading.map((s) => s.promptTokens)).toEqual([B, B, 160 - 2 * B]);
      for (const s of reading) expect(s.decodeTokens).toBe(0);
      // Then everyone decodes together, every request its 4 tokens.
      for (const r of runs) expect((await r.done).ids).toHaveLength(4);
    } finally {
      await e.close();
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
      const oneDecoder = steps.filter((s) => s.decodeTokens === 1);  // two of three slots taken: whole steps
      const allSlots = steps.filter((s) => s.decodeTokens === 2);    // every slot taken
      expect(Math.max(...oneDecoder.map((s) => s.promptTokens))).toBe(63);
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
