// The real server with the real engine on a real tiny model, through the `openai` client:
// chat (stream and not), completions, usage and timings, errors as OpenAI errors, tokenize,
// infill (FIM model and a model without FIM), diagnostics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { greedy, json, metrics, raw, startServer, stream, type Running } from './server-helpers.js';

let srv: Running;

beforeAll(async () => {
  srv = await startServer(await ensureTestModel({}), { ctx: 512 });
});
afterAll(async () => { await srv?.close(); });

describe('OpenAI API on a real engine', () => {
  it('answers chat completions, streamed and not, with the same greedy text, usage and timings', async () => {
    const messages = [{ role: 'user' as const, content: 'Name three colours.' }];
    const res = await srv.openai.chat.completions.create({ model: 'any', messages, ...greedy(6) });
    const text = res.choices[0]!.message.content ?? '';
    expect(text.length).toBeGreaterThan(0);
    expect(res.usage!.completion_tokens).toBe(6);
    expect(res.choices[0]!.finish_reason).toBe('length');
    const timings = (res as unknown as { timings: Record<string, number | null> }).timings;
    expect(timings.predicted_n).toBe(6);
    expect(timings.prompt_ms).toBeGreaterThan(0);

    const s = await srv.openai.chat.completions.create({ model: 'any', messages, ...greedy(6), stream: true, stream_options: { include_usage: true } });
    let streamed = '';
    let first = true;
    let finish: string | null = null;
    let usage: { prompt_tokens: number; prompt_tokens_details?: { cached_tokens?: number } } | null = null;
    for await (const c of s) {
      if (first) { expect(c.choices[0]!.delta.role).toBe('assistant'); first = false; }
      streamed += c.choices[0]?.delta.content ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
      if (c.usage) usage = c.usage;
    }
    expect(streamed).toBe(text);
    expect(finish).toBe('length');
    expect(usage!.prompt_tokens).toBe(res.usage!.prompt_tokens);
    expect(usage!.prompt_tokens_details!.cached_tokens).toBeGreaterThanOrEqual(0);
  });

  it('renders tools with the model template; text that is not a tool call comes back as content', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
    const res = await srv.openai.chat.completions.create({ model: 'any', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools, ...greedy(5) });
    const plain = await srv.openai.chat.completions.create({ model: 'any', messages: [{ role: 'user', content: 'Weather in Paris?' }], ...greedy(5) });
    // The tool list is part of the prompt.
    expect(res.usage!.prompt_tokens).toBeGreaterThan(plain.usage!.prompt_tokens + 10);
    expect(res.choices[0]!.finish_reason).toBe('length');
    expect(res.choices[0]!.message.content!.length).toBeGreaterThan(0);
  });

  it('answers completions and refuses n beyond the slots, bad bodies and oversize prompts with 4xx naming the field', async () => {
    const res = await srv.openai.completions.create({ model: 'any', prompt: 'The quick brown fox', ...greedy(4) });
    expect(res.choices[0]!.text.length).toBeGreaterThan(0);
    expect(res.usage!.completion_tokens).toBe(4);
    await expect(srv.openai.chat.completions.create({ model: 'any', messages: [{ role: 'user', content: 'x' }], n: 3 }))
      .rejects.toMatchObject({ status: 400 });
    const bad = await raw(srv.port, 'POST', '/v1/chat/completions', '{"messages": 5}');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error.param).toBe('messages');
    const long = await json(srv.port, 'POST', '/v1/completions', { prompt: 'word '.repeat(2000) });
    expect(long.status).toBe(400);
    expect(long.body.error.code).toBe('context_length_exceeded');
    expect(long.body.error.message).toMatch(/context of 512 tokens/);
    const m = await metrics(srv.port);
    expect(m.live).toMatchObject({ queued: 0, admitting: 0, running: 0, finishing: 0 });
  });

  it('tokenizes and detokenizes round trip', async () => {
    const t = await json<{ tokens: number[] }>(srv.port, 'POST', '/v1/tokenize', { content: 'hello world' });
    expect(t.body.tokens.length).toBeGreaterThan(0);
    const d = await json<{ content: string }>(srv.port, 'POST', '/v1/detokenize', { tokens: t.body.tokens });
    expect(d.body.content).toBe('hello world');
    const p = await json<{ tokens: Array<{ id: number; piece: string }> }>(srv.port, 'POST', '/v1/tokenize', { content: 'hello world', with_pieces: true });
    expect(p.body.tokens.map((x) => x.piece).join('')).toBe('hello world');
    // Special tokens keep their text (chat templates need bos/eos text).
    const sp = await json<{ tokens: number[] }>(srv.port, 'POST', '/v1/tokenize', { content: '<|im_end|>' });
    expect(sp.body.tokens).toHaveLength(1);
    const spText = await json<{ content: string }>(srv.port, 'POST', '/v1/detokenize', { tokens: sp.body.tokens });
    expect(spText.body.content).toBe('<|im_end|>');
  });

  it('refuses infill on a model without FIM tokens', async () => {
    const r = await json(srv.port, 'POST', '/v1/infill', { input_prefix: 'def f(', input_suffix: ')\n' });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('fim_not_supported');
  });

  it('lists models and devices, and keeps traces of ended requests', async () => {
    const models = await srv.openai.models.list();
    expect(models.data).toHaveLength(1);
    const devices = await json(srv.port, 'GET', '/v1/devices');
    expect(devices.body.data[0].replica).toBe(0);
    expect(devices.body.data[0].devices.length).toBeGreaterThan(0);
    const run = stream(srv.port, '/v1/completions', { prompt: 'Once upon a time', ...greedy(3) });
    const id = await run.id;
    expect((await run.end).how).toBe('done');
    const list = await json(srv.port, 'GET', '/v1/traces');
    expect(list.body.requests.some((r: { id: number }) => r.id === id)).toBe(true);
    const one = await json(srv.port, 'GET', `/v1/traces/cmpl-${id}`);
    expect(one.body.request).toMatchObject({ id, finish: 'length', generated: 3 });
    expect(one.body.request.marks.first_token).not.toBeNull();
    expect((await json(srv.port, 'GET', '/v1/traces/999999')).status).toBe(404);
    const prom = await raw(srv.port, 'GET', '/metrics/prometheus');
    expect(prom.body).toMatch(/^llamacpp:tokens_predicted_total \d+$/m);
  });
});

describe('infill on a FIM model', () => {
  let fim: Running;
  beforeAll(async () => { fim = await startServer(await ensureTestModel({ vocab: 'starcoder' }), { ctx: 512 }); });
  afterAll(async () => { await fim?.close(); });

  it('completes between prefix and suffix, greedy and repeatable', async () => {
    const body = { input_prefix: 'def add(a, b):\n    ', input_suffix: '\n\nprint(add(1, 2))\n', input_extra: [{ filename: 'util.py', text: 'X = 1\n' }], ...greedy(5) };
    const a = await json(fim.port, 'POST', '/v1/infill', body);
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(a.body.tokens_evaluated).toBeGreaterThan(5);
    expect(['eos', 'limit', 'suffix']).toContain(a.body.stop_type);
    const b = await json(fim.port, 'POST', '/v1/infill', body);
    expect(b.status, JSON.stringify(b.body)).toBe(200);
    expect(b.body.content).toBe(a.body.content);
    expect(b.body.choices[0].text).toBe(a.body.content);
  });

  it('reuses a long prefix across keystrokes (the window starts at a stable line)', async () => {
    // batch 64 (server-helpers): the prefix gets 48 tokens; the file's prefix is far longer.
    const prefix = Array.from({ length: 60 }, (_, i) => `    total_${i} = compute(value_${i}, ${i})`).join('\n');
    const ask = (typed: string) => json(fim.port, 'POST', '/v1/infill', { input_prefix: `${prefix}\n    res${typed}`, input_suffix: '\n    return total\n', ...greedy(2) });
    const a = await ask('');
    const b = await ask('ult');
    const c = await ask('ult = ');
    for (const r of [a, b, c]) expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(a.body.truncated).toBe(true);
    // The keystrokes read again only what follows the window's stable part: the cursor line and the suffix.
    expect(b.body.tokens_cached).toBeGreaterThan(30);
    expect(c.body.tokens_cached).toBeGreaterThan(30);
    expect(b.body.tokens_evaluated - b.body.tokens_cached).toBeLessThan(30);
  });
});
