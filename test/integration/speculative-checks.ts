// Checks the speculative-decoding tests share (engine-speculative-*.test.ts).
import { expect } from 'vitest';
import { type EngineDriver, promptText, type RunResult } from './engine-driver.js';

/**
 * On an engine of one slot and no parked states: three prompts that share a growing part of one
 * opening, each run after the others, so each request reuses part of the slot's last conversation
 * and reads the rest afresh; every answer with drafts is the answer without, and drafting goes on.
 */
export async function expectDraftingThroughPartialReuse(eng: EngineDriver): Promise<void> {
  const shared = eng.tokens(promptText('a shared opening', 8));
  const prompts = ['first ending', 'second ending', 'third'].map((t, i) => [...shared.slice(0, 4 + 3 * i), ...eng.tokens(promptText(t, 5))]);
  const base: RunResult[] = [];
  for (const prompt of prompts) base.push(await eng.run({ prompt, maxTokens: 12, ignoreEos: true, draftMax: 0 }));
  for (const [i, prompt] of prompts.entries()) {
    const r = await eng.run({ prompt, maxTokens: 12, ignoreEos: true });
    expect(r.admitted!.reused, `prompt ${i}: part of it reused`).toBeLessThan(prompt.length - 1);
    expect(r.done.drafted, `prompt ${i}: still drafting`).toBeGreaterThan(0);
    expect(r.ids, `prompt ${i}`).toEqual(base[i]!.ids);
  }
}

/**
 * Six prompts decoded once without drafts, then `rounds` times three at a time with the engine's
 * drafts, in a different grouping each round (the slots' KV is reused and replaced): every answer
 * with drafts is the answer without. Returns the draft tokens verified and accepted over the rounds.
 */
export async function expectSameTokensThreeAtOnce(eng: EngineDriver, rounds: number): Promise<{ runs: number; drafted: number; accepted: number }> {
  const prompts = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'].map((t, i) => eng.tokens(promptText(t, 6 + 3 * i)));
  const base: RunResult[] = [];
  for (const prompt of prompts) base.push(await eng.run({ prompt, maxTokens: 16, ignoreEos: true, draftMax: 0 }));
  expect(base.every((r) => (r.done.drafted ?? 0) === 0)).toBe(true);
  let drafted = 0;
  let accepted = 0;
  for (let round = 0; round < rounds; round++) {
    const order = prompts.map((_, i) => (i + round) % prompts.length);
    for (let g = 0; g < order.length; g += 3) {
      const group = order.slice(g, g + 3);
      const runs = await Promise.all(group.map((i) => eng.run({ prompt: prompts[i]!, maxTokens: 16, ignoreEos: true })));
      runs.forEach((r, k) => {
        expect(r.ids, `round ${round}, prompt ${group[k]}`).toEqual(base[group[k]!]!.ids);
        expect(r.done.accepted ?? 0).toBeLessThanOrEqual(r.done.drafted ?? 0);
        drafted += r.done.drafted ?? 0;
        accepted += r.done.accepted ?? 0;
      });
    }
  }
  return { runs: rounds * prompts.length, drafted, accepted };
}
