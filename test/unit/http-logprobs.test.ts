// Log-probabilities in OpenAI's shapes, and the chat chunks that carry them (with a choice index).
import { describe, expect, it } from 'vitest';
import { chatLogprobs, completionLogprobs, joinCompletionLogprobs, tokenText } from '../../backend/http/logprob-shapes.js';
import { ChatChunkBuilder, chatCompletionChoices, timingsOf } from '../../backend/http/openai-shapes.js';

const bytes = (s: string) => [...Buffer.from(s)];
const lp = (text: string, logprob: number, alts: Array<[string, number]> = []) => ({
  logprob, bytes: bytes(text), top: alts.map(([t, l], i) => ({ id: i, logprob: l, bytes: bytes(t) })),
});

describe('logprob shapes', () => {
  it('chat entries: token text, bytes, and as many alternatives as asked', () => {
    const out = chatLogprobs([lp('Hi', -0.1, [['Hi', -0.1], ['Ho', -2.5], ['He', -3]])], 2);
    expect(out).toEqual([{
      token: 'Hi', logprob: -0.1, bytes: bytes('Hi'),
      top_logprobs: [{ token: 'Hi', logprob: -0.1, bytes: bytes('Hi') }, { token: 'Ho', logprob: -2.5, bytes: bytes('Ho') }],
    }]);
  });

  it('a token holding part of a UTF-8 character keeps its bytes; its text shows U+FFFD', () => {
    const euro = bytes('€');
    expect(tokenText(euro.slice(0, 2))).toBe('\uFFFD');
    expect(chatLogprobs([{ logprob: -1, bytes: euro.slice(0, 2), top: [] }], 0)[0]!.bytes).toEqual(euro.slice(0, 2));
  });

  it('completions arrays with running text offsets, joined across steps', () => {
    const a = completionLogprobs([lp('The', -1, [['The', -1], ['A', -2]]), lp(' cat', -0.5)], 2, 0);
    expect(a.offset).toBe(7);
    const b = completionLogprobs([lp(' sat', -0.2)], 2, a.offset);
    expect(joinCompletionLogprobs([a.logprobs, b.logprobs])).toEqual({
      tokens: ['The', ' cat', ' sat'], token_logprobs: [-1, -0.5, -0.2],
      top_logprobs: [{ The: -1, A: -2 }, {}, {}], text_offset: [0, 3, 7],
    });
  });
});

describe('chat chunks with logprobs and choices', () => {
  const b = new ChatChunkBuilder('id', 'm', 1, 'fp');
  const entry = chatLogprobs([lp('x', -1)], 0);

  it('puts a step\'s logprobs on its first chunk, or on an empty delta when the text is withheld', () => {
    const chunks = b.deltas([{ type: 'content', text: 'x' }], 2, entry);
    expect(chunks).toHaveLength(1);
    expect(chunks[0]!.choices[0]).toEqual({ index: 2, delta: { content: 'x' }, logprobs: { content: entry }, finish_reason: null });
    const held = b.deltas([], 1, entry);
    expect(held[0]!.choices[0]).toEqual({ index: 1, delta: {}, logprobs: { content: entry }, finish_reason: null });
    expect(b.deltas([], 0, null)).toEqual([]);
    expect(b.finishOnly('length', 1).choices[0]).toEqual({ index: 1, delta: {}, logprobs: null, finish_reason: 'length' });
  });

  it('a whole answer lists its choices by index, with logprobs only when asked', () => {
    const figures = { promptTokens: 3, reused: 0, generated: 4, promptMs: 1, decodeMs: 2, drafted: 5, accepted: 3 };
    const r = chatCompletionChoices({
      id: 'id', model: 'm', created: 1, fingerprint: 'fp', figures,
      choices: [{ content: 'a', calls: [], finish: 'stop', logprobs: entry }, { content: 'b', calls: [], finish: 'length' }],
    });
    expect(r.choices.map((c) => [c.index, c.message.content, c.finish_reason, c.logprobs])).toEqual([
      [0, 'a', 'stop', { content: entry }], [1, 'b', 'length', null],
    ]);
    expect(r.timings.draft_n).toBe(5);
    expect(r.timings.draft_n_accepted).toBe(3);
    expect(timingsOf({ ...figures, drafted: 0 }).draft_n).toBeUndefined();
  });
});
