import { describe, expect, it } from 'vitest';
import { codeLines, makeNonce, PromptSizer, proseWords, seededRandom, seedOf } from '../../backend/bench/prompts.js';

/** A stand-in tokenizer for sizing logic: one token per 4 characters, rounded up. */
const byChars = async (text: string) => Math.ceil(text.length / 4);

describe('bench prompts', () => {
  it('generates the same text for the same seed and different text for another', () => {
    expect(proseWords(7, 50)).toBe(proseWords(7, 50));
    expect(proseWords(7, 50)).not.toBe(proseWords(8, 50));
    expect(proseWords(7, 50).split(' ')).toHaveLength(50);
    expect(proseWords(7, 50).endsWith('.')).toBe(true);
    expect(codeLines(3, 30)).toEqual(codeLines(3, 30));
    expect(codeLines(3, 30)).toHaveLength(30);
  });

  it('nonces differ between seeds and repeat for one seed', () => {
    const a = makeNonce(seededRandom(seedOf('x/0')));
    expect(a).toBe(makeNonce(seededRandom(seedOf('x/0'))));
    expect(a).not.toBe(makeNonce(seededRandom(seedOf('x/1'))));
    expect(a).toMatch(/^\[run [0-9a-z]{12}\]$/);
  });

  it('fits prose to a target with an exact counter (one correction)', async () => {
    const sizer = await PromptSizer.calibrate(byChars, true);
    for (const target of [64, 512, 2048, 8192]) {
      const t = await sizer.prose(target, seedOf(`t${target}`), '[run abcdefghijkl]');
      expect(t.exact).toBe(true);
      const counted = await byChars(t.text);
      expect(Math.abs(t.tokens - counted)).toBeLessThanOrEqual(2);
      expect(Math.abs(counted - target) / target).toBeLessThan(0.03);
      expect(t.text.startsWith('[run abcdefghijkl] ')).toBe(true);
    }
  });

  it('estimates from the calibration ratio without an exact counter', async () => {
    const sizer = await PromptSizer.calibrate(byChars, false);
    expect(sizer.exact).toBe(false);
    const t = await sizer.prose(1000, 1);
    expect(t.exact).toBe(false);
    expect(Math.abs((await byChars(t.text)) - 1000) / 1000).toBeLessThan(0.1);
    expect(sizer.linesFor(sizer.tokensPerLine * 10)).toBe(10);
  });

  it('counts each body once: a new nonce reuses the sized body', async () => {
    let calls = 0;
    const sizer = await PromptSizer.calibrate(async (t) => { calls++; return byChars(t); }, true);
    const before = calls;
    const a = await sizer.prose(300, 5, '[run aaaaaaaaaaaa]');
    const afterFirst = calls;
    const b = await sizer.prose(300, 5, '[run bbbbbbbbbbbb]');
    expect(afterFirst).toBeGreaterThan(before);
    expect(calls).toBe(afterFirst);
    expect(a.text.slice(19)).toBe(b.text.slice(19));
    expect(a.text).not.toBe(b.text);
  });

  it('rejects non-positive ratios', () => {
    expect(() => new PromptSizer(0, 1, 0, null)).toThrow(/positive/);
  });
});
