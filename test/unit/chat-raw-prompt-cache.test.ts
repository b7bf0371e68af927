// The raw prompt cache (chat/raw-prompt-cache.ts) and tokenizeRawPrompt with it: the same text
// again is answered without the tokenizer and with its tokens; a text that only starts with a
// cached one is tokenized whole; bounded by texts and characters, least recently used out.
import { describe, expect, it } from 'vitest';
import { tokenizeRawPrompt } from '../../backend/chat/chat-prompt.js';
import { RawPromptCache } from '../../backend/chat/raw-prompt-cache.js';

/** A tokenizer that records what it was asked: BOS (1) when asked to add it, then one token per character. */
function recorder() {
  const calls: Array<{ text: string; addSpecial: boolean; parseSpecial: boolean }> = [];
  return {
    calls,
    tokenize: async (text: string, addSpecial: boolean, parseSpecial: boolean) => {
      calls.push({ text, addSpecial, parseSpecial });
      return [...(addSpecial ? [1] : []), ...[...text].map((c) => c.charCodeAt(0))];
    },
  };
}

describe('tokenizeRawPrompt with a RawPromptCache', () => {
  it('answers a text seen before from the cache, with the tokens the tokenizer gave', async () => {
    const t = recorder();
    const model = { bosText: '<s>', rawPrompts: new RawPromptCache() };
    const first = await tokenizeRawPrompt(t, model, 'hello world');
    const again = await tokenizeRawPrompt(t, model, 'hello world');
    expect(again).toEqual(first);
    expect(first).toEqual([1, ...[...'hello world'].map((c) => c.charCodeAt(0))]);
    expect(t.calls).toEqual([{ text: 'hello world', addSpecial: true, parseSpecial: true }]);
    // A returned array is the caller's own: changing it does not change the cache.
    again.push(99);
    expect(await tokenizeRawPrompt(t, model, 'hello world')).toEqual(first);
  });

  it('tokenizes a text that only starts with a cached one whole (a cut can merge differently)', async () => {
    const t = recorder();
    const model = { bosText: '', rawPrompts: new RawPromptCache() };
    await tokenizeRawPrompt(t, model, 'abc');
    await tokenizeRawPrompt(t, model, 'abcdef');
    expect(t.calls.map((c) => c.text)).toEqual(['abc', 'abcdef']);
  });

  it('tokenizes every time without a cache', async () => {
    const t = recorder();
    await tokenizeRawPrompt(t, { bosText: '' }, 'x');
    await tokenizeRawPrompt(t, { bosText: '' }, 'x');
    expect(t.calls).toHaveLength(2);
  });
});

describe('RawPromptCache', () => {
  it('keeps at most `entries` texts, the least recently used leaving first', () => {
    const c = new RawPromptCache({ entries: 2, chars: 1000 });
    c.put('a', [1]);
    c.put('b', [2]);
    expect(c.get('a')).toEqual([1]); // a is now the most recent
    c.put('c', [3]);
    expect(c.get('b')).toBeNull();
    expect(c.get('a')).toEqual([1]);
    expect(c.get('c')).toEqual([3]);
    expect(c.size).toBe(2);
  });

  it('keeps at most `chars` characters together and never a text longer than that', () => {
    const c = new RawPromptCache({ entries: 10, chars: 10 });
    c.put('12345', [1]);
    c.put('67890', [2]);
    c.put('abc', [3]);
    expect(c.get('12345')).toBeNull();
    expect(c.get('67890')).toEqual([2]);
    c.put('x'.repeat(11), [4]);
    expect(c.get('x'.repeat(11))).toBeNull();
    expect(c.size).toBe(2);
  });

  it('replaces a text put again without counting it twice', () => {
    const c = new RawPromptCache({ entries: 10, chars: 10 });
    c.put('12345', [1]);
    c.put('12345', [5]);
    c.put('67890', [2]);
    expect(c.get('12345')).toEqual([5]);
    expect(c.get('67890')).toEqual([2]);
  });
});
