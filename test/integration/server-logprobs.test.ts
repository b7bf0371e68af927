// Log-probabilities and n choices through the official openai client on the real engine:
// chat logprobs/top_logprobs and completions logprobs N in OpenAI's shapes, streamed and not;
// n > 1 as parallel sequences sharing the prompt, each with its own sampler.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { json, startServer, type Running } from './server-helpers.js';

let srv: Running;

beforeAll(async () => {
  srv = await startServer(await ensureTestModel({}), { ctx: 512, slots: 3 });
});
afterAll(async () => { await srv?.close(); });

const messages = [{ role: 'user' as const, content: 'Count to five.' }];

describe('logprobs', () => {
  it('chat: one entry per token, the greedy token is the most likely, alternatives sorted; streamed the same', async () => {
    const r = await srv.openai.chat.completions.create({ model: 'm', messages, temperature: 0, max_tokens: 8, logprobs: true, top_logprobs: 3 });
    const content = r.choices[0]!.logprobs!.content!;
    expect(content).toHaveLength(r.usage!.completion_tokens);
    expect(content.map((c) => c.token).join('')).toBe(r.choices[0]!.message.content);
    for (const c of content) {
      expect(c.top_logprobs).toHaveLength(3);
      expect(c.logprob).toBeLessThanOrEqual(0);
      expect(c.top_logprobs[0]!.logprob).toBeCloseTo(c.logprob, 5);  // greedy took the most likely
      expect(c.top_logprobs[0]!.token).toBe(c.token);
      for (let i = 1; i < 3; i++) expect(c.top_logprobs[i]!.logprob).toBeLessThanOrEqual(c.top_logprobs[i - 1]!.logprob);
      expect(c.top_logprobs.reduce((s, t) => s + Math.exp(t.logprob), 0)).toBeLessThanOrEqual(1.0001);
      expect(Buffer.from(c.bytes!).toString()).toBe(c.token);
    }
    const s = await srv.openai.chat.completions.create({ model: 'm', messages, temperature: 0, max_tokens: 8, logprobs: true, top_logprobs: 3, stream: true });
    const streamed: typeof content = [];
    for await (const chunk of s) streamed.push(...(chunk.choices[0]?.logprobs?.content ?? []));
    expect(streamed).toEqual(content);
    // Without the flag there are none.
    const plain = await srv.openai.chat.completions.create({ model: 'm', messages, temperature: 0, max_tokens: 4 });
    expect(plain.choices[0]!.logprobs).toBeNull();
  });

  it('completions: logprobs N gives tokens, token_logprobs, top_logprobs and text_offset', async () => {
    const r = await srv.openai.completions.create({ model: 'm', prompt: 'The quick brown', temperature: 0, max_tokens: 6, logprobs: 2 });
    const lp = r.choices[0]!.logprobs!;
    expect(lp.tokens!.join('')).toBe(r.choices[0]!.text);
    expect(lp.token_logprobs).toHaveLength(6);
    expect(lp.top_logprobs!.every((t) => Object.keys(t).length >= 1 && Object.keys(t).length <= 2)).toBe(true);
    let offset = 0;
    lp.tokens!.forEach((t, i) => { expect(lp.text_offset![i]).toBe(offset); offset += t.length; });
    const s = await srv.openai.completions.create({ model: 'm', prompt: 'The quick brown', temperature: 0, max_tokens: 6, logprobs: 2, stream: true });
    const tokens: string[] = [];
    for await (const c of s) tokens.push(...(c.choices[0]?.logprobs?.tokens ?? []));
    expect(tokens).toEqual(lp.tokens);
  });

  it('refuses logprobs out of range and top_logprobs without logprobs, naming the field', async () => {
    const a = await json(srv.port, 'POST', '/v1/chat/completions', { messages, top_logprobs: 2 });
    expect(a.status).toBe(400);
    expect(a.body.error.param).toBe('top_logprobs');
    const b = await json(srv.port, 'POST', '/v1/chat/completions', { messages, logprobs: true, top_logprobs: 21 });
    expect(b.status).toBe(400);
    const c = await json(srv.port, 'POST', '/v1/completions', { prompt: 'x', logprobs: -1 });
    expect(c.status).toBe(400);
    expect(c.body.error.param).toBe('logprobs');
  });
});

describe('n choices', () => {
  it('greedy: every choice is the single answer; the engine reads the prompt once for all of them', async () => {
    const one = await srv.openai.chat.completions.create({ model: 'm', messages, temperature: 0, max_tokens: 10 });
    const fresh = [{ role: 'user' as const, content: 'Count to five, please, slowly and clearly.' }];
    const { data: r, response } = await srv.openai.chat.completions.create({ model: 'm', messages: fresh, temperature: 0, max_tokens: 10, n: 3 }).withResponse();
    const single = await srv.openai.chat.completions.create({ model: 'm', messages: fresh, temperature: 0, max_tokens: 10 });
    expect(r.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    for (const c of r.choices) expect(c.message.content).toBe(single.choices[0]!.message.content);
    expect(r.usage!.completion_tokens).toBe(3 * single.usage!.completion_tokens);
    expect(one.choices[0]!.message.content).not.toBe('');
    // The steps of that request read the uncached part of its prompt once, not three times.
    const trace = (await json(srv.port, 'GET', `/v1/traces/${response.headers.get('x-request-id')}`)).body;
    const read = trace.steps.reduce((n: number, s: { promptTokens: number }) => n + s.promptTokens, 0);
    expect(trace.request.engine.choices).toBe(3);
    expect(read).toBe(r.usage!.prompt_tokens - r.usage!.prompt_tokens_details!.cached_tokens!);
  });

  it('sampling: choices differ, each its own sampler; the same seed gives the same choices; streamed chunks carry the index', async () => {
    const req = { model: 'm', messages, temperature: 1.5, seed: 42, max_tokens: 12, n: 3 };
    const a = await srv.openai.chat.completions.create(req);
    const b = await srv.openai.chat.completions.create(req);
    expect(b.choices.map((c) => c.message.content)).toEqual(a.choices.map((c) => c.message.content));
    expect(new Set(a.choices.map((c) => c.message.content)).size).toBeGreaterThan(1);
    const s = await srv.openai.chat.completions.create({ ...req, stream: true });
    const text = ['', '', ''];
    const finish: Array<string | null> = [null, null, null];
    for await (const chunk of s) {
      for (const c of chunk.choices) {
        text[c.index] += c.delta.content ?? '';
        finish[c.index] = c.finish_reason ?? finish[c.index]!;
      }
    }
    expect(text).toEqual(a.choices.map((c) => c.message.content));
    expect(finish).toEqual(a.choices.map((c) => c.finish_reason));
  });

  it('completions with n and logprobs together; n beyond the slots is a 400 naming n', async () => {
    const r = await srv.openai.completions.create({ model: 'm', prompt: 'Once upon', temperature: 0, max_tokens: 5, n: 2, logprobs: 1 });
    expect(r.choices).toHaveLength(2);
    expect(r.choices[1]!.text).toBe(r.choices[0]!.text);
    expect(r.choices[1]!.logprobs!.token_logprobs).toEqual(r.choices[0]!.logprobs!.token_logprobs);
    const bad = await json(srv.port, 'POST', '/v1/chat/completions', { messages, n: 4 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('n');
    expect(bad.body.error.message).toMatch(/at most 3 choices/);
  });
});
