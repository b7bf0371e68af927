// The figure a context_length_exceeded answer suggests: the --ctx that holds the prompt with room
// to answer (a power of two, at most the training context), and, from what memory can give the
// KV cache, fewer slots or the most it holds.
import { describe, expect, it } from 'vitest';
import { adviseContext, type ContextFacts } from '../../backend/http/context-advice.js';

const MiB = 2 ** 20;
/** A 7B-like model: 56 KiB of KV a token, 4 slots of 4096 tokens now. */
const base: ContextFacts = { promptTokens: 7205, trainCtx: 32_768, slots: 4, pool: 16_384, kvBytesPerToken: 56 * 1024, freeBytes: 8192 * MiB };

describe('adviseContext', () => {
  it('names the power of two that holds the prompt with room to answer, when memory holds it on every slot', () => {
    expect(adviseContext(base)).toEqual({ ctx: 8192, slots: null, text: 'shorten it or start the server with --ctx 8192' });
    // Claude Code's first request: 19K tokens.
    expect(adviseContext({ ...base, promptTokens: 19_000 }).ctx).toBe(32_768);
    // Too close to 8192 to leave room to answer: the next one.
    expect(adviseContext({ ...base, promptTokens: 8000 }).ctx).toBe(16_384);
  });

  it('is at most the training context, and none past it', () => {
    expect(adviseContext({ ...base, promptTokens: 30_000 }).ctx).toBe(32_768);
    expect(adviseContext({ ...base, promptTokens: 40_000 })).toEqual({
      ctx: null, slots: null, text: 'the model was trained for 32768 tokens, so no context holds it: shorten it',
    });
  });

  it('counts the KV the server holds now as memory a restart frees', () => {
    // 4 x 8192 x 56 KiB = 1792 MiB: 896 MiB held now plus 896 MiB free is just enough.
    expect(adviseContext({ ...base, freeBytes: 896 * MiB }).slots).toBeNull();
    expect(adviseContext({ ...base, freeBytes: 895 * MiB }).slots).toBe(3);
  });

  it('asks for fewer slots where memory does not hold the context on all of them', () => {
    expect(adviseContext({ ...base, freeBytes: 0 })).toEqual({
      ctx: 8192, slots: 2,
      text: 'shorten it or start the server with --ctx 8192 --slots 2 (memory holds 8192 tokens on 2 of the 4 slots)',
    });
  });

  it('says what memory holds when not even one slot fits', () => {
    const r = adviseContext({ ...base, promptTokens: 19_000, pool: 4096, slots: 1, freeBytes: 512 * MiB });
    expect(r).toMatchObject({ ctx: null, slots: null });
    expect(r.text).toBe('shorten it: 32768 tokens take 1792 MiB of KV cache and memory holds about 13312 tokens (--kv-type q8_0 halves the KV cache)');
  });

  it('names the figure alone when the memory is not known', () => {
    expect(adviseContext({ ...base, kvBytesPerToken: null }).text).toBe('shorten it or start the server with --ctx 8192');
    expect(adviseContext({ ...base, trainCtx: 0, promptTokens: 100_000, freeBytes: null }).ctx).toBe(131_072);
  });
});
