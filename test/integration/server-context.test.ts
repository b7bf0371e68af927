// The context a server gives without --ctx: a model's whole training context, one pool the slots
// share, so a coding agent's first request (8K tokens) is read while another request runs; a pool
// that fills up ends the request admitted last with a 503 context_full; a prompt that no context
// holds gets a 400 naming the --ctx that would; and --max-output-tokens bounds answers that set no
// max_tokens while a request's own max_tokens wins.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { json, startServer, stream, tempDir, type Running } from './server-helpers.js';

/** Text of about n tokens (the qwen2 tokenizer reads each " wN" as two tokens). */
const longText = (n: number): string => Array.from({ length: Math.ceil(n / 2) }, (_, i) => `w${i % 9}`).join(' ');
/** A prompt of n token ids, distinct per tag. */
const ids = (n: number, tag: number): number[] => Array.from({ length: n }, (_, i) => 200 + ((i * 7919 + tag * 104_729) % 5000));

describe('without --ctx, on a model trained for 32K tokens', () => {
  let srv: Running;
  beforeAll(async () => {
    srv = await startServer(await ensureTestModel({ ctxTrain: 32_768 }), { ctx: null, slots: 2 });
  }, 300_000);
  afterAll(async () => { await srv?.close(); });

  it('gives a request the training context, in one pool the slots share', async () => {
    const { body } = await json(srv.port, 'GET', '/v1/models');
    expect(body.data[0].meta).toMatchObject({ n_ctx: 32_768, n_ctx_train: 32_768, n_ctx_pool: 32_768, kv_unified: true, slots: 2 });
  });

  it('reads an 8K-token chat prompt while another request runs', async () => {
    const other = stream(srv.port, '/v1/chat/completions', {
      messages: [{ role: 'user', content: 'Count.' }], max_tokens: 20_000, ignore_eos: true, temperature: 0,
    });
    let otherEnded = false;
    void other.end.then(() => { otherEnded = true; });
    await other.pieces(1);
    const agent = await json(srv.port, 'POST', '/v1/chat/completions', {
      messages: [{ role: 'system', content: longText(8200) }, { role: 'user', content: 'Go on.' }], max_tokens: 4, temperature: 0,
    });
    expect(agent.status, JSON.stringify(agent.body).slice(0, 400)).toBe(200);
    expect(agent.body.usage.prompt_tokens).toBeGreaterThan(8000);
    expect(otherEnded).toBe(false);
    other.abort();
  }, 300_000);
});

describe('without --ctx, when the pool fills up', () => {
  let srv: Running;
  beforeAll(async () => {
    srv = await startServer(await ensureTestModel({ ctxTrain: 512 }), { ctx: null, slots: 2 });
  }, 300_000);
  afterAll(async () => { await srv?.close(); });

  it('ends the request admitted last with 503 context_full; the other answers in full', async () => {
    const first = stream(srv.port, '/v1/completions', { prompt: ids(150, 1), max_tokens: 200, ignore_eos: true, temperature: 0 });
    await first.pieces(1);
    const second = await json(srv.port, 'POST', '/v1/completions', { prompt: ids(150, 2), max_tokens: 300, ignore_eos: true, temperature: 0 });
    expect(second.status).toBe(503);
    expect(second.body.error).toMatchObject({ code: 'context_full', type: 'server_error' });
    expect(second.body.error.message).toMatch(/--ctx/);
    const end = await first.end;
    expect(end.how).toBe('done');
    expect(end.events.map((e) => e.choices?.[0]?.finish_reason).filter(Boolean).at(-1)).toBe('length');
  }, 300_000);
});

describe('a prompt longer than a slot\'s context', () => {
  let srv: Running;
  beforeAll(async () => {
    srv = await startServer(await ensureTestModel({}), { ctx: 256, slots: 2 });
  }, 300_000);
  afterAll(async () => { await srv?.close(); });

  it('is a 400 naming the --ctx that would hold it', async () => {
    const r = await json(srv.port, 'POST', '/v1/completions', { prompt: ids(700, 3), max_tokens: 4 });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'context_length_exceeded', param: 'prompt', n_prompt_tokens: 700, n_ctx: 256 });
    expect(r.body.error.message).toBe('prompt is 700 tokens, which does not fit the context of 256 tokens per slot (--ctx); shorten it or start the server with --ctx 1024');
  });
});

describe('--max-output-tokens', () => {
  let srv: Running;
  beforeAll(async () => {
    srv = await startServer(await ensureTestModel({}), { maxOutputTokens: 7 });
  }, 300_000);
  afterAll(async () => { await srv?.close(); });

  const chat = (extra: Record<string, unknown>) => json(srv.port, 'POST', '/v1/chat/completions', {
    messages: [{ role: 'user', content: 'Tell me a long story.' }], ignore_eos: true, temperature: 0, ...extra,
  });

  it('ends an answer that sets no max_tokens at the limit', async () => {
    const r = await chat({});
    expect(r.status).toBe(200);
    expect(r.body.choices[0].finish_reason).toBe('length');
    expect(r.body.usage.completion_tokens).toBe(7);
    const c = await json(srv.port, 'POST', '/v1/completions', { prompt: 'Once upon a time', ignore_eos: true, temperature: 0 });
    expect(c.body.usage.completion_tokens).toBe(7);
  });

  it('lets a request\'s own max_tokens win, below or above it', async () => {
    expect((await chat({ max_tokens: 3 })).body.usage.completion_tokens).toBe(3);
    expect((await chat({ max_tokens: 12 })).body.usage.completion_tokens).toBe(12);
    expect((await chat({ max_completion_tokens: 9 })).body.usage.completion_tokens).toBe(9);
  });
});

describe('a session saved with a context per slot, restored where the slots share one', () => {
  it('brings the conversation back without its KV (into "none"), and the next request reads it afresh', async () => {
    const dirs = tempDir('strata-layout-');
    const model = await ensureTestModel({});
    const question = { role: 'user', content: 'Name a colour.' };
    const perSlot = await startServer(model, { ctx: 1024, slots: 2, sessionsDir: dirs.dir });
    let conversation: Array<{ role: string; content: string }> = [];
    try {
      // A session is saved from the slot that holds its conversation.
      const answer = await json(perSlot.port, 'POST', '/v1/chat/completions', { messages: [question], max_tokens: 4, temperature: 0 });
      conversation = [question, { role: 'assistant', content: answer.body.choices[0].message.content }];
      expect((await json(perSlot.port, 'POST', '/v1/sessions', { name: 'colours', messages: conversation })).status).toBe(201);
    } finally {
      await perSlot.close();
    }
    const shared = await startServer(model, { ctx: null, slots: 2, sessionsDir: dirs.dir });
    try {
      const restored = await json(shared.port, 'POST', '/v1/sessions/colours/restore', {});
      expect(restored.status).toBe(200);
      expect(restored.body).toMatchObject({ name: 'colours', into: 'none', tokens: 0, messages: conversation });
      expect(shared.logs.some((l) => l.includes('session state not loaded'))).toBe(true);
      const next = await json(shared.port, 'POST', '/v1/chat/completions', { messages: [...conversation, { role: 'user', content: 'Another.' }], max_tokens: 2 });
      expect(next.status).toBe(200);
      expect(next.body.usage.prompt_tokens_details.cached_tokens).toBe(0);
    } finally {
      await shared.close();
      dirs.remove();
    }
  });
});
