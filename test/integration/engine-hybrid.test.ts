// A hybrid model (test model `hybrid`: Qwen3.5's gated delta net layers, whose state is recurrent,
// and an attention layer) through the engine's caches: a follow-up reuses the slot's tokens, a
// parked conversation and a session file restore its recurrent state with its KV, greedy choices
// forked from one prompt agree. A recurrent state cannot be cut back: a request that shares the
// slot's last prompt but not what followed goes back to the checkpoint taken after that prompt; one
// that leaves it earlier reads its prompt afresh. Each answer is a fresh engine's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { EngineDriver, promptText } from './engine-driver.js';

let model = '';
const open: EngineDriver[] = [];

async function engine(slots = 2): Promise<EngineDriver> {
  const d = await EngineDriver.load({ model, ctx: 256, slots, threads: 2, freeRamFloorMiB: 0, parkBudgetMiB: 64, speculative: { mtp: 'off' } });
  open.push(d);
  return d;
}

/** Runs `fn` with a temporary folder, removed afterwards. */
async function inTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'strata-hybrid-'));
  try {
    await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What an engine that never saw anything else answers to `prompt`. */
async function fresh(prompt: number[], maxTokens: number): Promise<number[]> {
  const eng = await engine();
  const r = await eng.run({ prompt, maxTokens, ignoreEos: true });
  expect(r.admitted!.reused).toBe(0);
  return r.ids;
}

beforeAll(async () => {
  model = await ensureTestModel({ shape: 'hybrid' });
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((d) => d.close()));
});

describe('a hybrid (recurrent) model through the engine\'s caches', () => {
  it('a follow-up reuses every token the slot holds and answers as a fresh engine', async () => {
    const eng = await engine();
    const prompt = eng.tokens(promptText('followup', 16));
    const first = await eng.run({ prompt, maxTokens: 8, ignoreEos: true });
    const followup = [...prompt, ...first.ids, ...eng.tokens(' and then?')];
    const second = await eng.run({ prompt: followup, maxTokens: 12, ignoreEos: true });
    expect(second.admitted!.reused).toBe(prompt.length + first.ids.length - 1);
    expect(second.ids).toEqual(await fresh(followup, 12));
  });

  it('a request that shares the slot\'s last prompt but not its answer (an agent\'s next turn, the answer rendered anew) goes back to the state after that prompt', async () => {
    const eng = await engine(1);
    const prompt = eng.tokens(promptText('an agent turn', 16));
    const first = await eng.run({ prompt, maxTokens: 6, ignoreEos: true });
    const next = [...prompt, ...eng.tokens(' rendered otherwise, then a tool result')];
    expect(next[prompt.length]).not.toBe(first.ids[0]);
    const r = await eng.run({ prompt: next, maxTokens: 10, ignoreEos: true });
    // The recurrent state cannot be cut back to the prompt's end: its checkpoint there is restored.
    expect(r.admitted!.reused).toBe(prompt.length);
    expect(r.ids).toEqual(await fresh(next, 10));
  });

  it('a request that leaves the slot\'s last prompt inside it (before the checkpoint) reads its prompt afresh', async () => {
    const eng = await engine(1);
    const shared = eng.tokens(promptText('shared opening', 12));
    await eng.run({ prompt: [...shared, ...eng.tokens(promptText('first ending', 6))], maxTokens: 6, ignoreEos: true });
    const other = [...shared, ...eng.tokens(promptText('second ending', 6))];
    const r = await eng.run({ prompt: other, maxTokens: 10, ignoreEos: true });
    expect(r.admitted!.reused).toBe(0);
    expect(r.ids).toEqual(await fresh(other, 10));
  });

  it('keeps the states after the slot\'s last four prompts: a request that rewrites a later message goes back to the latest prompt it keeps whole', async () => {
    const eng = await engine(1);
    const prompts = [eng.tokens(promptText('turn one', 10))];
    for (let k = 2; k <= 5; k++) prompts.push([...prompts.at(-1)!, ...eng.tokens(` then step ${k} of the plan, and a tool result ${k * 7}.`)]);
    for (const p of prompts) await eng.run({ prompt: p, maxTokens: 3, ignoreEos: true });
    // Turn 3 rewritten (an edit; a template that drops an older turn's thinking): back to turn 2's prompt.
    const rewritten = [...prompts[1]!, ...eng.tokens(' and a message written anew.')];
    const r = await eng.run({ prompt: rewritten, maxTokens: 10, ignoreEos: true });
    expect(r.admitted!.reused).toBe(prompts[1]!.length);
    expect(r.ids).toEqual(await fresh(rewritten, 10));
    // Five prompts were read: the first one's state is no longer kept.
    const early = [...prompts[0]!, ...eng.tokens(' and another road.')];
    expect((await eng.run({ prompt: early, maxTokens: 2, ignoreEos: true })).admitted!.reused).toBe(0);
  });

  it('parks a displaced conversation and restores its state: the follow-up answers as a fresh engine', async () => {
    const eng = await engine(1);
    const prompt = eng.tokens(promptText('parked one', 16));
    const first = await eng.run({ prompt, maxTokens: 8, ignoreEos: true });
    await eng.run({ prompt: eng.tokens(promptText('displacing talk', 16)), maxTokens: 8, ignoreEos: true });
    expect(eng.engine.snapshot().park.entries.length).toBe(1);
    const followup = [...prompt, ...first.ids, ...eng.tokens(' tell me more')];
    const restored = await eng.run({ prompt: followup, maxTokens: 12, ignoreEos: true });
    expect(restored.admitted).toMatchObject({ restored: true, reused: prompt.length + first.ids.length - 1 });
    expect(restored.ids).toEqual(await fresh(followup, 12));
  });

  it('a session file loaded into a new engine continues as a fresh engine reading the whole prompt', async () => {
    await inTempDir(async (dir) => {
      const src = await engine();
      const prompt = src.tokens(promptText('a kept conversation', 12));
      const first = await src.run({ prompt, maxTokens: 8, ignoreEos: true });
      const followup = [...prompt, ...first.ids, ...src.tokens(' next')];
      await src.engine.saveSession(join(dir, 's.session'), followup, 'hybrid#1');
      const dst = await engine();
      const loaded = await dst.engine.loadSession(join(dir, 's.session'), 'hybrid#1');
      const r = await dst.run({ prompt: followup, maxTokens: 12, ignoreEos: true });
      expect(r.admitted!.reused).toBe(loaded.tokens);
      expect(r.ids).toEqual(await fresh(followup, 12));
    });
  });

  it('greedy choices forked from one prompt (its state copied to each slot) agree', async () => {
    const eng = await engine(3);
    const prompt = eng.tokens(promptText('three choices', 10));
    const r = await eng.run({ prompt, maxTokens: 10, ignoreEos: true, n: 3 });
    const byChoice = [0, 1, 2].map((c) => r.events.filter((e) => e.type === 'tokens' && (e.choice ?? 0) === c).flatMap((e) => (e.type === 'tokens' ? e.ids : [])));
    expect(byChoice[0]).toEqual(await fresh(prompt, 10));
    expect(byChoice[1]).toEqual(byChoice[0]);
    expect(byChoice[2]).toEqual(byChoice[0]);
  });
});

// An agent's conversations all start with its system prompt and tools (sharedPrefix): a recurrent
// state cannot be cut back there, so the engine parks a copy as it reads past them.
describe('a hybrid model: a prompt\'s shared start', () => {
  it('is parked as it is read: later conversations that start with it reuse it and answer as a fresh engine', async () => {
    const eng = await engine(1);
    const shared = eng.tokens(promptText('a system prompt and its tools', 40));
    const first = [...shared, ...eng.tokens(promptText('task one', 8))];
    await eng.run({ prompt: first, maxTokens: 6, ignoreEos: true, sharedPrefix: shared.length });
    expect(eng.engine.snapshot().park.entries.map((e) => e.tokens)).toEqual([shared.length]);
    for (const task of ['task two', 'task three']) {
      const other = [...shared, ...eng.tokens(promptText(task, 8))];
      const r = await eng.run({ prompt: other, maxTokens: 10, ignoreEos: true, sharedPrefix: shared.length });
      // From the park, which keeps the copy for the next one (the slot's own state is past it).
      expect(r.admitted).toMatchObject({ reused: shared.length, restored: true });
      expect(r.ids).toEqual(await fresh(other, 10));
    }
    expect(eng.engine.snapshot().park.entries.map((e) => e.tokens)).toContain(shared.length);
  });

  it('saved alone (a prefix-cache file) and loaded into a new engine, starts every new conversation there', async () => {
    await inTempDir(async (dir) => {
      const src = await engine(1);
      const shared = src.tokens(promptText('tools and rules', 40));
      await src.run({ prompt: [...shared, ...src.tokens(promptText('the first task', 8))], maxTokens: 6, ignoreEos: true, sharedPrefix: shared.length });
      // The slot holds the whole conversation, the park the shared start alone: the file gets the latter.
      const saved = await src.engine.saveSession(join(dir, 'p.session'), shared, 'hybrid#1');
      expect(saved.tokens).toBe(shared.length);
      const dst = await engine(1);
      expect((await dst.engine.loadSession(join(dir, 'p.session'), 'hybrid#1')).tokens).toBe(shared.length);
      for (const task of ['a second task', 'a third task']) {
        const other = [...shared, ...dst.tokens(promptText(task, 8))];
        const r = await dst.run({ prompt: other, maxTokens: 10, ignoreEos: true });
        expect(r.admitted!.reused).toBe(shared.length);
        expect(r.ids).toEqual(await fresh(other, 10));
      }
    });
  });

  it('is not parked where it is already cached, nor past the prompt, nor without a park', async () => {
    const eng = await engine(1);
    const shared = eng.tokens(promptText('one shared opening', 30));
    const prompt = [...shared, ...eng.tokens(promptText('a task', 8))];
    await eng.run({ prompt, maxTokens: 4, ignoreEos: true, sharedPrefix: prompt.length });
    expect(eng.engine.snapshot().park.entries).toEqual([]);
    await eng.run({ prompt, maxTokens: 4, ignoreEos: true, sharedPrefix: shared.length });
    await eng.run({ prompt: [...shared, ...eng.tokens(promptText('another task', 8))], maxTokens: 4, ignoreEos: true, sharedPrefix: shared.length });
    expect(eng.engine.snapshot().park.entries.filter((e) => e.tokens === shared.length)).toHaveLength(1);
    const off = await EngineDriver.load({ model, ctx: 256, slots: 1, threads: 2, freeRamFloorMiB: 0, parkBudgetMiB: 0, speculative: { mtp: 'off' } });
    open.push(off);
    const r = await off.run({ prompt, maxTokens: 4, ignoreEos: true, sharedPrefix: shared.length });
    expect(r.done.finish).toBe('length');
    expect(() => off.engine.submit({ id: 99, prompt, maxTokens: 1, sharedPrefix: prompt.length + 1 })).toThrow(/sharedPrefix/);
  });
});
