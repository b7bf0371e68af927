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
