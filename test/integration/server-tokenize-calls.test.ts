// One engine round trip tokenizes an infill request: its prefix (and the prefix's window),
// suffix, cursor line, repo header and every extra file go in one tokenizeParts call; nothing
// else is tokenized on the engine host's JS thread for it. The same holds for an embedding
// request's text inputs, however many.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../helpers/models.js';
import { json, startServer, type Running } from './server-helpers.js';

let srv: Running;
let embed: Running;
const calls: string[] = [];

/** Records the name of every tokenizer call the server makes to its engine. */
function spyTokenizer(s: Running): void {
  const engine = s.server.engines[0]! as unknown as Record<string, (...a: unknown[]) => unknown>;
  for (const name of ['tokenize', 'tokenizeSegments', 'tokenizeParts', 'detokenize'] as const) {
    const real = engine[name]!.bind(engine);
    engine[name] = (...args: unknown[]) => { calls.push(name); return real(...args); };
  }
}

beforeAll(async () => {
  srv = await startServer(await ensureTestModel({ vocab: 'starcoder' }), { slots: 1, ctx: 2048 });
  spyTokenizer(srv);
  embed = await startServer(await ensureTestModel({ vocab: 'bert-bge', shape: 'embed-bert' }), { slots: 2, ctx: 256, batch: 256 });
  spyTokenizer(embed);
});
afterAll(async () => { await srv?.close(); await embed?.close(); });

describe('infill tokenization', () => {
  it('is one engine call per request, window search included', async () => {
    const lines = Array.from({ length: 400 }, (_, i) => `let value_${i} = compute(${i}, "${'x'.repeat(i % 7)}");`);
    const body = {
      input_prefix: `${lines.join('\n')}\n`, input_suffix: '\n}\n', prompt: 'let next = ',
      input_extra: [{ filename: 'a.js', text: 'export const a = 1;\n' }, { filename: 'b.js', text: 'export const b = 2;\n' }],
      max_tokens: 2, temperature: 0,
    };
    calls.length = 0;
    const r = await json(srv.port, 'POST', '/v1/infill', body);
    expect(r.status).toBe(200);
    expect(r.body.truncated).toBe(true); // the 400-line prefix was windowed
    expect(calls).toEqual(['tokenizeParts']);
  });
});

describe('embedding tokenization', () => {
  it('is one engine call for every text input, in order, with the vocabulary\'s CLS/SEP added', async () => {
    const texts = ['first text to embed', 'a second, different one', 'third'];
    const ids = [101, 2023, 102];
    calls.length = 0;
    const mixed = await json(embed.port, 'POST', '/v1/embeddings', { input: [texts[0], ids, texts[1], texts[2]] });
    expect(mixed.status).toBe(200);
    expect(calls).toEqual(['tokenizeParts']);

    // Each text alone, and its tokens with special tokens added (llama-server's /tokenize shape).
    const single = await Promise.all([texts[0], ids, texts[1], texts[2]].map((input) => json(embed.port, 'POST', '/v1/embeddings', { input })));
    const counts = await Promise.all(texts.map((content) => json(embed.port, 'POST', '/tokenize', { content, add_special: true })));
    const vectors = (mixed.body.data as Array<{ index: number; embedding: number[] }>).map((d) => d.embedding);
    single.forEach((r, i) => {
      expect(r.status).toBe(200);
      const alone = (r.body.data as Array<{ embedding: number[] }>)[0]!.embedding;
      alone.forEach((x, k) => expect(vectors[i]![k]).toBeCloseTo(x, 5));
    });
    const textTokens = counts.map((c) => (c.body.tokens as unknown[]).length);
    expect(textTokens.every((n) => n >= 3)).toBe(true); // CLS + at least one word + SEP
    expect(mixed.body.usage.prompt_tokens).toBe(textTokens[0]! + ids.length + textTokens[1]! + textTokens[2]!);
  });
});
