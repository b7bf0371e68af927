// The KV pool the slots share when no ctx is given (llama's kv_unified): one sequence may use the
// whole pool, two whose sum is over a slot's share but within the pool both finish, a prompt that
// does not fit waits for cells rather than failing, a copied prefix counts once, and a pool that
// fills up while sequences decode ends the request admitted last with context_full while the other
// goes on untouched.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { EngineDriver } from './engine-driver.js';

let model = '';
const open: EngineDriver[] = [];

/** Two slots sharing the training context of a tiny model trained for 512 tokens. */
async function engine(opts: { ctx?: number } = {}): Promise<EngineDriver> {
  const d = await EngineDriver.load({ model, slots: 2, threads: 2, parkBudgetMiB: 0, ...opts });
  open.push(d);
  return d;
}

/** A prompt of n token ids, distinct per tag (ids well inside the vocabulary). */
function prompt(n: number, tag: number): number[] {
  return Array.from({ length: n }, (_, i) => 200 + ((i * 7919 + tag * 104_729) % 5000));
}

beforeAll(async () => {
  model = await ensureTestModel({ ctxTrain: 512 });
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((d) => d.close()));
});

describe('the pool the slots share', () => {
  it('is the default without ctx; ctx keeps a context per slot', async () => {
    const shared = await engine();
    expect(shared.engine.info).toMatchObject({ kvUnified: true, ctxPool: 512, ctx: 512, slots: 2, trainCtx: 512 });
    const perSlot = await engine({ ctx: 256 });
    expect(perSlot.engine.info).toMatchObject({ kvUnified: false, ctxPool: 512, ctx: 256, slots: 2 });
  });

  it('holds two sequences whose sum is over a slot\'s share (256) but within the pool', async () => {
    const eng = await engine();
    const long = eng.start({ prompt: prompt(350, 1), maxTokens: 24, ignoreEos: true });
    await eng.next((e) => e.type === 'tokens' && e.id === long.id, 'the long sequence decoding');
    const short = await eng.run({ prompt: prompt(120, 2), maxTokens: 8, ignoreEos: true });
    const done = await long.done;
    expect(done.done).toMatchObject({ finish: 'length', generated: 24 });
    expect(short.done).toMatchObject({ finish: 'length', generated: 8 });
  });

  it('lets a prompt that does not fit wait for the cells another holds, then read it', async () => {
    const eng = await engine();
    const first = eng.start({ prompt: prompt(400, 3), maxTokens: 40, ignoreEos: true });
    await eng.next((e) => e.type === 'tokens' && e.id === first.id, 'the first sequence decoding');
    // 150 more cells than the 111 left: it waits, admitted, until the first ends.
    const second = eng.start({ prompt: prompt(150, 4), maxTokens: 8, ignoreEos: true });
    const [a, b] = await Promise.all([first.done, second.done]);
    expect(a.done).toMatchObject({ finish: 'length', generated: 40 });
    expect(b.done).toMatchObject({ finish: 'length', generated: 8 });
    const firstDone = eng.all.findIndex((e) => e.type === 'done' && e.id === first.id);
    const secondRead = eng.all.findIndex((e) => e.type === 'progress' && e.id === second.id);
    expect(secondRead).toBeGreaterThan(firstDone);
  });

  it('counts a prefix copied from another slot once: choices of one prompt, a prompt that shares a busy slot\'s prefix', async () => {
    const eng = await engine();
    // Two choices of a 300-token prompt: 600 cells if each had its own copy, 300 shared.
    const two = await eng.run({ prompt: prompt(300, 8), maxTokens: 8, ignoreEos: true, n: 2 });
    expect(two.done).toMatchObject({ finish: 'length' });
    expect(two.done.error).toBeUndefined();
    // A second request copies the 300-token prefix of a running one: it starts at once, not after it.
    const shared = prompt(300, 9);
    const first = eng.start({ prompt: [...shared, ...prompt(20, 10)], maxTokens: 120, ignoreEos: true });
    await eng.next((e) => e.type === 'tokens' && e.id === first.id, 'the first sequence decoding');
    const second = await eng.run({ prompt: [...shared, ...prompt(30, 11)], maxTokens: 8, ignoreEos: true });
    expect(second.admitted).toMatchObject({ reused: 300 });
    expect(second.done).toMatchObject({ finish: 'length', generated: 8 });
    expect(eng.all.some((e) => e.type === 'done' && e.id === first.id)).toBe(false);
    expect((await first.done).done).toMatchObject({ finish: 'length', generated: 120 });
  });

  it('ends the request admitted last with context_full when decoding fills it; the other is untouched', async () => {
    const eng = await engine();
    const first = eng.start({ prompt: prompt(150, 5), maxTokens: 200, ignoreEos: true });
    await eng.next((e) => e.type === 'tokens' && e.id === first.id, 'the first sequence decoding');
    // Both fit to start (300 of 512 cells); together they would need 800.
    const second = eng.start({ prompt: prompt(150, 6), maxTokens: 300, ignoreEos: true });
    const [a, b] = await Promise.all([first.done, second.done]);
    expect(b.done).toMatchObject({ finish: 'error', errorCode: 'context_full' });
    expect(b.done.error).toMatch(/the context the slots share is full \(512 tokens/);
    expect(b.done.generated).toBeGreaterThan(0);
    expect(a.done).toMatchObject({ finish: 'length', generated: 200 });
    expect(a.done.error).toBeUndefined();
    expect(a.ids).toHaveLength(200);
    // Its cells went back to the pool: a request after it runs.
    const after = await eng.run({ prompt: prompt(150, 7), maxTokens: 4, ignoreEos: true });
    expect(after.done).toMatchObject({ finish: 'length', generated: 4 });
  });
});
