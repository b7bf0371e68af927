// Batched == solo with `deterministic` on the arm64 engine (the Arm CPU kernels): q8_0 weights,
// 4 slots, 6 prompts of 20 to 89 tokens read alone and then all at once (the last two wait for a
// slot), 16 greedy tokens each; emitted ids and logprobs must be bit for bit the solo run's. The
// suite's version of test/integration/engine-exactness.test.ts, cut to what emulation runs in
// minutes (every engine step there is 10-30 times slower). STRATA_EXACT_CPU_VARIANT runs it on
// another Arm variant of the build (default: the probe's; qemu-user's CPU can run them all).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { EngineDriver } from '../integration/engine-driver.js';

const TOKENS = 16;
const CPU_VARIANT = process.env.STRATA_EXACT_CPU_VARIANT ?? 'auto';

function prompts(count: number, vocab: number): number[][] {
  let seed = 1;
  const next = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return 100 + (seed % (vocab - 200)); };
  return Array.from({ length: count }, (_, i) => Array.from({ length: 20 + ((i * 23) % 70) }, next));
}

interface Out { ids: number[]; lps: number[] }

async function run(eng: EngineDriver, prompt: number[]): Promise<Out> {
  const r = await eng.run({ prompt, maxTokens: TOKENS, ignoreEos: true, logprobs: 0, cachePrompt: false });
  expect(r.done.finish).toBe('length');
  const lps: number[] = [];
  for (const e of r.events) if (e.type === 'tokens') for (const l of e.logprobs ?? []) lps.push(l.logprob);
  return { ids: r.ids, lps };
}

describe(`deterministic on linux-arm64, q8_0 weights, 4 slots, CPU variant ${CPU_VARIANT}`, () => {
  let eng: EngineDriver;
  beforeAll(async () => {
    const model = await ensureTestModel({ quant: 'q8_0' });
    eng = await EngineDriver.load({ model, slots: 4, ctx: 256, threads: 2, parkBudgetMiB: 0, deterministic: true, cpuVariant: CPU_VARIANT });
    eng.waitMs = 600_000;
  });
  afterAll(async () => { await eng?.close(); });

  it('gives the solo tokens and logprobs when the prompts are batched', async () => {
    expect(eng.engine.info.cpu.deterministic).toBe(15);
    const ps = prompts(6, eng.engine.info.vocabSize);
    const solo: Out[] = [];
    for (const p of ps) solo.push(await run(eng, p));
    const together = await Promise.all(ps.map((p) => run(eng, p)));
    expect(together.map((o) => o.ids)).toEqual(solo.map((o) => o.ids));
    for (const [i, o] of together.entries()) {
      expect(o.lps).toHaveLength(TOKENS);
      expect(o.lps.every((v, j) => Object.is(v, solo[i]!.lps[j]))).toBe(true);
    }
    // Six different prompts gave six different outputs: the check compares real decodes.
    expect(new Set(together.map((o) => o.ids.join())).size).toBe(6);
  });
});
