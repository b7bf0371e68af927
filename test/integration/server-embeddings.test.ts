// /v1/embeddings on real generated embedding models through the official openai client: a BERT
// encoder (mean pooling, and CLS) and a decoder with last-token pooling (Qwen3-Embedding-like).
// Shapes, unit norm, determinism, batch == single, different texts differ, token-id input,
// float and base64, dimensions refused unless it is the model's own, usage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { json, metrics, startServer, type Running } from './server-helpers.js';

const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
const maxDiff = (a: number[], b: number[]) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]!)), 0);
const texts = ['def add(a, b): return a + b', 'The weather in Paris is mild.', 'SELECT * FROM users;', 'hello'];

describe.each([
  { name: 'BERT encoder, mean pooling', vocab: 'bert-bge', shape: 'embed-bert', pooling: undefined, expect: 'mean' },
  { name: 'BERT encoder, CLS pooling', vocab: 'bert-bge', shape: 'embed-bert', pooling: 'cls', expect: 'cls' },
  { name: 'decoder, last-token pooling', vocab: 'qwen2', shape: 'embed-causal', pooling: undefined, expect: 'last' },
] as const)('$name', (m) => {
  let srv: Running;
  beforeAll(async () => {
    const model = await ensureTestModel({ vocab: m.vocab, shape: m.shape, ...(m.pooling ? { pooling: m.pooling } : {}) });
    srv = await startServer(model, { ctx: 256, slots: 4, batch: 256 });
  });
  afterAll(async () => { await srv?.close(); });

  it('one unit vector per input, deterministic, the same alone as in a batch, different for different texts', async () => {
    const info = (await metrics(srv.port)).model;
    expect(info.embedding.pooling).toBe(m.expect);
    const dims = info.embedding.dimensions;
    const { data: batch, response } = await srv.openai.embeddings.create({ model: 'any', input: texts }).withResponse();
    expect(batch.object).toBe('list');
    // The inputs were pooled together (one sequence each), not one step per input. These four are
    // short: an encoder's step under 64 tokens keeps a slot for the padding (engine_embed.cpp), so 3 + 1.
    const trace = (await json(srv.port, 'GET', `/v1/traces/${response.headers.get('x-request-id')}`)).body;
    expect(trace.steps.map((st: { sequences: number }) => st.sequences)).toEqual(m.shape === 'embed-bert' ? [3, 1] : [4]);
    expect(batch.data.map((d) => d.index)).toEqual([0, 1, 2, 3]);
    for (const d of batch.data) {
      expect(d.embedding).toHaveLength(dims);
      expect(norm(d.embedding)).toBeCloseTo(1, 5);
    }
    const again = await srv.openai.embeddings.create({ model: 'any', input: texts });
    expect(again.data.map((d) => d.embedding)).toEqual(batch.data.map((d) => d.embedding));
    for (const [i, t] of texts.entries()) {
      const single = await srv.openai.embeddings.create({ model: 'any', input: t, encoding_format: 'float' });
      expect(maxDiff(single.data[0]!.embedding, batch.data[i]!.embedding)).toBeLessThan(1e-5);
    }
    // Different texts: clearly different vectors (cosine well below 1).
    for (let i = 0; i < texts.length; i++) {
      for (let j = i + 1; j < texts.length; j++) {
        const a = batch.data[i]!.embedding;
        const b = batch.data[j]!.embedding;
        expect(a.reduce((s, x, k) => s + x * b[k]!, 0)).toBeLessThan(0.999);
      }
    }
    expect(batch.usage.prompt_tokens).toBeGreaterThan(texts.length);
    expect(batch.usage.total_tokens).toBe(batch.usage.prompt_tokens);
  });

  it('token ids and base64 give the same vectors as text and floats', async () => {
    const ids = (await json<{ tokens: number[] }>(srv.port, 'POST', '/tokenize', { content: texts[0], add_special: true, parse_special: false })).body.tokens;
    const fromText = (await json(srv.port, 'POST', '/v1/embeddings', { input: texts[0], encoding_format: 'float' })).body;
    const fromIds = (await json(srv.port, 'POST', '/v1/embeddings', { input: ids, encoding_format: 'float' })).body;
    expect(fromIds.data[0].embedding).toEqual(fromText.data[0].embedding);
    expect(fromIds.usage.prompt_tokens).toBe(ids.length);
    const b64 = (await json(srv.port, 'POST', '/v1/embeddings', { input: [ids], encoding_format: 'base64' })).body;
    const buf = Buffer.from(b64.data[0].embedding, 'base64');
    const floats = Array.from({ length: buf.length / 4 }, (_, i) => buf.readFloatLE(i * 4));
    expect(floats).toEqual(fromText.data[0].embedding.map((x: number) => Math.fround(x)));
  });

  it('refuses dimensions it cannot make, empty or oversize inputs and text requests, naming the field', async () => {
    const dims = (await metrics(srv.port)).model.embedding.dimensions;
    const own = await json(srv.port, 'POST', '/v1/embeddings', { input: 'x', dimensions: dims });
    expect(own.status).toBe(200);
    const cases: Array<[unknown, string]> = [
      [{ input: 'x', dimensions: 8 }, 'dimensions'],
      [{ input: ['a', ''] }, 'input[1]'],
      [{ input: [] }, 'input'],
      [{ input: 'word '.repeat(400) }, 'input'],
      [{ input: [[1, 2], [99999999]] }, 'input[1]'],
      [{ input: 'x', encoding_format: 'int8' }, 'encoding_format'],
    ];
    for (const [body, param] of cases) {
      const r = await json(srv.port, 'POST', '/v1/embeddings', body);
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error.param).toBe(param);
    }
    const chat = await json(srv.port, 'POST', '/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).toBe(400);
    expect(chat.body.error.message).toMatch(/embedding model/);
  });
});

describe('a text model', () => {
  it('answers /v1/embeddings with a 400 that says it makes text', async () => {
    const srv = await startServer(await ensureTestModel({}), { ctx: 256 });
    try {
      const r = await json(srv.port, 'POST', '/v1/embeddings', { input: 'hello' });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('model_not_embedding');
    } finally { await srv.close(); }
  });
});
