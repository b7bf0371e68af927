// The native Engine on a real tiny model, greedy: a request's output does not depend on what
// it is batched with, events leave once per step, and the stop rules end generation where
// they should (stop strings, stop tokens, max tokens, a full context).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { EngineDriver, promptText } from './engine-driver.js';

let model = '';
let eng: EngineDriver;

beforeAll(async () => {
  model = await ensureTestModel({});
  eng = await EngineDriver.load({ model, ctx: 512, slots: 4, threads: 2 });
});
afterAll(async () => {
  await eng?.close();
});

describe('batching', () => {
  it('gives a request the same tokens solo and batched with 3 other requests', async () => {
    const prompts = ['solo', 'second', 'third', 'fourth'].map((t) => eng.tokens(promptText(t, 12)));
    const solo = await eng.run({ prompt: prompts[0]!, maxTokens: 24, ignoreEos: true });
    expect(solo.ids).toHaveLength(24);

    const batched = await Promise.all(prompts.map((prompt) => eng.run({ prompt, maxTokens: 24, ignoreEos: true })));
    expect(batched[0]!.ids).toEqual(solo.ids);
    expect(batched[0]!.text).toBe(solo.text);
    // Not vacuous: distinct prompts give distinct continuations, and they really shared steps.
    expect(new Set(batched.map((r) => r.ids.join(','))).size).toBe(4);
    const ids = new Set(batched.map((r) => r.done.id));
    const shared = eng.batches.filter((b) => new Set(b.filter((e) => e.type === 'tokens' && ids.has(e.id)).map((e) => e.id)).size === 4);
    expect(shared.length).toBeGreaterThan(10);
    for (const r of batched) expect(r.dones).toHaveLength(1);
  });

  it('sends one onEvents call per step holding every sequence\'s tokens of that step', async () => {
    const before = eng.batches.length;
    const runs = await Promise.all(['a', 'b'].map((t) => eng.run({ prompt: eng.tokens(promptText(t, 8)), maxTokens: 6, ignoreEos: true })));
    const batches = eng.batches.slice(before);
    for (const b of batches) {
      // Never two tokens events of one request in one step (one token per sequence per step).
      const tokenIds = b.filter((e) => e.type === 'tokens').map((e) => e.id);
      expect(new Set(tokenIds).size).toBe(tokenIds.length);
    }
    const steps = eng.engine.traces().steps;
    expect(steps.length).toBeGreaterThan(0);
    for (const r of runs) expect(r.ids).toHaveLength(6);
  });
});

describe('stop rules', () => {
  it('stops before a stop string, never emitting it, and keeps the text before it', async () => {
    const prompt = eng.tokens(promptText('stopstring', 10));
    const free = await eng.run({ prompt, maxTokens: 24, ignoreEos: true });
    // A stop string taken from the middle of the free-running text, spanning a token boundary.
    const cut = Math.floor(free.text.length / 2);
    const stop = free.text.slice(cut, cut + 3);
    expect(stop.length).toBe(3);
    const firstAt = free.text.indexOf(stop);
    const stopped = await eng.run({ prompt, maxTokens: 24, ignoreEos: true, stop: [stop] });
    expect(stopped.done.finish).toBe('stop');
    expect(stopped.text).toBe(free.text.slice(0, firstAt));
    expect(stopped.text.includes(stop)).toBe(false);
    expect(stopped.done.text).toBe('');
  });

  it('releases text withheld for a partial stop match when generation ends otherwise', async () => {
    const prompt = eng.tokens(promptText('partial', 10));
    const free = await eng.run({ prompt, maxTokens: 8, ignoreEos: true });
    // The stop string starts with the last character generated but never completes.
    const last = [...free.text].pop()!;
    const r = await eng.run({ prompt, maxTokens: 8, ignoreEos: true, stop: [`${last}\u0000never`] });
    expect(r.done.finish).toBe('length');
    expect(r.text).toBe(free.text);
    expect(r.done.text.length).toBeGreaterThan(0);
  });

  it('ends on a stop token without emitting it', async () => {
    const prompt = eng.tokens(promptText('stoptoken', 10));
    const free = await eng.run({ prompt, maxTokens: 10, ignoreEos: true });
    const target = free.ids[3]!;
    const firstAt = free.ids.indexOf(target);
    const r = await eng.run({ prompt, maxTokens: 10, ignoreEos: true, stopTokens: [target] });
    expect(r.done.finish).toBe('stop');
    expect(r.ids).toEqual(free.ids.slice(0, firstAt));
    expect(r.done.generated).toBe(firstAt);
  });

  it('maxTokens 0 reads the prompt only; maxTokens n gives exactly n tokens', async () => {
    const prompt = eng.tokens(promptText('zero', 10));
    const zero = await eng.run({ prompt, maxTokens: 0 });
    expect(zero.done).toMatchObject({ finish: 'length', generated: 0, promptTokens: prompt.length });
    expect(zero.ids).toEqual([]);
    const five = await eng.run({ prompt, maxTokens: 5, ignoreEos: true });
    expect(five.done).toMatchObject({ finish: 'length', generated: 5 });
    expect(five.ids).toHaveLength(5);
  });

  it('finishes with length when the slot context is full', async () => {
    const small = await EngineDriver.load({ model, ctx: 64, slots: 1, threads: 2 });
    try {
      const prompt = small.tokens(promptText('full', 80)).slice(0, 60);
      expect(prompt).toHaveLength(60);
      const r = await small.run({ prompt, maxTokens: 100, ignoreEos: true });
      // Positions 0..63 fit; the token sampled after position 63 has nowhere to go.
      expect(r.done).toMatchObject({ finish: 'length', generated: 64 - 60 + 1 });
    } finally {
      await small.close();
    }
  });
});

describe('sampling', () => {
  it('is reproducible with a seed and changes with logit bias', async () => {
    const prompt = eng.tokens(promptText('sampling', 10));
    const sampling = { temperature: 0.9, topK: 40, topP: 0.95, minP: 0.01, seed: 1234 };
    const a = await eng.run({ prompt, maxTokens: 12, ignoreEos: true, sampling });
    const b = await eng.run({ prompt, maxTokens: 12, ignoreEos: true, sampling });
    expect(b.ids).toEqual(a.ids);

    const greedy = await eng.run({ prompt, maxTokens: 1, ignoreEos: true });
    const banned = greedy.ids[0]!;
    const biased = await eng.run({ prompt, maxTokens: 1, ignoreEos: true, sampling: { logitBias: [[banned, -Infinity]] } });
    expect(biased.ids[0]).not.toBe(banned);
  });

  it('greedy without a chain (argmax) and through the llama sampler chain agree', async () => {
    const prompt = eng.tokens(promptText('fast path', 10));
    const fast = await eng.run({ prompt, maxTokens: 16, ignoreEos: true });
    // A zero logit bias changes nothing but routes sampling through llama_sampler_sample.
    const chain = await eng.run({ prompt, maxTokens: 16, ignoreEos: true, sampling: { logitBias: [[0, 0]] } });
    expect(chain.ids).toEqual(fast.ids);
  });

  it('applies repeat penalties to tokens of the prompt', async () => {
    const prompt = eng.tokens(promptText('penalty', 10));
    const target = prompt[2]!;
    const count = (ids: number[]) => ids.filter((t) => t === target).length;
    // Raise a prompt token just enough that greedy picks it; a repeat penalty then removes it.
    let checked = false;
    for (const bias of [10, 20, 40, 60, 80, 120, 160, 240, 320]) {
      const plain = await eng.run({ prompt, maxTokens: 8, ignoreEos: true, sampling: { logitBias: [[target, bias]] } });
      if (count(plain.ids) === 0) continue;
      const penalised = await eng.run({
        prompt, maxTokens: 8, ignoreEos: true,
        sampling: { logitBias: [[target, bias]], repeatPenalty: 50, repeatLastN: -1 },
      });
      expect(count(penalised.ids)).toBeLessThan(count(plain.ids));
      checked = true;
      break;
    }
    expect(checked).toBe(true);
  });
});

describe('tokenizer', () => {
  it('round-trips text through tokenize and detokenize', () => {
    const text = 'Hello, world: naïve café 🙂';
    const ids = eng.engine.tokenize(text, false, false);
    expect(ids).toBeInstanceOf(Int32Array);
    expect(eng.engine.detokenize(ids)).toBe(text);
    expect(eng.engine.detokenize(Array.from(ids))).toBe(text);
  });
});
