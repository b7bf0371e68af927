// Conversation cache of the native Engine (real tiny model, greedy): prefix reuse with exact
// counts, the slot-choice rules (owner, shared system prompt, busy slots), parking to host RAM
// and restoring with bit-identical output, budget eviction and the free-RAM floor.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { EngineDriver, promptText } from './engine-driver.js';

let model = '';
const open: EngineDriver[] = [];

async function engine(opts: { slots: number; parkBudgetMiB?: number; freeRamFloorMiB?: number }): Promise<EngineDriver> {
  const d = await EngineDriver.load({ model, ctx: 512, threads: 2, freeRamFloorMiB: 0, parkBudgetMiB: 64, ...opts });
  open.push(d);
  return d;
}

beforeAll(async () => {
  model = await ensureTestModel({});
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((d) => d.close()));
});

describe('prefix reuse', () => {
  it('a follow-up reuses exactly the prompt and output tokens the slot holds', async () => {
    const eng = await engine({ slots: 2 });
    const prompt = eng.tokens(promptText('followup', 16));
    const first = await eng.run({ prompt, maxTokens: 8, ignoreEos: true });
    expect(first.admitted).toMatchObject({ reused: 0, restored: false });
    // The slot holds the prompt and every generated token but the last (sampled, never decoded).
    const held = [...prompt, ...first.ids.slice(0, -1)];
    expect(eng.engine.snapshot().slots[first.admitted!.slot]!.heldTokens).toBe(held.length);

    const followup = [...prompt, ...first.ids, ...eng.tokens(' and then?')];
    const second = await eng.run({ prompt: followup, maxTokens: 4, ignoreEos: true });
    expect(second.admitted).toMatchObject({ slot: first.admitted!.slot, reused: held.length, restored: false });
    expect(second.done.reused).toBe(held.length);
    const stats = eng.engine.snapshot().totals;
    expect(stats.reusedTokens).toBe(held.length);

    // A prompt the slot holds entirely still evaluates its last token (logits are needed).
    const again = await eng.run({ prompt: followup, maxTokens: 1, ignoreEos: true });
    expect(again.admitted!.reused).toBe(followup.length - 1);
    expect(again.ids).toEqual(second.ids.slice(0, 1));
  });

  it('gives the same follow-up output as a fresh engine reading the whole prompt', async () => {
    const a = await engine({ slots: 2 });
    const prompt = a.tokens(promptText('fresh', 16));
    const first = await a.run({ prompt, maxTokens: 8, ignoreEos: true });
    const followup = [...prompt, ...first.ids, ...a.tokens(' next')];
    const cached = await a.run({ prompt: followup, maxTokens: 12, ignoreEos: true });
    expect(cached.admitted!.reused).toBeGreaterThan(0);
    const b = await engine({ slots: 2 });
    const fresh = await b.run({ prompt: followup, maxTokens: 12, ignoreEos: true });
    expect(fresh.admitted!.reused).toBe(0);
    expect(cached.ids).toEqual(fresh.ids);
  });
});

describe('slot choice', () => {
  it('a shared system prompt names no owner: new chats take empty slots (copying the prefix), then the least recently used', async () => {
    const eng = await engine({ slots: 3 });
    const system = eng.tokens(promptText('system prompt shared by every chat', 48));
    expect(system.length).toBeGreaterThan(40);
    const chat = (tag: string) => [...system, ...eng.tokens(` ${promptText(tag, 6)}`)];
    const a = await eng.run({ prompt: chat('alpha'), maxTokens: 4, ignoreEos: true });
    expect(a.admitted!.reused).toBe(0);
    // beta shares only the system prompt with alpha: it gets its own slot, and the system
    // prompt's KV is copied from alpha's slot rather than read again.
    const b = await eng.run({ prompt: chat('beta'), maxTokens: 4, ignoreEos: true });
    expect(b.admitted!.slot).not.toBe(a.admitted!.slot);
    expect(b.admitted!.reused).toBe(system.length);
    const c = await eng.run({ prompt: chat('gamma'), maxTokens: 4, ignoreEos: true });
    expect(new Set([a.admitted!.slot, b.admitted!.slot, c.admitted!.slot]).size).toBe(3);
    expect(c.admitted!.reused).toBe(system.length);

    // All slots hold a chat now: no owner, so the least recently used (alpha's) is taken and
    // keeps the system prompt it shares.
    const d = await eng.run({ prompt: chat('delta'), maxTokens: 4, ignoreEos: true });
    expect(d.admitted!.slot).toBe(a.admitted!.slot);
    expect(d.admitted!.reused).toBe(system.length);

    // beta's follow-up goes to beta's slot (its owner), reusing all it holds.
    const bFollow = [...chat('beta'), ...b.ids, ...eng.tokens(' more')];
    const b2 = await eng.run({ prompt: bFollow, maxTokens: 2, ignoreEos: true });
    expect(b2.admitted).toMatchObject({ slot: b.admitted!.slot, reused: chat('beta').length + b.ids.length - 1 });

    // The copied prefix gives the same output as reading it: compare with a fresh engine.
    const ref = await engine({ slots: 1 });
    const cRef = await ref.run({ prompt: chat('gamma'), maxTokens: 4, ignoreEos: true });
    expect(cRef.admitted!.reused).toBe(0);
    expect(c.ids).toEqual(cRef.ids);
  });

  it('never takes a busy slot, even the one holding the prompt', async () => {
    const eng = await engine({ slots: 2 });
    const prompt = eng.tokens(promptText('busy', 40));
    const first = await eng.run({ prompt, maxTokens: 4, ignoreEos: true });
    const slot = first.admitted!.slot;
    const conversation = [...prompt, ...first.ids];
    // Occupy that slot with a long continuation of the same conversation...
    const long = eng.start({ prompt: conversation, maxTokens: 400, ignoreEos: true });
    await eng.next((e) => e.type === 'tokens' && e.id === long.id, 'the long request decoding');
    expect(eng.eventsOf(long.id).find((e) => e.type === 'admitted')).toMatchObject({ slot, reused: conversation.length - 1 });
    // ...then the same prompt again must go elsewhere (its KV copied from the busy slot).
    const other = await eng.run({ prompt: conversation, maxTokens: 3, ignoreEos: true });
    expect(other.admitted!.slot).not.toBe(slot);
    expect(other.admitted!.reused).toBe(conversation.length - 1);
    eng.engine.cancel(long.id);
    const longRun = await long.done;
    expect(longRun.done.finish).toBe('cancel');
    // Greedy from the same prompt: both continue identically.
    expect(longRun.ids.slice(0, 3)).toEqual(other.ids);
  });
});

describe('parking', () => {
  async function conversations(eng: EngineDriver) {
    const prompts = ['parked one', 'second talk', 'third talk'].map((t) => eng.tokens(promptText(t, 16)));
    const outs = [];
    for (const prompt of prompts) outs.push(await eng.run({ prompt, maxTokens: 10, ignoreEos: true }));
    return { prompts, outs };
  }

  it('parks a displaced conversation and restores it with the same output as never parked', async () => {
    const eng = await engine({ slots: 2 });
    const { prompts, outs } = await conversations(eng);
    const held = prompts[0]!.length + outs[0]!.ids.length - 1;
    // The third conversation displaced the first (least recently used): it is parked.
    const snap = eng.engine.snapshot();
    expect(snap.park.entries.map((e) => e.tokens)).toEqual([held]);
    expect(snap.park.bytes).toBeGreaterThan(0);

    const followup = [...prompts[0]!, ...outs[0]!.ids, ...eng.tokens(' tell me more')];
    const restored = await eng.run({ prompt: followup, maxTokens: 16, ignoreEos: true });
    expect(restored.admitted).toMatchObject({ restored: true, reused: held });
    expect(eng.engine.snapshot().park.hits).toBe(1);

    // The same conversation on an engine where it was never displaced.
    const ref = await engine({ slots: 2 });
    const refFirst = await ref.run({ prompt: prompts[0]!, maxTokens: 10, ignoreEos: true });
    expect(refFirst.ids).toEqual(outs[0]!.ids);
    const never = await ref.run({ prompt: followup, maxTokens: 16, ignoreEos: true });
    expect(never.admitted).toMatchObject({ restored: false, reused: held });
    expect(restored.ids).toEqual(never.ids);
    expect(restored.text).toBe(never.text);
  });

  it('parks nothing with a zero budget, and reads the prompt again', async () => {
    const eng = await engine({ slots: 2, parkBudgetMiB: 0 });
    const { prompts, outs } = await conversations(eng);
    expect(eng.engine.snapshot().park).toMatchObject({ entries: [], budget: 0 });
    const followup = [...prompts[0]!, ...outs[0]!.ids, ...eng.tokens(' again')];
    const r = await eng.run({ prompt: followup, maxTokens: 2, ignoreEos: true });
    expect(r.admitted).toMatchObject({ restored: false, reused: 0 });
  });

  it('refuses to park below the free-RAM floor and counts it', async () => {
    const eng = await engine({ slots: 2, freeRamFloorMiB: 1 << 24 });
    await conversations(eng);
    const park = eng.engine.snapshot().park;
    expect(park.entries).toEqual([]);
    expect(park.refusedLowRam).toBeGreaterThanOrEqual(1);
  });

  it('evicts the least recently parked conversation to stay within budget', async () => {
    const probe = await engine({ slots: 2 });
    await conversations(probe);
    const entry = probe.engine.snapshot().park.entries[0]!;
    // Room for one parked conversation, not two.
    const eng = await engine({ slots: 2, parkBudgetMiB: (entry.bytes * 1.5) / (1024 * 1024) });
    const { prompts } = await conversations(eng);
    const fourth = await eng.run({ prompt: eng.tokens(promptText('fourth talk', 16)), maxTokens: 10, ignoreEos: true });
    expect(fourth.done.finish).toBe('length');
    const park = eng.engine.snapshot().park;
    expect(park.evictions).toBe(1);
    expect(park.entries).toHaveLength(1);
    expect(park.bytes).toBeLessThanOrEqual(park.budget);
    // The survivor is the second conversation (displaced last), not the first.
    const r = await eng.run({ prompt: [...prompts[0]!, ...eng.tokens(' x')], maxTokens: 1, ignoreEos: true });
    expect(r.admitted!.restored).toBe(false);
  });
});
