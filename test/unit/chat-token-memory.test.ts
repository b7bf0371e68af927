// The token memory (chat/token-memory.ts) and tokenizeChatPrompt with it: a prompt that starts with
// a remembered text starts with its tokens and only the rest is tokenized; never across a special
// token's text in the template's part; BOS kinds kept apart; bounded, least recently used out;
// a saved session's held text restores what it knew.
import { describe, expect, it } from 'vitest';
import type { PromptSegment } from '../../native/lib/addon.js';
import { tokenizeChatPrompt, type RenderedPrompt } from '../../backend/chat/chat-prompt.js';
import { ClientTextGuard } from '../../backend/chat/client-text.js';
import { segmentsFrom, TokenMemory } from '../../backend/chat/token-memory.js';
import { heldTextIn, heldTextOf, rememberHeld } from '../../backend/sessions/held-text.js';

const guard = new ClientTextGuard(['<|im_start|>', '<|im_end|>']);
const prompt = (segments: PromptSegment[], addSpecial = true): RenderedPrompt => ({ text: segments.map((s) => s.text).join(''), segments, addSpecial });

/** A tokenizer that records what it was asked: one token per character. */
function recorder() {
  const calls: Array<{ segments: PromptSegment[]; addSpecial: boolean }> = [];
  return {
    calls,
    tokenizeSegments: async (segments: PromptSegment[], addSpecial: boolean) => {
      calls.push({ segments, addSpecial });
      return [...(addSpecial ? [1] : []), ...segments.flatMap((s) => [...s.text].map((c) => c.charCodeAt(0)))];
    },
  };
}

describe('TokenMemory', () => {
  it('starts a prompt with the tokens of the longest remembered text it starts with; the rest is tokenized', async () => {
    const m = new TokenMemory(guard, true);
    m.remember('<|im_start|>user\nhi', [1, 7, 8, 9], true);
    m.remember('<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nyo', [1, 7, 8, 9, 10, 11, 12], true);
    const p = prompt([{ text: '<|im_start|>user\n' }, { text: 'hi', plain: true }, { text: '<|im_end|>\n<|im_start|>assistant\n' }, { text: 'yo', plain: true }, { text: '<|im_end|>\n' }]);
    const t = recorder();
    expect(await tokenizeChatPrompt(t, p, m)).toEqual([1, 7, 8, 9, 10, 11, 12, ...[...'<|im_end|>\n'].map((c) => c.charCodeAt(0))]);
    expect(t.calls).toEqual([{ segments: [{ text: '<|im_end|>\n' }], addSpecial: false }]);
    // Without a match: the whole prompt, as without memory.
    const other = prompt([{ text: 'x' }]);
    const t2 = recorder();
    expect(await tokenizeChatPrompt(t2, other, m)).toEqual([1, 120]);
    expect(t2.calls).toEqual([{ segments: [{ text: 'x' }], addSpecial: true }]);
  });

  it('never cuts inside a special token the template wrote; inside client text is fine', () => {
    const m = new TokenMemory(guard, false);
    m.remember('a<|im_', [5, 6, 7], false);
    expect(m.find(prompt([{ text: 'a<|im_end|>' }], false))).toBeNull();
    expect(m.find(prompt([{ text: 'a' }, { text: '<|im_end|>', plain: true }], false))?.length).toBe(6);
  });

  it('keeps prompts whose tokens start with a BOS their text does not hold apart from those without', () => {
    const m = new TokenMemory(guard, true);
    m.remember('hello', [1, 2], true);
    expect(m.find(prompt([{ text: 'hello world' }], false))).toBeNull();
    expect(m.find(prompt([{ text: 'hello world' }], true))?.tokens).toEqual(Int32Array.from([1, 2]));
    // A vocabulary that adds no BOS: addSpecial changes nothing.
    const plain = new TokenMemory(guard, false);
    plain.remember('hello', [2], false);
    expect(plain.find(prompt([{ text: 'hello world' }], true))?.tokens).toEqual(Int32Array.from([2]));
  });

  it('is bounded by entries and tokens, least recently used first out', () => {
    const m = new TokenMemory(guard, false, { entries: 2, tokens: 10 });
    m.remember('a', [1], false);
    m.remember('b', [2], false);
    expect(m.find(prompt([{ text: 'a!' }], false))).not.toBeNull(); // a is now the most recent
    m.remember('c', [3], false);
    expect(m.size).toBe(2);
    expect(m.find(prompt([{ text: 'b!' }], false))).toBeNull();
    expect(m.find(prompt([{ text: 'a!' }], false))).not.toBeNull();
    m.remember('d', Array.from({ length: 10 }, (_, i) => i), false);
    expect(m.size).toBe(1);
    m.remember('e', Array.from({ length: 11 }, (_, i) => i), false); // larger than the whole budget: not kept
    expect(m.find(prompt([{ text: 'e' }], false))).toBeNull();
  });

  it('segmentsFrom splits the segment the cut falls in and keeps plain marks', () => {
    const segs: PromptSegment[] = [{ text: 'ab' }, { text: 'cd', plain: true }, { text: 'ef' }];
    expect(segmentsFrom(segs, 3)).toEqual([{ text: 'd', plain: true }, { text: 'ef' }]);
    expect(segmentsFrom(segs, 4)).toEqual([{ text: 'ef' }]);
    expect(segmentsFrom(segs, 6)).toEqual([]);
  });
});

describe('held text of a saved session (sessions/held-text.ts)', () => {
  it('remembers the longest cut the restored tokens begin with exactly, never one whose tokens differ', () => {
    const text = 'abcdefgh';
    const tokens = [1, 2, 3, 4, 5];
    const held = heldTextIn(JSON.stringify({ model: {}, held_text: heldTextOf(text, false, tokens, { chars: 5, tokens: 3 }) }))!;
    expect(held.cuts.map((c) => [c.chars, c.tokens])).toEqual([[5, 3], [8, 5]]);
    // The slot held all of it: the whole text.
    const all = new TokenMemory(guard, false);
    expect(rememberHeld(all, held, [1, 2, 3, 4, 5, 9])).toBe(true);
    expect(all.find(prompt([{ text: 'abcdefgh!' }], false))?.tokens).toEqual(Int32Array.from([1, 2, 3, 4, 5]));
    // It held the remembered answer only.
    const part = new TokenMemory(guard, false);
    expect(rememberHeld(part, held, [1, 2, 3, 7])).toBe(true);
    expect(part.find(prompt([{ text: 'abcdefgh!' }], false))).toEqual({ length: 5, tokens: Int32Array.from([1, 2, 3]) });
    // Other tokens: nothing.
    expect(rememberHeld(new TokenMemory(guard, false), held, [1, 2, 4, 4, 5])).toBe(false);
    expect(heldTextIn('{"model": {}}')).toBeNull();
    expect(heldTextIn('not json')).toBeNull();
  });
});
