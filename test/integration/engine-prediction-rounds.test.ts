// Predicted outputs on the native engine, batched over rounds: a sequence with a prediction drafts
// the prediction's tokens and its own n-grams (where the answer leaves the prediction or the
// prediction's draft stops short); whatever it drafts, its greedy answer is the one without drafts.
// The copy model's logits are often near-tied, so batched runs differ from solo ones by rounding
// unless the CPU math is batch-invariant: `deterministic` (process-wide, so this file of its own).
import { describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { codeLines, type RunResult, withEngine } from './engine-driver.js';

const accepted = (r: RunResult): number => r.done.predictionAccepted ?? -1;

/** A file of similar lines, then its first line again: the copy model goes on from there. */
function copyPrompt(name: string): string {
  const lines = codeLines(10, name);
  return `// file\n${lines.join('\n')}\n\n// again:\n${lines[0]}\n`;
}

describe('a model that copies its context (shape copy), three slots', () => {
  // With KV reuse the rounds also move conversations between slots: a request copies another
  // slot's prefix while a parked conversation is restored into that slot in the same admission
  // round (the copy must be of what the slot held, not of what was restored into it).
  it.each([false, true])('gives the answer without drafts over rounds on three slots, with predictions that follow it, leave it and rejoin it (KV reuse: %s)', async (cachePrompt) => {
    const model = await ensureTestModel({ shape: 'copy' });
    await withEngine({ model, ctx: 1024, slots: 3, threads: 2, deterministic: true }, async (eng) => {
      const prompts = ['total', 'count', 'width'].map((name) => eng.tokens(copyPrompt(name)));
      const plains: RunResult[] = [];
      for (const prompt of prompts) plains.push(await eng.run({ prompt, maxTokens: 48, ignoreEos: true }));
      const variants: ((text: string) => number[] | undefined)[] = [
        (t) => eng.tokens(t),
        (t) => eng.tokens(t.replace(/\d+/, '999')),
        (t) => eng.tokens(t.split('\n').filter((_, i) => i !== 1).join('\n')),
        (t) => eng.tokens(`${t.slice(0, 20)} something else entirely ${t.slice(40)}`),
        () => undefined,
      ];
      let guessed = 0;
      for (let round = 0; round < variants.length; round++) {
        const runs = await Promise.all(prompts.map((prompt, i) => {
          const prediction = variants[(round + i) % variants.length]!(plains[i]!.text);
          return eng.run({ prompt, maxTokens: 48, ignoreEos: true, cachePrompt, ...(prediction ? { prediction } : {}) });
        }));
        runs.forEach((r, i) => expect(r.ids, `round ${round}, prompt ${i}`).toEqual(plains[i]!.ids));
        for (const r of runs) guessed += (r.done.accepted ?? 0) - accepted(r);
      }
      expect(guessed).toBeGreaterThan(0);
    });
  });
});
