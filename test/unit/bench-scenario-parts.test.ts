// The pure parts of the typing, conversations and fairness machinery: the editor window a
// keystroke sends, the fewest prompt tokens a perfect cache would read, and which tokens are
// banned because they are not valid UTF-8 alone.
import { describe, expect, it } from 'vitest';
import { minimumPromptTokens } from '../../backend/bench/scenarios/conversations.js';
import { typingWindow } from '../../backend/bench/scenarios/typing.js';
import { invalidUtf8Tokens } from '../../backend/bench/utf8-tokens.js';

describe('typing window', () => {
  const file = ['a0', 'a1', 'a2', 'a3', 'a4', 'a5'];

  it('sends the lines before the cursor, the typed line as prompt, and the lines after', () => {
    expect(typingWindow(file, 3, 'x = 1', 2, 2)).toEqual({ prefix: 'a1\na2\n', prompt: 'x = 1', suffix: '\na3\na4\n' });
  });

  it('Enter moves typed lines into the prefix, whose window drops its top line', () => {
    expect(typingWindow(file, 3, 'x = 1\ny', 2, 2)).toEqual({ prefix: 'a2\nx = 1\n', prompt: 'y', suffix: '\na3\na4\n' });
    // Until then the prefix stays byte for byte the same while the line grows: keystrokes can reuse its KV.
    expect(typingWindow(file, 3, 'x', 3, 1).prefix).toBe(typingWindow(file, 3, 'x = 12', 3, 1).prefix);
  });

  it('at the ends of the file', () => {
    expect(typingWindow(file, 0, 'q', 4, 1)).toEqual({ prefix: '', prompt: 'q', suffix: '\na0\n' });
    expect(typingWindow(file, 6, 'q', 1, 3)).toEqual({ prefix: 'a5\n', prompt: 'q', suffix: '\n' });
  });
});

describe('minimum prompt tokens', () => {
  it('counts each token once: what no earlier prompt or answer began with', () => {
    const sys = [1, 2, 3];
    const u1t1 = [...sys, 10, 11];
    const u2t1 = [...sys, 20, 21, 22];
    const u1t2 = [...u1t1, 90, 91, 12];   // after the answer 90 91, a new question 12
    const seen = [[u1t1, [...u1t1, 90, 91]], [u2t1, [...u2t1, 80]], [u1t2, [...u1t2, 70]]];
    // u1t1: all 5; u2t1: 3 new after the shared system prompt; u1t2: only 12 after the answer.
    expect(minimumPromptTokens([u1t1, u2t1, u1t2], seen)).toBe(5 + 3 + 1);
  });
});

describe('tokens not valid UTF-8 alone', () => {
  // GPT-2 byte-level pieces: 'Ġ' is the space byte, 'Ã' 0xC3 (a lead byte alone), 'Ã©' 0xC3 0xA9 (é).
  it('byte-level BPE: fragments of a character, not whole characters or added tokens', () => {
    const tokens = ['hello', 'Ġworld', 'Ã', 'Ã©', '©', '<|fim_prefix|>'];
    const types = [1, 1, 1, 1, 1, 4];
    expect(invalidUtf8Tokens('gpt2', tokens, types)).toEqual([2, 4]);
  });

  it('SentencePiece: byte tokens from 0x80 up', () => {
    const tokens = ['<unk>', '<0x0A>', '<0x80>', '<0xE2>', '▁the', '<0xFF>'];
    const types = [2, 6, 6, 6, 1, 6];
    expect(invalidUtf8Tokens('llama', tokens, types)).toEqual([2, 3, 5]);
  });

  it('other tokenizers: nothing known to ban', () => {
    expect(invalidUtf8Tokens('bert', ['a'], null)).toBeNull();
  });
});
